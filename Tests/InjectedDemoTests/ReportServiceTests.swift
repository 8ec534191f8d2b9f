import Foundation
import Injected
import InjectedTesting
import Testing

@testable import InjectedDemo

/// The app code gets both services through `@Injected`, so tests replace them without touching it.
@Suite("Report service", .temporaryDirectories)
struct ReportServiceTests {
    @Test(
        "the report uses the injected network provider and PDF service",
        .injectedValues {
            $0.networkProvider = MockNetworkProvider(images: [
                "a": SampleImages.checkerboard, "b": SampleImages.sunrise,
            ])
            $0.pdfService = RecordingPDFService()
        }
    )
    func usesInjectedServices() async throws {
        let report = try await ReportService().makeReport(from: [URL(string: "mock:a")!, URL(string: "mock:b")!])
        let recorder = try #require(InjectedValues[\.pdfService] as? RecordingPDFService)
        #expect(recorder.merged.all == ["200×200", "400×300"])
        #expect(report.pdf == Data("recorded".utf8))
        #expect(report.pageCount == 2)
        #expect(report.thumbnail == SampleImages.quadrants)
    }

    @Test("the defaults are the offline provider and the modern PDF service", .injectedValues)
    func defaults() async throws {
        #expect(InjectedValues[\.networkProvider] is OfflineNetworkProvider)
        #expect(InjectedValues[\.pdfService] is ModernPDFService)
        let report = try await ReportService().makeReport(from: OfflineNetworkProvider.sampleURLs)
        #expect(report.pageCount == 3)
    }

    @Test(
        "INJECTED_DEMO_PDF chooses the PDF service at launch",
        .injectedValues,
        arguments: [("legacy", "LegacyPDFService"), ("modern", "ModernPDFService"), ("", "ModernPDFService")]
    )
    func launchChoosesPDFService(value: String, expected: String) throws {
        try Launch.injectDependencies(environment: ["INJECTED_DEMO_PDF": value], usesLiveNetwork: false)
        #expect(String(describing: type(of: InjectedValues[\.pdfService])) == expected)
    }

    @Test("the live provider reads file URLs", .injectedValues)
    func liveProviderReadsFiles() async throws {
        let file = try temporaryDirectory().appendingPathComponent("image.png")
        try Data(PNG.encode(SampleImages.checkerboard)).write(to: file)
        let data = try await LiveNetworkProvider().imageData(from: file)
        #expect(try Image(decoding: Array(data), source: file.path) == SampleImages.checkerboard)
    }
}

/// Serves in-memory images at `mock:` URLs.
struct MockNetworkProvider: NetworkProviding {
    let images: [String: Image]
    var name: String { "MockNetworkProvider" }

    func imageData(from url: URL) async throws -> Data {
        guard let image = images[String(url.absoluteString.dropFirst(5))] else {
            throw DemoError.unreadable(url.absoluteString, reason: "no such mock image")
        }
        return Data(PNG.encode(image))
    }
}

/// Records what it is asked to merge and returns canned results.
final class RecordingPDFService: PDFService {
    let merged = Lines()
    var name: String { "RecordingPDFService" }

    func mergeToPDF(images: [Image]) -> Data {
        for image in images { merged.append("\(image.width)×\(image.height)") }
        return Data("recorded".utf8)
    }

    func thumbnail(from pdf: Data) -> Image? { SampleImages.quadrants }
}
