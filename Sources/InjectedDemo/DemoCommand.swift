import Foundation
import Injected

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
enum DemoMain {
    static func main() async {
        let status = await DemoCommand.run(
            arguments: Array(CommandLine.arguments.dropFirst()),
            environment: ProcessInfo.processInfo.environment,
            output: { print($0) },
            errors: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) }
        )
        exit(status)
    }
}

/// The command line: `InjectedDemo [--output DIR] [--images URL…] [--tour]`.
enum DemoCommand {
    static let usage = """
        usage: InjectedDemo [--output DIR] [--images URL…] [--tour]

          --output DIR     where to write merged.pdf and thumbnail.png (default: ./demo-output)
          --images URL…    http(s) or file URLs, or paths, of PNG or PPM images (default: built-in samples)
          --tour           replay the article's playground with the real library, then exit

        INJECTED_DEMO_PDF=legacy|modern chooses the PDF implementation (default: modern).
        """

    struct Options: Equatable {
        var output = "demo-output"
        var images: [URL] = []
        var tour = false
        var help = false
    }

    /// Runs the demo and returns the process's exit status.
    static func run(
        arguments: [String],
        environment: [String: String],
        output: @Sendable (String) -> Void,
        errors: @Sendable (String) -> Void
    ) async -> Int32 {
        do {
            let options = try parse(arguments)
            if options.help {
                output(usage)
                return 0
            }
            if options.tour {
                Tour.run(output: output)
                return 0
            }
            try Launch.injectDependencies(environment: environment, usesLiveNetwork: !options.images.isEmpty)
            try await makeReport(options, output: output)
            return 0
        } catch let error as DemoError {
            errors("error: \(error)")
            if case .usage = error { errors(usage) }
            return error.isUsage ? 2 : 1
        } catch {
            errors("error: \(error)")
            return 1
        }
    }

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--output":
                guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
                    throw DemoError.usage("--output needs a directory")
                }
                options.output = arguments[index + 1]
                index += 2
            case "--images":
                index += 1
                while index < arguments.count, !arguments[index].hasPrefix("--") {
                    options.images.append(url(from: arguments[index]))
                    index += 1
                }
                if options.images.isEmpty { throw DemoError.usage("--images needs at least one URL") }
            case "--tour":
                options.tour = true
                index += 1
            case "--help", "-h":
                options.help = true
                index += 1
            case let other:
                throw DemoError.usage("unknown argument '\(other)'")
            }
        }
        return options
    }

    private static func url(from argument: String) -> URL {
        if let url = URL(string: argument), let scheme = url.scheme, scheme.count > 1 { return url }
        return URL(fileURLWithPath: argument)
    }

    private static func makeReport(_ options: Options, output: @Sendable (String) -> Void) async throws {
        @Injected(\.networkProvider) var network
        @Injected(\.pdfService) var pdfService
        output("Injected network provider: \(network.name)")
        output("Injected PDF service:      \(pdfService.name)")

        let urls = options.images.isEmpty ? OfflineNetworkProvider.sampleURLs : options.images
        let report = try await ReportService().makeReport(from: urls)
        let directory = URL(fileURLWithPath: options.output, isDirectory: true)
        let pdfURL = directory.appendingPathComponent("merged.pdf")
        let thumbnailURL = directory.appendingPathComponent("thumbnail.png")
        let png = Data(PNG.encode(report.thumbnail))
        try writeAtomically(report.pdf, to: pdfURL)
        try writeAtomically(png, to: thumbnailURL)

        output("Merged \(report.pageCount) images into \(pdfURL.path) (\(report.pdf.count) bytes)")
        output(
            "Thumbnail of page 1, \(report.thumbnail.width)×\(report.thumbnail.height) pixels: "
                + "\(thumbnailURL.path) (\(png.count) bytes)"
        )
    }

    /// Writes to a temporary file beside the destination, then renames it into place, so the destination is either
    /// the old file or the complete new one, never a half-written file.
    static func writeAtomically(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw DemoError.unwritable(directory.path, reason: reason(error))
        }
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).partial")
        do {
            try data.write(to: temporary)
            guard rename(temporary.path, url.path) == 0 else {
                throw DemoError.unwritable(url.path, reason: String(cString: strerror(errno)))
            }
        } catch let error as DemoError {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw DemoError.unwritable(url.path, reason: reason(error))
        }
    }

    private static func reason(_ error: Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError,
            underlying.domain == NSPOSIXErrorDomain, let code = POSIXErrorCode(rawValue: Int32(underlying.code))
        {
            return String(cString: strerror(code.rawValue))
        }
        return nsError.localizedDescription
    }
}

extension DemoError {
    var isUsage: Bool {
        if case .usage = self { return true }
        return false
    }
}
