/// An 8-bit RGB raster image, the demo's common currency between decoders, PDF writers and the thumbnail.
struct Image: Equatable, Sendable {
    let width: Int
    let height: Int
    /// Row-major RGB triples, `width * height * 3` bytes.
    let pixels: [UInt8]

    init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0 && pixels.count == width * height * 3, "malformed image")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The colour at a pixel.
    func pixel(x: Int, y: Int) -> RGB {
        let index = (y * width + x) * 3
        return RGB(pixels[index], pixels[index + 1], pixels[index + 2])
    }

    /// Scales the image down to fit in a `maxSide` square, keeping its aspect ratio.
    ///
    /// Each destination pixel is the average of the source pixels it covers. An image that already fits is returned
    /// unchanged.
    func scaledToFit(_ maxSide: Int) -> Image {
        let scale = Double(maxSide) / Double(max(width, height))
        guard scale < 1 else { return self }
        let newWidth = max(1, Int((Double(width) * scale).rounded()))
        let newHeight = max(1, Int((Double(height) * scale).rounded()))
        var result = [UInt8](repeating: 0, count: newWidth * newHeight * 3)
        for y in 0..<newHeight {
            let y0 = y * height / newHeight
            let y1 = max(y0 + 1, (y + 1) * height / newHeight)
            for x in 0..<newWidth {
                let x0 = x * width / newWidth
                let x1 = max(x0 + 1, (x + 1) * width / newWidth)
                var sums = (0, 0, 0)
                for sy in y0..<y1 {
                    for sx in x0..<x1 {
                        let colour = pixel(x: sx, y: sy)
                        sums.0 += Int(colour.red)
                        sums.1 += Int(colour.green)
                        sums.2 += Int(colour.blue)
                    }
                }
                let count = (y1 - y0) * (x1 - x0)
                let index = (y * newWidth + x) * 3
                result[index] = UInt8(sums.0 / count)
                result[index + 1] = UInt8(sums.1 / count)
                result[index + 2] = UInt8(sums.2 / count)
            }
        }
        return Image(width: newWidth, height: newHeight, pixels: result)
    }
}

/// One RGB colour.
struct RGB: Equatable, Sendable, CustomStringConvertible {
    let red: UInt8
    let green: UInt8
    let blue: UInt8

    init(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    var description: String { "rgb(\(red), \(green), \(blue))" }
}

extension Image {
    /// Decodes PNG (8-bit, not interlaced) or binary PPM data.
    ///
    /// - Throws: `DemoError.notAnImage` when the data is neither, or uses a variant the demo does not decode.
    init(decoding data: [UInt8], source: String) throws {
        if data.starts(with: PNG.signature) {
            self = try PNG.decode(data, source: source)
        } else if data.starts(with: Array("P6".utf8)) {
            self = try PPM.decode(data, source: source)
        } else {
            throw DemoError.notAnImage(source, reason: "expected PNG or binary PPM data")
        }
    }
}

/// Binary PPM (P6), the simplest raster format, accepted as input.
enum PPM {
    static func decode(_ data: [UInt8], source: String) throws -> Image {
        var fields: [Int] = []
        var index = 2
        while fields.count < 3 {
            while index < data.count, data[index] == UInt8(ascii: "#") || isSpace(data[index]) {
                if data[index] == UInt8(ascii: "#") {
                    while index < data.count, data[index] != UInt8(ascii: "\n") { index += 1 }
                } else {
                    index += 1
                }
            }
            var value = 0
            var digits = 0
            while index < data.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(data[index]), digits < 6 {
                value = value * 10 + Int(data[index] - UInt8(ascii: "0"))
                index += 1
                digits += 1
            }
            guard digits > 0 else { throw DemoError.notAnImage(source, reason: "malformed PPM header") }
            fields.append(value)
        }
        let (width, height, maxValue) = (fields[0], fields[1], fields[2])
        guard width > 0, height > 0, maxValue == 255, index < data.count, isSpace(data[index]) else {
            throw DemoError.notAnImage(source, reason: "unsupported PPM header")
        }
        let start = index + 1
        guard data.count - start >= width * height * 3 else {
            throw DemoError.notAnImage(source, reason: "PPM data is truncated")
        }
        return Image(width: width, height: height, pixels: Array(data[start..<start + width * height * 3]))
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
