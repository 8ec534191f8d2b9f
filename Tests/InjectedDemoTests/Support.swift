import Foundation
import Testing

@testable import InjectedDemo

/// External tools the tests use, and whether this machine has them.
enum Tool {
    static let qpdf = find("qpdf")
    static let python = find("python3")

    private static func find(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }
}

/// Runs a program and returns its exit status and standard output.
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}

/// The independent PNG tool beside this file.
let pngTool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Helpers/png_tool.py")
    .path

/// What the independent PNG tool reports.
struct DecodedPNG: Decodable {
    let width: Int
    let height: Int
    let pixels: String

    var image: Image {
        var bytes: [UInt8] = []
        var index = pixels.startIndex
        while index < pixels.endIndex {
            let next = pixels.index(index, offsetBy: 2)
            bytes.append(UInt8(pixels[index..<next], radix: 16)!)
            index = next
        }
        return Image(width: width, height: height, pixels: bytes)
    }
}

func decodedByPython(_ output: String) throws -> DecodedPNG {
    try JSONDecoder().decode(DecodedPNG.self, from: Data(output.utf8))
}

/// A new, empty directory inside the running test's temporary directory, which the `.temporaryDirectories` trait
/// removes when the test ends.
func temporaryDirectory() throws -> URL {
    let root = try #require(TemporaryDirectories.root, "the suite needs the .temporaryDirectories trait")
    let url = root.appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Gives each test a temporary directory of its own, `InjectedDemoTests-<UUID>`, and removes it with everything in it
/// when the test ends, whether it passed or failed.
struct TemporaryDirectories: TestTrait, SuiteTrait, TestScoping {
    @TaskLocal static var root: URL?

    var isRecursive: Bool { true }

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let manager = FileManager.default
        let root = manager.temporaryDirectory.appendingPathComponent("InjectedDemoTests-\(UUID().uuidString)")
        try manager.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? manager.removeItem(at: root) }
        try await Self.$root.withValue(root) { try await function() }
    }
}

extension Trait where Self == TemporaryDirectories {
    /// A temporary directory for each test, removed when the test ends.
    static var temporaryDirectories: Self { Self() }
}

/// Collects what the command prints.
final class Lines: @unchecked Sendable {
    // `@unchecked Sendable`: `lines` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    var all: [String] { lock.withLock { lines } }

    func append(_ line: String) {
        lock.withLock { lines.append(line) }
    }
}
