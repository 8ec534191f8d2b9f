/// A PNG encoder (8-bit RGB) and a decoder for 8-bit, non-interlaced PNGs, in plain Swift.
enum PNG {
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    // MARK: Encoding

    /// Encodes an image as an 8-bit RGB PNG, its rows compressed with ``Deflate``.
    static func encode(_ image: Image) -> [UInt8] {
        var raw: [UInt8] = []
        raw.reserveCapacity((image.width * 3 + 1) * image.height)
        for row in 0..<image.height {
            raw.append(0)  // filter type: none
            raw += image.pixels[(row * image.width * 3)..<((row + 1) * image.width * 3)]
        }
        var header: [UInt8] = []
        header += Deflate.bigEndian(UInt32(image.width))
        header += Deflate.bigEndian(UInt32(image.height))
        header += [8, 2, 0, 0, 0]  // bit depth 8, colour type RGB, deflate, adaptive filtering, no interlace
        var png = signature
        png += chunk("IHDR", header)
        png += chunk("IDAT", Deflate.zlib(raw))
        png += chunk("IEND", [])
        return png
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return Deflate.bigEndian(UInt32(data.count)) + typeBytes + data
            + Deflate.bigEndian(CRC32.checksum(typeBytes + data))
    }

    // MARK: Decoding

    static func decode(_ data: [UInt8], source: String) throws -> Image {
        func fail(_ reason: String) -> DemoError { .notAnImage(source, reason: reason) }
        var offset = signature.count
        var header: [UInt8] = []
        var palette: [UInt8] = []
        var compressed: [UInt8] = []
        while offset + 8 <= data.count {
            let length = Int(readUInt32(data, offset))
            let type = String(decoding: data[offset + 4..<offset + 8], as: UTF8.self)
            guard length >= 0, offset + 12 + length <= data.count else { throw fail("truncated PNG chunk") }
            let body = Array(data[offset + 8..<offset + 8 + length])
            switch type {
            case "IHDR": header = body
            case "PLTE": palette = body
            case "IDAT": compressed += body
            default: break
            }
            offset += 12 + length
            if type == "IEND" { break }
        }
        guard header.count == 13 else { throw fail("PNG has no IHDR chunk") }
        let width = Int(readUInt32(header, 0))
        let height = Int(readUInt32(header, 4))
        let (bitDepth, colourType, interlace) = (header[8], header[9], header[12])
        guard width > 0, height > 0, width <= 1 << 14, height <= 1 << 14 else { throw fail("unsupported PNG size") }
        guard bitDepth == 8 else { throw fail("only 8-bit PNGs are supported") }
        guard interlace == 0 else { throw fail("interlaced PNGs are not supported") }
        let channels: Int
        switch colourType {
        case 0: channels = 1
        case 2: channels = 3
        case 3: channels = 1
        case 4: channels = 2
        case 6: channels = 4
        default: throw fail("unknown PNG colour type \(colourType)")
        }
        guard compressed.count > 2 else { throw fail("PNG has no image data") }
        let raw: [UInt8]
        do {
            raw = try Inflate.decompress(Array(compressed.dropFirst(2)))
        } catch {
            throw fail("corrupt PNG image data")
        }
        let stride = width * channels
        guard raw.count >= (stride + 1) * height else { throw fail("PNG image data is truncated") }
        let samples = try unfilter(raw, stride: stride, bytesPerPixel: channels, height: height, fail: fail)
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for index in 0..<(width * height) {
            let sample = index * channels
            let rgb: (UInt8, UInt8, UInt8)
            switch colourType {
            case 0, 4: rgb = (samples[sample], samples[sample], samples[sample])
            case 3:
                let entry = Int(samples[sample]) * 3
                guard entry + 2 < palette.count else { throw fail("PNG palette index out of range") }
                rgb = (palette[entry], palette[entry + 1], palette[entry + 2])
            default: rgb = (samples[sample], samples[sample + 1], samples[sample + 2])
            }
            pixels[index * 3] = rgb.0
            pixels[index * 3 + 1] = rgb.1
            pixels[index * 3 + 2] = rgb.2
        }
        return Image(width: width, height: height, pixels: pixels)
    }

    private static func unfilter(
        _ raw: [UInt8],
        stride: Int,
        bytesPerPixel: Int,
        height: Int,
        fail: (String) -> DemoError
    ) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: stride * height)
        for row in 0..<height {
            let filter = raw[row * (stride + 1)]
            let input = row * (stride + 1) + 1
            let base = row * stride
            for column in 0..<stride {
                let left = column >= bytesPerPixel ? Int(out[base + column - bytesPerPixel]) : 0
                let up = row > 0 ? Int(out[base - stride + column]) : 0
                let upLeft = row > 0 && column >= bytesPerPixel ? Int(out[base - stride + column - bytesPerPixel]) : 0
                let predictor: Int
                switch filter {
                case 0: predictor = 0
                case 1: predictor = left
                case 2: predictor = up
                case 3: predictor = (left + up) / 2
                case 4:
                    let estimate = left + up - upLeft
                    let (toLeft, toUp, toUpLeft) = (abs(estimate - left), abs(estimate - up), abs(estimate - upLeft))
                    predictor = toLeft <= toUp && toLeft <= toUpLeft ? left : (toUp <= toUpLeft ? up : upLeft)
                default: throw fail("unknown PNG filter \(filter)")
                }
                out[base + column] = UInt8((Int(raw[input + column]) + predictor) & 0xFF)
            }
        }
        return out
    }

    private static func readUInt32(_ data: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(data[offset]) << 24 | UInt32(data[offset + 1]) << 16 | UInt32(data[offset + 2]) << 8
            | UInt32(data[offset + 3])
    }
}

