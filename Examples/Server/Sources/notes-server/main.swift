import Foundation
import Hummingbird
import Injected
import Logging
import NotesServer
import PostgresNIO
import ServiceLifecycle

// Serves the notes service: on PostgreSQL when a database URL is given, and else with its in-memory defaults.
//
//     swift run notes-server [--hostname 127.0.0.1] [--port 8080] [--database-url postgres://user@host:port/db]
//
// NOTES_HOSTNAME, NOTES_PORT and NOTES_DATABASE_URL in the environment work too; arguments win.
// NOTES_REQUEST_DEADLINE, in seconds (5 by default), bounds how long any request may take before it is answered 503.
// NOTES_HEADER_TIMEOUT (5 s) and NOTES_IDLE_TIMEOUT (15 s), in seconds, bound how long a request's head may take to
// arrive and how long a connection may stay open with no request; NOTES_MAX_CONNECTIONS (1024) caps the connections
// held at once, a connection beyond it answered 503 and closed.

/// Where to listen, from the command line and the environment.
struct Options {
    var hostname = "127.0.0.1"
    var port = 8080
    var databaseURL: String?
    var requestDeadline = NotesApplication.defaultRequestDeadline
    var limits = ConnectionLimits()

    init(arguments: [String], environment: [String: String]) throws {
        if let hostname = environment["NOTES_HOSTNAME"] { self.hostname = hostname }
        if let port = environment["NOTES_PORT"] { self.port = try Self.port(port) }
        if let url = environment["NOTES_DATABASE_URL"], !url.isEmpty { databaseURL = url }
        if let seconds = environment["NOTES_REQUEST_DEADLINE"], !seconds.isEmpty {
            guard let deadline = NotesApplication.requestDeadline(seconds: seconds) else {
                throw UsageError("NOTES_REQUEST_DEADLINE must be a number of seconds above 0, not \(seconds)")
            }
            requestDeadline = deadline
        }
        if let seconds = environment["NOTES_HEADER_TIMEOUT"], !seconds.isEmpty {
            guard let timeout = ConnectionLimits.timeout(seconds: seconds) else {
                throw UsageError("NOTES_HEADER_TIMEOUT must be a number of seconds above 0, not \(seconds)")
            }
            limits.headerTimeout = timeout
        }
        if let seconds = environment["NOTES_IDLE_TIMEOUT"], !seconds.isEmpty {
            guard let timeout = ConnectionLimits.timeout(seconds: seconds) else {
                throw UsageError("NOTES_IDLE_TIMEOUT must be a number of seconds above 0, not \(seconds)")
            }
            limits.idleTimeout = timeout
        }
        if let text = environment["NOTES_MAX_CONNECTIONS"], !text.isEmpty {
            guard let cap = ConnectionLimits.maximumConnections(text) else {
                throw UsageError("NOTES_MAX_CONNECTIONS must be a whole number of at least 1, not \(text)")
            }
            limits.maximumConnections = cap
        }
        var rest = arguments.makeIterator()
        while let argument = rest.next() {
            switch argument {
            case "--hostname":
                guard let value = rest.next() else { throw UsageError("--hostname needs a value") }
                hostname = value
            case "--port":
                guard let value = rest.next() else { throw UsageError("--port needs a value") }
                port = try Self.port(value)
            case "--database-url":
                guard let value = rest.next() else { throw UsageError("--database-url needs a value") }
                databaseURL = value
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
    print("usage: notes-server [--hostname HOST] [--port PORT] [--database-url URL]")
    print(
        "  defaults: 127.0.0.1, 8080, and the notes in memory; a URL looks like postgres://notes@127.0.0.1:54329/notes"
    )
    exit(error.reason == nil ? 0 : 64)
}

if let url = options.databaseURL {
    do {
        InjectedValues[\.databaseConfiguration] = try DatabaseConfiguration(url: url)
    } catch {
        print("notes-server: \(error)")
        exit(64)
    }
}
ServerServices.startUp()
let inFlight = InFlightRequests()
let app = NotesApplication.make(
    configuration: .init(address: .hostname(options.hostname, port: options.port), serverName: "notes-server"),
    requestDeadline: options.requestDeadline,
    limits: options.limits,
    inFlight: inFlight
)
// SIGTERM or SIGINT stops the server gracefully: it takes no new connections and lets the requests in flight finish,
// for at most 8 s; then the service group cancels them, so that a client that never finishes cannot keep the
// process alive. Every request is answered within its deadline, and one still running 7 s after the signal (its
// deadline set longer) is answered 503 then, before its connection closes; work that ignores its cancellation (a
// query hung on a dropped connection) cannot hold the process either: 10 s after the signal, `ShutdownBound` ends
// it, with status 1. The bound service comes last, since the group signals its services last to first.
let logger = Logger(label: "notes-server")
var services = ServiceGroupConfiguration(
    services: [
        .init(service: app),
        .init(
            service: ShutdownBound(bound: .seconds(10), inFlight: (inFlight, .seconds(7)), logger: logger),
            successTerminationBehavior: .ignore
        ),
    ],
    gracefulShutdownSignals: [.sigterm, .sigint],
    logger: logger
)
services.maximumGracefulShutdownDuration = .seconds(8)
do {
    try await ServiceGroup(configuration: services).run()
} catch {
    // Such as a database that cannot be reached at start-up, when the tables are made: say so, without a crash report.
    print("notes-server: stopped: \(error is PSQLError ? String(reflecting: error) : String(describing: error))")
    if options.databaseURL != nil, error is DatabaseUnavailable {
        print("  is the database running? For the throw-away cluster of this example: bash db.sh start")
    }
    exit(1)
}
