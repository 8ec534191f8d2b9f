import Foundation
import Injected
import InjectedTesting
import Testing

@testable import InjectedDemo

/// Both PDF services write valid PDFs with one page per image, and read back their first page.
@Suite("PDF services", .injectedValues, .temporaryDirectories)
struct PDFServiceTests {
    static let services: [any PDFService] = [LegacyPDFService(), ModernPDFService()]
    static let images = [SampleImages.quadrants, SampleImages.sunrise, SampleImages.checkerboard]

    @Test(
        "qpdf --check accepts the PDF and counts one page per image",
        .enabled(if: Tool.qpdf != nil, "qpdf is not installed here; .ci/run installs it"),
        arguments: services.map(\.name)
    )
    func qpdfAccepts(serviceName: String) throws {
        let service = try #require(Self.services.first { $0.name == serviceName })
        let directory = try temporaryDirectory()
        let file = directory.appendingPathComponent("merged.pdf")
        try service.mergeToPDF(images: Self.images).write(to: file)
        let check = try run(Tool.qpdf!, ["--check", file.path])
        #expect(check.status == 0, "qpdf --check: \(check.output)")
        #expect(check.output.contains("No syntax or stream encoding errors found"))
        let pages = try run(Tool.qpdf!, ["--show-npages", file.path])
        #expect(pages.output.trimmingCharacters(in: .whitespacesAndNewlines) == "3")
    }

    @Test("the modern service writes a smaller file than the legacy one")
    func modernIsSmaller() {
        let legacy = LegacyPDFService().mergeToPDF(images: Self.images).count
        let modern = ModernPDFService().mergeToPDF(images: Self.images).count
        #expect(modern * 10 < legacy, "modern \(modern) bytes, legacy \(legacy) bytes")
    }

    @Test("each service's thumbnail is its PDF's first page, scaled to fit 160 points", arguments: services.map(\.name))
    func thumbnailIsFirstPage(serviceName: String) throws {
        let service = try #require(Self.services.first { $0.name == serviceName })
        let pdf = service.mergeToPDF(images: [SampleImages.sunrise, SampleImages.quadrants])
        let thumbnail = try #require(service.thumbnail(from: pdf))
        #expect(thumbnail == SampleImages.sunrise.scaledToFit(160))
        #expect((thumbnail.width, thumbnail.height) == (160, 120))
    }

    @Test("a thumbnail of bytes that are not a PDF is nil")
    func thumbnailOfGarbage() {
        #expect(ModernPDFService().thumbnail(from: Data("not a pdf".utf8)) == nil)
        #expect(ModernPDFService().thumbnail(from: Data("%PDF-1.4\ntrailer\n<< >>".utf8)) == nil)
    }
}
