import Foundation

/// Writes a PDF with one page per image, every page as wide as the widest image.
///
/// Both PDF services share this writer; they differ only in how they encode the image data.
struct PDFWriter {
    /// How an image's RGB bytes are stored in the file.
    enum Encoding {
        /// The raw bytes, uncompressed.
        case raw
        /// The PDF standard's FlateDecode filter: zlib-compressed.
        case flate
    }

    let encoding: Encoding

    func write(_ images: [Image]) -> Data {
        precondition(!images.isEmpty, "a PDF needs at least one page")
        let pageWidth = images.map(\.width).max() ?? 1
        var objects: [[UInt8]] = []
        // Object numbers: 1 catalog, 2 page tree, then per image: page, content stream, image.
        let pageNumbers = images.indices.map { 3 + $0 * 3 }
        objects.append(Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        let kids = pageNumbers.map { "\($0) 0 R" }.joined(separator: " ")
        objects.append(Array("<< /Type /Pages /Kids [\(kids)] /Count \(images.count) >>".utf8))
        for (image, pageNumber) in zip(images, pageNumbers) {
            let scale = Double(pageWidth) / Double(image.width)
            let pageHeight = Double(image.height) * scale
            let size = "\(pageWidth) \(format(pageHeight))"
            objects.append(
                Array(
                    """
                    << /Type /Page /Parent 2 0 R /MediaBox [0 0 \(size)] \
                    /Resources << /XObject << /Im0 \(pageNumber + 2) 0 R >> >> /Contents \(pageNumber + 1) 0 R >>
                    """.utf8
                )
            )
            objects.append(stream(Array("q \(pageWidth) 0 0 \(format(pageHeight)) 0 0 cm /Im0 Do Q".utf8), [:]))
            var imageDictionary = [
                "Type": "/XObject", "Subtype": "/Image", "Width": "\(image.width)", "Height": "\(image.height)",
                "ColorSpace": "/DeviceRGB", "BitsPerComponent": "8",
            ]
            let data: [UInt8]
            switch encoding {
            case .raw:
                data = image.pixels
            case .flate:
                data = Deflate.zlib(image.pixels)
                imageDictionary["Filter"] = "/FlateDecode"
            }
            objects.append(stream(data, imageDictionary))
        }
        return serialize(objects)
    }

    private func stream(_ data: [UInt8], _ dictionary: [String: String]) -> [UInt8] {
        var entries = dictionary
        entries["Length"] = "\(data.count)"
        let body = entries.keys.sorted().map { "/\($0) \(entries[$0]!)" }.joined(separator: " ")
        return Array("<< \(body) >>\nstream\n".utf8) + data + Array("\nendstream".utf8)
    }

    private func serialize(_ objects: [[UInt8]]) -> Data {
        var file = Array("%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(file.count)
            file += Array("\(index + 1) 0 obj\n".utf8) + object + Array("\nendobj\n".utf8)
        }
        let xref = file.count
        var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            table += String(repeating: "0", count: 10 - String(offset).count) + "\(offset) 00000 n \n"
        }
        table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return Data(file + Array(table.utf8))
    }

    private func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.2f", value)
    }
}

/// Reads enough of a PDF to find the first page's image: the trailer, the catalog, the page tree and one image
/// XObject, raw or FlateDecode-encoded, in DeviceRGB or DeviceGray.
struct PDFReader {
    struct Malformed: Error, CustomStringConvertible {
        let reason: String
        var description: String { "malformed PDF: \(reason)" }
    }

    indirect enum Object {
        case number(Double)
        case name(String)
        case reference(Int)
        case array([Object])
        case dictionary([String: Object])
        case other
    }

    private let bytes: [UInt8]

    init(_ data: Data) {
        bytes = Array(data)
    }

    /// The image drawn on the first page.
    func firstPageImage() throws -> Image {
        guard bytes.starts(with: Array("%PDF-".utf8)) else { throw Malformed(reason: "no %PDF header") }
        guard let trailerStart = lastRange(of: "trailer") else { throw Malformed(reason: "no trailer") }
        var trailerParser = Parser(bytes: bytes, position: trailerStart + "trailer".utf8.count)
        guard case .dictionary(let trailer) = try trailerParser.parse(),
            case .reference(let root)? = trailer["Root"],
            case .dictionary(let catalog) = try object(root).value,
            case .reference(let pagesNumber)? = catalog["Pages"]
        else { throw Malformed(reason: "no catalog") }
        let page = try firstPage(in: pagesNumber, depth: 0)
        guard case .dictionary(let resources)? = try resolve(page["Resources"]),
            case .dictionary(let xObjects)? = try resolve(resources["XObject"]),
            let firstImage = xObjects.keys.sorted().first,
            case .reference(let imageNumber)? = xObjects[firstImage]
        else { throw Malformed(reason: "the first page draws no image") }
        return try image(imageNumber)
    }

    private func firstPage(in number: Int, depth: Int) throws -> [String: Object] {
        guard depth < 32 else { throw Malformed(reason: "page tree too deep") }
        guard case .dictionary(let node) = try object(number).value else { throw Malformed(reason: "bad page") }
        if case .name("Page")? = node["Type"] { return node }
        guard case .array(let kids)? = node["Kids"], case .reference(let first)? = kids.first else {
            throw Malformed(reason: "empty page tree")
        }
        return try firstPage(in: first, depth: depth + 1)
    }