/// CRC-32 as PNG uses it.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { value in
        var crc = UInt32(value)
        for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    static func checksum(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}

/// A raw-deflate decoder (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks.
enum Inflate {
    struct CorruptData: Error {}

    private struct Bits {
        let data: [UInt8]
        var position = 0  // in bits

        mutating func read(_ count: Int) throws -> Int {
            var value = 0
            for shift in 0..<count {
                let byte = position >> 3
                guard byte < data.count else { throw CorruptData() }
                value |= Int((data[byte] >> UInt8(position & 7)) & 1) << shift
                position += 1
            }
            return value
        }

        mutating func alignToByte() {
            position = (position + 7) & ~7
        }
    }

    /// A canonical Huffman code, decoded one bit at a time.
    private struct Huffman {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<16 { offsets[length] = offsets[length - 1] + counts[length - 1] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }

        func decode(_ bits: inout Bits) throws -> Int {
            var code = 0
            var first = 0
            var index = 0
            for length in 1..<16 {
                code |= try bits.read(1)
                let count = counts[length]
                if code - count < first { return symbols[index + (code - first)] }
                index += count
                first = (first + count) << 1
                code <<= 1
            }
            throw CorruptData()
        }
    }

    static func decompress(_ data: [UInt8]) throws -> [UInt8] {
        var bits = Bits(data: data)
        var out: [UInt8] = []
        var isFinal = false
        while !isFinal {
            isFinal = try bits.read(1) == 1
            switch try bits.read(2) {
            case 0:
                bits.alignToByte()
                let start = bits.position >> 3
                guard start + 4 <= data.count else { throw CorruptData() }
                let length = Int(data[start]) | Int(data[start + 1]) << 8
                guard start + 4 + length <= data.count else { throw CorruptData() }
                out += data[(start + 4)..<(start + 4 + length)]
                bits.position = (start + 4 + length) * 8
            case 1:
                let literals = Huffman(
                    lengths: Array(repeating: 8, count: 144) + Array(repeating: 9, count: 112)
                        + Array(repeating: 7, count: 24) + Array(repeating: 8, count: 8)
                )
                let distances = Huffman(lengths: Array(repeating: 5, count: 30))
                try inflateBlock(&bits, &out, literals, distances)
            case 2:
                let (literals, distances) = try readDynamicCodes(&bits)
                try inflateBlock(&bits, &out, literals, distances)
            default:
                throw CorruptData()
            }
        }
        return out
    }

    private static func readDynamicCodes(_ bits: inout Bits) throws -> (Huffman, Huffman) {
        let literalCount = try bits.read(5) + 257
        let distanceCount = try bits.read(5) + 1
        let codeLengthCount = try bits.read(4) + 4
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeLengthCount { codeLengths[order[index]] = try bits.read(3) }
        let codeLengthCode = Huffman(lengths: codeLengths)
        var lengths: [Int] = []
        while lengths.count < literalCount + distanceCount {
            let symbol = try codeLengthCode.decode(&bits)
            switch symbol {
            case 0..<16: lengths.append(symbol)
            case 16:
                guard let previous = lengths.last else { throw CorruptData() }
                lengths += Array(repeating: previous, count: try bits.read(2) + 3)
            case 17: lengths += Array(repeating: 0, count: try bits.read(3) + 3)
            default: lengths += Array(repeating: 0, count: try bits.read(7) + 11)
            }
        }
        guard lengths.count == literalCount + distanceCount else { throw CorruptData() }
        return (Huffman(lengths: Array(lengths[0..<literalCount])), Huffman(lengths: Array(lengths[literalCount...])))
    }

    private static func inflateBlock(
        _ bits: inout Bits,
        _ out: inout [UInt8],
        _ literals: Huffman,
        _ distances: Huffman
    ) throws {
        while true {
            let symbol = try literals.decode(&bits)
            if symbol < 256 {
                out.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let index = symbol - 257
                guard index < DeflateTables.lengthBase.count else { throw CorruptData() }
                let length = DeflateTables.lengthBase[index] + (try bits.read(DeflateTables.lengthExtra[index]))
                let distanceSymbol = try distances.decode(&bits)
                guard distanceSymbol < DeflateTables.distanceBase.count else { throw CorruptData() }
                let distance =
                    DeflateTables.distanceBase[distanceSymbol]
                    + (try bits.read(DeflateTables.distanceExtra[distanceSymbol]))
                guard distance <= out.count else { throw CorruptData() }
                for _ in 0..<length { out.append(out[out.count - distance]) }
            }
        }
    }
}
