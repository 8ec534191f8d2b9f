import Foundation
import Injected

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// MARK: - Network

/// Fetches image data by URL.
protocol NetworkProviding: Sendable {
    /// A short name for the demo's output.
    var name: String { get }
    /// The bytes at a URL.
    func imageData(from url: URL) async throws -> Data
}

/// Fetches http(s) URLs with URLSession and reads file URLs from disk.
struct LiveNetworkProvider: NetworkProviding {
    var name: String { "LiveNetworkProvider (URLSession)" }

    func imageData(from url: URL) async throws -> Data {
        switch url.scheme?.lowercased() {
        case "file":
            do {
                return try Data(contentsOf: url)
            } catch {
                throw DemoError.unreadable(url.absoluteString, reason: "no readable file at \(url.path)")
            }
        case "http", "https":
            let (data, response): (Data, URLResponse)
            do {
                (data, response) = try await URLSession.shared.data(from: url)
            } catch {
                throw DemoError.unreadable(url.absoluteString, reason: error.localizedDescription)
            }
            if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
                throw DemoError.unreadable(url.absoluteString, reason: "HTTP status \(http.statusCode)")
            }
            return data
        default:
            throw DemoError.unreadable(url.absoluteString, reason: "only http, https and file URLs are supported")
        }
    }
}

/// Serves a few generated sample images at `sample:` URLs, so the demo runs without a network.
struct OfflineNetworkProvider: NetworkProviding {
    var name: String { "OfflineNetworkProvider (built-in samples)" }

    /// The URLs of the built-in samples.
    static let sampleURLs = SampleImages.names.map { URL(string: "sample:\($0)")! }

    func imageData(from url: URL) async throws -> Data {
        guard url.scheme == "sample", let image = SampleImages.image(named: url.absoluteString.dropFirst(7)) else {
            throw DemoError.unreadable(
                url.absoluteString,
                reason:
                    "the offline provider serves only \(SampleImages.names.map { "sample:\($0)" }.joined(separator: ", "))"
            )
        }
        return Data(PNG.encode(image))
    }
}

// MARK: - PDF

/// Merges images into a PDF and renders a thumbnail of a PDF's first page, as in the seed's PDFService.
protocol PDFService: Sendable {
    /// A short name for the demo's output.
    var name: String { get }
    /// A PDF with one page per image.
    func mergeToPDF(images: [Image]) -> Data
    /// The first page of a PDF, scaled down to fit a 160-point square; `nil` if the PDF cannot be read.
    func thumbnail(from pdf: Data) -> Image?
}

extension PDFService {
    func thumbnail(from pdf: Data) -> Image? {
        try? PDFReader(pdf).firstPageImage().scaledToFit(160)
    }
}

/// The "legacy" writer: each page holds one uncompressed image.
struct LegacyPDFService: PDFService {
    var name: String { "LegacyPDFService (uncompressed images)" }

    func mergeToPDF(images: [Image]) -> Data {
        PDFWriter(encoding: .raw).write(images)
    }
}

/// The "modern" writer: images are compressed with the FlateDecode filter, so flat and repeating areas cost little.
struct ModernPDFService: PDFService {
    var name: String { "ModernPDFService (FlateDecode images)" }

    func mergeToPDF(images: [Image]) -> Data {
        PDFWriter(encoding: .flate).write(images)
    }
}

// MARK: - Keys

private enum NetworkProviderKey: ReadOnlyInjectionKey {
    static var currentValue: any NetworkProviding { OfflineNetworkProvider() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum PDFServiceKey: ReadOnlyInjectionKey {
    static var currentValue: any PDFService { ModernPDFService() }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    /// Where images come from.
    ///
    /// The default is the offline provider, so the demo needs no network.
    var networkProvider: any NetworkProviding {
        get { Self[NetworkProviderKey.self] }
        set { Self[NetworkProviderKey.self] = newValue }
    }

    /// Which PDF implementation merges and thumbnails.
    ///
    /// The default is the modern one.
    var pdfService: any PDFService {
        get { Self[PDFServiceKey.self] }
        set { Self[PDFServiceKey.self] = newValue }
    }
}

// MARK: - Choosing implementations at launch

/// The one place the demo chooses implementations, as the seed's DIService does at launch.
///
/// Consumers never construct services; they read them through `@Injected`.
enum Launch {
    /// Overrides the services in the global store for this run.
    ///
    /// - Parameters:
    ///   - environment: The process environment; `INJECTED_DEMO_PDF=legacy|modern` picks the PDF service.
    ///   - usesLiveNetwork: Whether the user gave image URLs, which the live provider fetches.
    /// - Throws: `DemoError.usage` for an unknown `INJECTED_DEMO_PDF` value.
    static func injectDependencies(environment: [String: String], usesLiveNetwork: Bool) throws {
        switch environment["INJECTED_DEMO_PDF"]?.lowercased() {
        case nil, "", "modern": InjectedValues[\.pdfService] = ModernPDFService()
        case "legacy": InjectedValues[\.pdfService] = LegacyPDFService()
        case let other?: throw DemoError.usage("INJECTED_DEMO_PDF must be legacy or modern, not '\(other)'")
        }
        if usesLiveNetwork {
            InjectedValues[\.networkProvider] = LiveNetworkProvider()
        }
    }
}
