import Foundation
import Injected
import InjectedTesting
import Testing

@testable import InjectedDemo

/// The command line writes both files, and fails with one line and a non-zero status on bad input.
///
/// Each test runs in its own scope, so the command's launch-time overrides stay in the test.
@Suite("Command line", .injectedValues, .temporaryDirectories)
struct CommandTests {
    @Test("writes merged.pdf and thumbnail.png and says what was injected")
    func writesBothFiles() async throws {
        let directory = try temporaryDirectory()
        let (status, output, errors) = await runCommand(["--output", directory.path])
        #expect(status == 0, "\(errors)")
        #expect(output.contains { $0.contains("OfflineNetworkProvider") })
        #expect(output.contains { $0.contains("ModernPDFService") })
        #expect(output.contains { $0.contains("Merged 3 images into") && $0.contains("bytes") })
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(files == ["merged.pdf", "thumbnail.png"])
    }

    @Test("an unreadable URL fails with one line")
    func unreadableURL() async throws {
        let directory = try temporaryDirectory()
        let missing = directory.appendingPathComponent("missing.png").path
        let (status, _, errors) = await runCommand(["--output", directory.path, "--images", missing])
        #expect(status == 1)
        #expect(errors == ["error: cannot read file://\(missing): no readable file at \(missing)"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
    }

    @Test("data that is not an image fails with one line")
    func notAnImage() async throws {
        let directory = try temporaryDirectory()
        let text = directory.appendingPathComponent("notes.txt")
        try Data("hello".utf8).write(to: text)
        let (status, _, errors) = await runCommand(["--output", directory.path, "--images", text.path])
        #expect(status == 1)
        #expect(errors.count == 1)
        #expect(errors.first?.contains("is not an image the demo can read: expected PNG or binary PPM data") == true)
    }

    @Test("an unwritable output directory fails with one line")
    func unwritableDirectory() async throws {
        let file = try temporaryDirectory().appendingPathComponent("a-file")
        try Data().write(to: file)
        let (status, _, errors) = await runCommand(["--output", file.appendingPathComponent("out").path])
        #expect(status == 1)
        #expect(errors.count == 1)
        #expect(errors.first?.hasPrefix("error: cannot write \(file.path)/out") == true)
    }

    @Test("a failed write leaves neither a partial file nor a changed destination")
    func failedWriteLeavesNoPartialFile() throws {
        let directory = try temporaryDirectory()
        let destination = directory.appendingPathComponent("merged.pdf")
        // A directory in the way makes the final rename fail after the data was written.
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        #expect(throws: DemoError.self) { try DemoCommand.writeAtomically(Data("new".utf8), to: destination) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["merged.pdf"])
        var isDirectory: ObjCBool = false
        #expect(
            FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory) && isDirectory.boolValue
        )
    }

    @Test("a successful write replaces the old file whole")
    func successfulWriteReplaces() throws {
        let destination = try temporaryDirectory().appendingPathComponent("thumbnail.png")
        try Data("old".utf8).write(to: destination)
        try DemoCommand.writeAtomically(Data("new".utf8), to: destination)
        #expect(try Data(contentsOf: destination) == Data("new".utf8))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: destination.deletingLastPathComponent().path) == [
                "thumbnail.png"
            ]
        )
    }

    @Test("bad arguments and settings are usage errors", arguments: [["--bogus"], ["--output"], ["--images"]])
    func usageErrors(arguments: [String]) async {
        let (status, _, errors) = await runCommand(arguments)
        #expect(status == 2)
        #expect(errors.first?.hasPrefix("error: ") == true)
    }

    @Test("an unknown INJECTED_DEMO_PDF is a usage error")
    func unknownPDFSetting() async {
        let (status, _, errors) = await runCommand([], environment: ["INJECTED_DEMO_PDF": "fancy"])
        #expect(status == 2)
        #expect(errors.first == "error: INJECTED_DEMO_PDF must be legacy or modern, not 'fancy'")
    }

    @Test("the tour replays the article's playground and leaves no override behind")
    func tour() async {
        let (status, output, _) = await runCommand(["--tour"])
        #expect(status == 0)
        let results = output.filter { $0.contains("→ ") }.compactMap { $0.split(separator: "→ ").last.map(String.init) }
        #expect(
            results == [
                "OfflineNetworkProvider (built-in samples)",
                "MockedNetworkProvider",
                "OfflineNetworkProvider (built-in samples)",
                "Data requested using the 'OfflineNetworkProvider (built-in samples)'",
            ]
        )
        #expect(InjectedValues[\.networkProvider] is OfflineNetworkProvider)
    }

    private func runCommand(
        _ arguments: [String],
        environment: [String: String] = [:]
    ) async -> (status: Int32, output: [String], errors: [String]) {
        let output = Lines()
        let errors = Lines()
        let status = await DemoCommand.run(
            arguments: arguments,
            environment: environment,
            output: { output.append($0) },
            errors: { errors.append($0) }
        )
        return (status, output.all, errors.all.filter { !$0.hasPrefix("usage:") })
    }
}
