import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

// Loads GET /whoami from many connections at once, each request as a random user with its own request id, and checks
// that every answer names the user and the id of the request it answers: that no request ever sees another's scope.
//
//     load-check [--host 127.0.0.1] [--port 8080] [--requests 100000 | --seconds 10] [--connections 256]
//
// Exits with status 1 if any request failed, answered anything but 200, or named someone else.

/// What to run, from the command line.
struct Options {
    var host = "127.0.0.1"
    var port = 8080
    var requests = 100_000
    var seconds: Double?
    var connections = 256

    static let usage = """
        usage: load-check [--host HOST] [--port PORT] [--requests N | --seconds S] [--connections C]
          --requests N     send N requests in all (default 100000)
          --seconds S      send requests for S seconds instead of a fixed number
          --connections C  keep C requests in flight, over C connections (default 256)
        """

    init(arguments: [String]) throws {
        var rest = arguments.makeIterator()
        func value(_ name: String) throws -> String {
            guard let value = rest.next() else { throw UsageError("\(name) needs a value") }
            return value
        }
        func positive(_ name: String) throws -> Int {
            let text = try value(name)
            guard let number = Int(text), number > 0 else { throw UsageError("\(name) must be above 0, not \(text)") }
            return number
        }
        while let argument = rest.next() {
            switch argument {
            case "--host": host = try value(argument)
            case "--port": port = try positive(argument)
            case "--requests", "-n": requests = try positive(argument)
            case "--connections", "-c": connections = try positive(argument)
            case "--seconds":
                let text = try value(argument)
                guard let seconds = Double(text), seconds > 0 else {
                    throw UsageError("--seconds must be above 0, not \(text)")
                }
                self.seconds = seconds
            case "-h", "--help": throw UsageError(nil)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
    }
}

/// A bad command line, with the reason to print before the usage.
struct UsageError: Error {
    var reason: String?

    init(_ reason: String?) {
        self.reason = reason
    }
}

/// The body of a `/whoami` answer.
struct WhoAmI: Decodable {
    var user: String
    var requestID: String
}

/// Counts shared by every connection's loop.
final class Tally: Sendable {
    let started = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    let errors = Atomic<Int>(0)
    let mismatches = Atomic<Int>(0)
    private let examples = Mutex<[String]>([])

    /// Keeps the first few problems, to print at the end.
    func note(_ problem: String) {
        examples.withLock { if $0.count < 10 { $0.append(problem) } }
    }

    var problems: [String] { examples.withLock { $0 } }
}

/// Sends requests one after another on one connection until the run is over.
func runConnection(
    client: HTTPClient,
    options: Options,
    run: String,
    deadline: ContinuousClock.Instant?,
    tally: Tally
) async {
    let url = "http://\(options.host):\(options.port)/whoami"
    let decoder = JSONDecoder()
    while true {
        if let deadline, ContinuousClock.now >= deadline { return }
        let index = tally.started.add(1, ordering: .relaxed).newValue
        if deadline == nil, index > options.requests { return }

        let user = "user-\(UInt32.random(in: .min ... .max))"
        let requestID = "\(run)-\(index)"
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "X-User", value: user)
        request.headers.add(name: "X-Request-ID", value: requestID)
        do {
            let response = try await client.execute(request, timeout: .seconds(30))
            let body = try await response.body.collect(upTo: 64 * 1_024)
            if response.status != .ok {
                tally.errors.add(1, ordering: .relaxed)
                tally.note("\(requestID): status \(response.status.code): \(String(buffer: body))")
            } else {
                let answer = try decoder.decode(WhoAmI.self, from: Data(body.readableBytesView))
                let echoed = response.headers.first(name: "X-Request-ID")
                if answer.user != user || answer.requestID != requestID || echoed != requestID {
                    tally.mismatches.add(1, ordering: .relaxed)
                    tally.note(
                        "\(requestID): sent user \(user), got user \(answer.user), "
                            + "request id \(answer.requestID), header \(echoed ?? "none")"
                    )
                }
            }
        } catch {
            tally.errors.add(1, ordering: .relaxed)
            tally.note("\(requestID): \(error)")
        }
        tally.finished.add(1, ordering: .relaxed)
    }
}

/// The command: parses the options, runs the connections, prints the tally.
@main
enum LoadCheck {
    static func main() async throws {
        let options: Options
        do {
            options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch let error as UsageError {
            if let reason = error.reason { print("load-check: \(reason)") }
            print(Options.usage)
            exit(error.reason == nil ? 0 : 64)
        }

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: options.connections
        )
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let tally = Tally()
        let run = "lc\(UInt16.random(in: .min ... .max))"
        let amount = options.seconds.map { "for \($0) s" } ?? "\(options.requests) requests"
        print(
            "load-check: GET http://\(options.host):\(options.port)/whoami, \(amount), \(options.connections) connections, "
                + "a random user and its own request id per request"
        )

        let clock = ContinuousClock()
        let start = clock.now
        let deadline = options.seconds.map { start + .milliseconds(Int($0 * 1_000)) }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<options.connections {
                group.addTask {
                    await runConnection(client: client, options: options, run: run, deadline: deadline, tally: tally)
                }
            }
        }
        let elapsed = start.duration(to: clock.now)
        try await client.shutdown()

        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let finished = tally.finished.load(ordering: .relaxed)
        let errors = tally.errors.load(ordering: .relaxed)
        let mismatches = tally.mismatches.load(ordering: .relaxed)
        print("requests: \(finished)")
        print("errors: \(errors)")
        print("mismatches: \(mismatches)")
        print("elapsed: \(String(format: "%.2f", seconds)) s")
        print("requests/s: \(Int((Double(finished) / seconds).rounded()))")
        for problem in tally.problems {
            print("  \(problem)")
        }
        if errors > 0 || mismatches > 0 || finished == 0 {
            print("load-check: FAILED")
            exit(1)
        }
        print("load-check: OK, every response named its own request's user and id")
    }
}
