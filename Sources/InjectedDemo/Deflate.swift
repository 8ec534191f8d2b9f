/// A raw-deflate compressor (RFC 1951) with LZ77 matching and the fixed Huffman codes, and its zlib wrapper.
///
/// Fixed codes keep it short; LZ77 alone already shrinks flat or repeating pixels, which interleaved RGB run-length
/// coding cannot.
enum Deflate {
    /// `data` as a zlib stream: header, raw deflate, Adler-32.
    static func zlib(_ data: [UInt8]) -> [UInt8] {
        [0x78, 0x01] + compress(data) + bigEndian(adler32(data))
    }

    static func compress(_ data: [UInt8]) -> [UInt8] {
        var writer = BitWriter()
        writer.write(1, count: 1)  // final block
        writer.write(1, count: 2)  // fixed Huffman codes
        var head = [Int](repeating: -1, count: 1 << 15)
        var previous = [Int](repeating: -1, count: data.count)
        func insert(_ position: Int) {
            guard position + 2 < data.count else { return }
            let hash = (Int(data[position]) << 10 ^ Int(data[position + 1]) << 5 ^ Int(data[position + 2])) & 0x7FFF
            previous[position] = head[hash]
            head[hash] = position
        }
        var position = 0
        while position < data.count {
            var bestLength = 0
            var bestDistance = 0
            if position + 2 < data.count {
                let hash = (Int(data[position]) << 10 ^ Int(data[position + 1]) << 5 ^ Int(data[position + 2])) & 0x7FFF
                var candidate = head[hash]
                var steps = 0
                while candidate >= 0, position - candidate <= 32_768, steps < 32 {
                    var length = 0
                    while length < 258, position + length < data.count,
                        data[candidate + length] == data[position + length]
                    {
                        length += 1
                    }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = position - candidate
                        if length == 258 { break }
                    }
                    candidate = previous[candidate]
                    steps += 1
                }
            }
            if bestLength >= 3 {
                let lengthIndex = DeflateTables.lengthBase.lastIndex { $0 <= bestLength }!
                writer.writeFixedCode(257 + lengthIndex)
                writer.write(
                    bestLength - DeflateTables.lengthBase[lengthIndex],
                    count: DeflateTables.lengthExtra[lengthIndex]
                )
                let distanceIndex = DeflateTables.distanceBase.lastIndex { $0 <= bestDistance }!
                writer.writeReversed(distanceIndex, count: 5)
                writer.write(
                    bestDistance - DeflateTables.distanceBase[distanceIndex],
                    count: DeflateTables.distanceExtra[distanceIndex]
                )
                for offset in 0..<bestLength { insert(position + offset) }
                position += bestLength
            } else {
                writer.writeFixedCode(Int(data[position]))
                insert(position)
                position += 1
            }
        }
        writer.writeFixedCode(256)
        return writer.finished
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return b << 16 | a
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    /// Packs bits least significant first, as deflate requires.
    private struct BitWriter {
        private(set) var bytes: [UInt8] = []
        private var buffer = 0
        private var filled = 0

        mutating func write(_ value: Int, count: Int) {
            for bit in 0..<count {
                buffer |= ((value >> bit) & 1) << filled
                filled += 1
                if filled == 8 { flush() }
            }
        }

        /// Writes a Huffman code, whose bits deflate stores most significant first.
        mutating func writeReversed(_ code: Int, count: Int) {
            for bit in (0..<count).reversed() { write((code >> bit) & 1, count: 1) }
        }

        /// Writes a literal/length symbol with the fixed Huffman code.
        mutating func writeFixedCode(_ symbol: Int) {
            switch symbol {
            case 0...143: writeReversed(0x30 + symbol, count: 8)
            case 144...255: writeReversed(0x190 + symbol - 144, count: 9)
            case 256...279: writeReversed(symbol - 256, count: 7)
            default: writeReversed(0xC0 + symbol - 280, count: 8)
            }
        }

        var finished: [UInt8] {
            mutating get {
                if filled > 0 { flush() }
                return bytes
            }
        }

        private mutating func flush() {
            bytes.append(UInt8(buffer & 0xFF))
            buffer = 0
            filled = 0
        }
    }
}

/// The length and distance tables deflate's encoder and decoder share.
enum DeflateTables {
    static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
}
