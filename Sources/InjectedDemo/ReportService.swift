import Foundation
import Injected

/// What the demo produces from a list of image URLs.
struct Report {
    let pdf: Data
    let pageCount: Int
    let thumbnail: Image
}

/// The app code: fetches images, merges them into a PDF and renders a thumbnail.
///
/// It never constructs a service; both arrive through `@Injected`, so tests and the launch configuration can swap
/// them.
struct ReportService {
    @Injected(\.networkProvider) private var network
    @Injected(\.pdfService) private var pdfService

    func makeReport(from urls: [URL]) async throws -> Report {
        var images: [Image] = []
        for url in urls {
            let data = try await network.imageData(from: url)
            images.append(try Image(decoding: Array(data), source: url.absoluteString))
        }
        let pdf = pdfService.mergeToPDF(images: images)
        guard let thumbnail = pdfService.thumbnail(from: pdf) else {
            throw DemoError.unreadablePDF(pdfService.name)
        }
        return Report(pdf: pdf, pageCount: images.count, thumbnail: thumbnail)
    }
}

/// Everything that can go wrong, each as one line for the terminal.
enum DemoError: Error, Equatable, CustomStringConvertible {
    case usage(String)
    case unreadable(String, reason: String)
    case notAnImage(String, reason: String)
    case unwritable(String, reason: String)
    case unreadablePDF(String)

    var description: String {
        switch self {
        case .usage(let message): message
        case .unreadable(let url, let reason): "cannot read \(url): \(reason)"
        case .notAnImage(let source, let reason): "\(source) is not an image the demo can read: \(reason)"
        case .unwritable(let path, let reason): "cannot write \(path): \(reason)"
        case .unreadablePDF(let service): "\(service) could not read back the PDF it wrote"
        }
    }
}
