import Foundation
import Testing

@testable import InjectedDemo

/// The demo's PNG encoder and decoder agree with an independent implementation, Python's zlib.
@Suite("PNG", .enabled(if: Tool.python != nil, "python3 is not installed here"), .temporaryDirectories)
struct PNGTests {
    @Test("the thumbnail PNG decodes independently to the first image, scaled")
    func thumbnailDecodesIndependently() throws {
        let pdf = ModernPDFService().mergeToPDF(images: [SampleImages.quadrants, SampleImages.sunrise])
        let thumbnail = try #require(ModernPDFService().thumbnail(from: pdf))
        let file = try temporaryDirectory().appendingPathComponent("thumbnail.png")
        try Data(PNG.encode(thumbnail)).write(to: file)

        let result = try run(Tool.python!, [pngTool, "decode", file.path])
        #expect(result.status == 0, "\(result.output)")
        let decoded = try decodedByPython(result.output).image
        #expect((decoded.width, decoded.height) == (160, 120))
        // The quadrants are flat, so every pixel of each scaled quadrant keeps its colour exactly.
        #expect(decoded.pixel(x: 40, y: 30) == RGB(220, 40, 40))
        #expect(decoded.pixel(x: 120, y: 30) == RGB(40, 180, 60))
        #expect(decoded.pixel(x: 40, y: 90) == RGB(40, 70, 220))
        #expect(decoded.pixel(x: 120, y: 90) == RGB(250, 250, 250))
        #expect(decoded == SampleImages.quadrants.scaledToFit(160))
    }

    @Test("a PNG made by Python, with every row filter and dynamic Huffman blocks, decodes exactly")
    func decodesForeignPNG() throws {
        let file = try temporaryDirectory().appendingPathComponent("gradient.png")
        let result = try run(Tool.python!, [pngTool, "encode", file.path, "97", "61"])
        #expect(result.status == 0, "\(result.output)")
        let expected = try decodedByPython(result.output).image
        let decoded = try Image(decoding: Array(try Data(contentsOf: file)), source: file.path)
        #expect(decoded == expected)
    }

    @Test("encoding then decoding gives back every sample image")
    func roundTrip() throws {
        for image in [SampleImages.quadrants, SampleImages.sunrise, SampleImages.checkerboard] {
            #expect(try Image(decoding: PNG.encode(image), source: "sample") == image)
        }
    }
}
