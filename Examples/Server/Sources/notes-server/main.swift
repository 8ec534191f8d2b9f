import Foundation
import Hummingbird
import NotesServer

// Serves the notes service with its in-memory defaults.
//
//     swift run notes-server [--hostname 127.0.0.1] [--port 8080]
//
// NOTES_HOSTNAME and NOTES_PORT in the environment work too; arguments win.

/// Where to listen, from the command line and the environment.
struct Options {
    var hostname = "127.0.0.1"
    var port = 8080

    init(arguments: [String], environment: [String: String]) throws {
        if let hostname = environment["NOTES_HOSTNAME"] { self.hostname = hostname }
        if let port = environment["NOTES_PORT"] { self.port = try Self.port(port) }
        var rest = arguments.makeIterator()
        while let argument = rest.next() {
            switch argument {
            case "--hostname":
                guard let value = rest.next() else { throw UsageError("--hostname needs a value") }
                hostname = value
            case "--port":
                guard let value = rest.next() else { throw UsageError("--port needs a value") }
                port = try Self.port(value)
            case "-h", "--help":
                throw UsageError(nil)
            default:
                throw UsageError("unknown argument \(argument)")
            }
        }
    }

    static func port(_ text: String) throws -> Int {
        guard let port = Int(text), (0...65_535).contains(port) else {
            throw UsageError("the port must be a number from 0 to 65535, not \(text)")
        }
        return port
    }
}

/// A bad command line, with the reason to print before the usage.
struct UsageError: Error {
    var reason: String?

    init(_ reason: String?) {
        self.reason = reason
    }
}

let options: Options
do {
    options = try Options(
        arguments: Array(CommandLine.arguments.dropFirst()),
        environment: ProcessInfo.processInfo.environment
    )
} catch let error as UsageError {
    if let reason = error.reason { print("notes-server: \(reason)") }
    print("usage: notes-server [--hostname HOST] [--port PORT]   (defaults: 127.0.0.1, 8080)")
    exit(error.reason == nil ? 0 : 64)
}

ServerServices.startUp()
let app = NotesApplication.make(
    configuration: .init(address: .hostname(options.hostname, port: options.port), serverName: "notes-server")
)
try await app.runService()