    private func image(_ number: Int) throws -> Image {
        let (object, streamStart) = try object(number)
        guard case .dictionary(let dictionary) = object, let start = streamStart,
            case .number(let widthValue)? = dictionary["Width"], case .number(let heightValue)? = dictionary["Height"],
            case .number(let length)? = try resolve(dictionary["Length"])
        else { throw Malformed(reason: "bad image object") }
        let (width, height) = (Int(widthValue), Int(heightValue))
        guard width > 0, height > 0, width <= 1 << 14, height <= 1 << 14, start + Int(length) <= bytes.count else {
            throw Malformed(reason: "bad image size")
        }
        var data = Array(bytes[start..<start + Int(length)])
        switch dictionary["Filter"] {
        case nil: break
        case .name("FlateDecode")?:
            guard data.count > 2, let inflated = try? Inflate.decompress(Array(data.dropFirst(2))) else {
                throw Malformed(reason: "corrupt FlateDecode stream")
            }
            data = inflated
        default: throw Malformed(reason: "unsupported image filter")
        }
        switch dictionary["ColorSpace"] {
        case .name("DeviceRGB")?:
            guard data.count >= width * height * 3 else { throw Malformed(reason: "image data is short") }
            return Image(width: width, height: height, pixels: Array(data[0..<width * height * 3]))
        case .name("DeviceGray")?:
            guard data.count >= width * height else { throw Malformed(reason: "image data is short") }
            return Image(width: width, height: height, pixels: data[0..<width * height].flatMap { [$0, $0, $0] })
        default:
            throw Malformed(reason: "unsupported colour space")
        }
    }

    private func resolve(_ value: Object?) throws -> Object? {
        if case .reference(let number)? = value { return try object(number).value }
        return value
    }

    /// Finds `number 0 obj` and parses its value; for a stream, also returns where its data starts.
    private func object(_ number: Int) throws -> (value: Object, streamStart: Int?) {
        let marker = Array("\(number) 0 obj".utf8)
        var index = 0
        while index + marker.count <= bytes.count {
            if bytes[index] == marker[0], Array(bytes[index..<index + marker.count]) == marker,
                index == 0 || bytes[index - 1] == 0x0A || bytes[index - 1] == 0x0D || bytes[index - 1] == 0x20
            {
                var parser = Parser(bytes: bytes, position: index + marker.count)
                let value = try parser.parse()
                return (value, parser.streamStart())
            }
            index += 1
        }
        throw Malformed(reason: "object \(number) not found")
    }

    private func lastRange(of text: String) -> Int? {
        let needle = Array(text.utf8)
        var index = bytes.count - needle.count
        while index >= 0 {
            if Array(bytes[index..<index + needle.count]) == needle { return index }
            index -= 1
        }
        return nil
    }

    /// A small recursive-descent parser for the PDF object syntax the reader needs.
    private struct Parser {
        let bytes: [UInt8]
        var position: Int
        var depth = 0

        mutating func parse() throws -> Object {
            skipWhitespace()
            guard position < bytes.count else { throw Malformed(reason: "unexpected end") }
            depth += 1
            defer { depth -= 1 }
            guard depth < 64 else { throw Malformed(reason: "nesting too deep") }
            switch bytes[position] {
            case UInt8(ascii: "<") where next == UInt8(ascii: "<"):
                position += 2
                var entries: [String: Object] = [:]
                while true {
                    skipWhitespace()
                    guard position < bytes.count else { throw Malformed(reason: "unterminated dictionary") }
                    if bytes[position] == UInt8(ascii: ">") {
                        position += 2
                        return .dictionary(entries)
                    }
                    guard case .name(let key) = try parse() else { throw Malformed(reason: "dictionary key") }
                    entries[key] = try parse()
                }
            case UInt8(ascii: "["):
                position += 1
                var items: [Object] = []
                while true {
                    skipWhitespace()
                    guard position < bytes.count else { throw Malformed(reason: "unterminated array") }
                    if bytes[position] == UInt8(ascii: "]") {
                        position += 1
                        return .array(items)
                    }
                    items.append(try parse())
                }
            case UInt8(ascii: "/"):
                position += 1
                return .name(readToken())
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
                let first = Double(readToken()) ?? 0
                let saved = position
                skipWhitespace()
                let generation = readToken()
                skipWhitespace()
                if Int(generation) != nil, position < bytes.count, bytes[position] == UInt8(ascii: "R") {
                    position += 1
                    return .reference(Int(first))
                }
                position = saved
                return .number(first)
            default:
                _ = readToken()
                return .other
            }
        }

        /// Where the data of a stream object starts, if the parsed object is followed by `stream`.
        mutating func streamStart() -> Int? {
            skipWhitespace()
            guard readToken() == "stream" else { return nil }
            if position < bytes.count, bytes[position] == 0x0D { position += 1 }
            if position < bytes.count, bytes[position] == 0x0A { position += 1 }
            return position
        }

        private var next: UInt8? { position + 1 < bytes.count ? bytes[position + 1] : nil }

        private mutating func skipWhitespace() {
            while position < bytes.count {
                switch bytes[position] {
                case 0x00, 0x09, 0x0A, 0x0C, 0x0D, 0x20: position += 1
                case UInt8(ascii: "%"):
                    while position < bytes.count, bytes[position] != 0x0A, bytes[position] != 0x0D { position += 1 }
                default: return
                }
            }
        }

        private mutating func readToken() -> String {
            let start = position
            let delimiters = Set("()<>[]{}/%".utf8).union([0x00, 0x09, 0x0A, 0x0C, 0x0D, 0x20])
            while position < bytes.count, !delimiters.contains(bytes[position]) { position += 1 }
            if position == start, position < bytes.count { position += 1 }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }
    }
}
