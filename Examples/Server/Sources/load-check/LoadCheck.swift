import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

// Loads GET /whoami from many connections at once, each request as a random user with its own request id, and checks
// that every answer names the user and the id of the request it answers: that no request ever sees another's scope.
// With --notes, each connection is a user of its own that writes notes and reads them back, alternately, and checks
// that every list is exactly what that user wrote so far; at the end it reads every user's notes once more and checks
// them, count and content. With --notes, a request that gets 503 or no answer is sent again, a post with the same
// Idempotency-Key, so that the final check still finds every note written exactly once. It prints the slowest single
// attempt (one request sent once, to its answer or its failure), so that a script can check that the server answered
// every request within its deadline, retries or not.
//
//     load-check [--host 127.0.0.1] [--port 8080] [--requests 100000 | --seconds 10] [--connections 256]
//                [--notes [--written FILE] [--retry-for 30]] [--slowest-limit S]
//
// Exits with status 1 if any request failed, answered anything it should not, or showed another request's data, or,
// with --slowest-limit, if any attempt took longer than that.

/// What to run, from the command line.
struct Options {
    var host = "127.0.0.1"
    var port = 8080
    var requests = 100_000
    var seconds: Double?
    var connections = 256
    var notes = false
    var written: String?
    var retryFor = 30.0
    var slowestLimit: Double?

    static let usage = """
        usage: load-check [--host HOST] [--port PORT] [--requests N | --seconds S] [--connections C]
                          [--notes [--written FILE] [--retry-for S]] [--slowest-limit S]
          --requests N       send N requests in all (default 100000)
          --seconds S        send requests for S seconds instead of a fixed number
          --connections C    keep C requests in flight, over C connections (default 256)
          --notes            write and read each connection's own user's notes, instead of GET /whoami
          --written FILE     with --notes, save each note written as a line "user<TAB>text", sorted, to FILE
          --retry-for S      with --notes, send a request that got 503 or no answer again, for up to S seconds
                             (default 30; 0 to never retry); a post, with the same Idempotency-Key
          --slowest-limit S  fail if any single attempt, from sending a request to the end of its answer or to
                             its failure, took longer than S seconds (the slowest is printed either way)
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
            case "--notes": notes = true
            case "--written": written = try value(argument)
            case "--retry-for":
                let text = try value(argument)
                guard let seconds = Double(text), seconds >= 0 else {
                    throw UsageError("--retry-for must be 0 or more, not \(text)")
                }
                retryFor = seconds
            case "--slowest-limit":
                let text = try value(argument)
                guard let seconds = Double(text), seconds > 0 else {
                    throw UsageError("--slowest-limit must be above 0, not \(text)")
                }
                slowestLimit = seconds
            case "-h", "--help": throw UsageError(nil)
            default: throw UsageError("unknown argument \(argument)")
            }
        }
        if written != nil, !notes { throw UsageError("--written needs --notes") }
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
    /// Requests sent again after a 503 or no answer.
    let retries = Atomic<Int>(0)
    /// Posts answered as replays of an earlier try with the same idempotency key.
    let replayed = Atomic<Int>(0)
    /// Attempts answered 503.
    let unavailable = Atomic<Int>(0)
    /// Attempts that got no answer: a refused or dropped connection, or nothing within the client's timeout.
    let unanswered = Atomic<Int>(0)
    private let examples = Mutex<[String]>([])
    private let latencies = Mutex<[Duration]>([])
    private let slowest = Mutex<(duration: Duration, what: String)>((.zero, "none"))
    /// When the run started, for saying when the slowest attempt was sent.
    let start = ContinuousClock.now

    /// Keeps one connection's request latencies.
    func add(_ durations: [Duration]) {
        latencies.withLock { $0 += durations }
    }

    /// Keeps the time one attempt took, from `sent`, when it sent the request, to now, the end of its answer or its
    /// failure; `outcome` says which, for the slowest.
    func attempted(_ request: HTTPClientRequest, sent: ContinuousClock.Instant, outcome: @autoclosure () -> String) {
        let duration = sent.duration(to: .now)
        slowest.withLock { slowest in
            guard duration > slowest.duration else { return }
            let at = String(format: "%.2f", start.duration(to: sent).milliseconds / 1_000)
            slowest = (duration, "\(request.method) sent at \(at) s: \(outcome())")
        }
    }

    /// The longest any single attempt took, in milliseconds.
    var slowestAttempt: Double { slowest.withLock { $0.duration }.milliseconds }

    /// The slowest attempt: its method, when it was sent, and its answer or failure.
    var slowestDescription: String { slowest.withLock { $0.what } }

    /// The latency below which `fraction` of the requests finished, in milliseconds.
    func percentile(_ fraction: Double) -> Double {
        let sorted = latencies.withLock { $0 }.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))].milliseconds
    }

    /// Keeps the first few problems, to print at the end.
    func note(_ problem: String) {
        examples.withLock { if $0.count < 10 { $0.append(problem) } }
    }

    var problems: [String] { examples.withLock { $0 } }
}

/// A note, as the API returns it.
struct Note: Decodable {
    var id: Int
    var text: String
}

/// Writes and reads notes on one connection, as one user of its own, until the run is over; returns what it wrote.
///
/// Each post carries an `Idempotency-Key` of its own, and is sent again, with the same key, when it gets 503 or no
/// answer at all (a refused or dropped connection, or nothing within 10 s), for up to `options.retryFor`: the server
/// stores it once, so the user's notes hold it exactly once, whichever try stored it. A read is retried the same way.
func runNotesConnection(
    client: HTTPClient,
    options: Options,
    user: String,
    deadline: ContinuousClock.Instant?,
    tally: Tally
) async -> [String] {
    let url = "http://\(options.host):\(options.port)/notes"
    let decoder = JSONDecoder()
    var written: [String] = []
    var writing = true
    var latencies: [Duration] = []
    defer { tally.add(latencies) }
    while true {
        if let deadline, ContinuousClock.now >= deadline { return written }
        let index = tally.started.add(1, ordering: .relaxed).newValue
        if deadline == nil, index > options.requests { return written }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "X-User", value: user)
        let text = "\(user) note \(written.count + 1)"
        if writing {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/json")
            request.headers.add(name: "Idempotency-Key", value: "\(user)-\(written.count + 1)")
            request.body = .bytes(ByteBuffer(string: #"{"text": "\#(text)"}"#))
        }
        do {
            let sent = ContinuousClock.now
            let (response, body) = try await executeRetrying(request, client: client, options: options, tally: tally)
            latencies.append(sent.duration(to: .now))
            if response.status != (writing ? .created : .ok) {
                tally.errors.add(1, ordering: .relaxed)
                tally.note("\(user): status \(response.status.code): \(String(buffer: body))")
            } else if writing {
                written.append(text)
                if response.headers.first(name: "Idempotent-Replayed") == "true" {
                    tally.replayed.add(1, ordering: .relaxed)
                }
            } else {
                let listed = try decoder.decode([Note].self, from: Data(body.readableBytesView)).map(\.text)
                if listed != written {
                    tally.mismatches.add(1, ordering: .relaxed)
                    tally.note("\(user): listed \(listed.count) notes, wrote \(written.count): \(listed.suffix(2))")
                }
            }
        } catch {
            tally.errors.add(1, ordering: .relaxed)
            tally.note("\(user): \(error)")
        }
        tally.finished.add(1, ordering: .relaxed)
        writing.toggle()
    }
}

/// Sends `request`, and sends it again while it gets 503 or no answer, for up to `options.retryFor`, waiting a little
/// longer each time; returns the last answer, or throws the last failure.
func executeRetrying(
    _ request: HTTPClientRequest,
    client: HTTPClient,
    options: Options,
    tally: Tally
) async throws -> (HTTPClientResponse, ByteBuffer) {
    let giveUp = ContinuousClock.now + .milliseconds(Int(options.retryFor * 1_000))
    var pause = Duration.milliseconds(50)
    while true {
        let outcome: Result<(HTTPClientResponse, ByteBuffer), any Error>
        let sent = ContinuousClock.now
        do {
            let response = try await client.execute(request, timeout: .seconds(10))
            outcome = .success((response, try await response.body.collect(upTo: 16 * 1_024 * 1_024)))
        } catch {
            outcome = .failure(error)
        }
        tally.attempted(request, sent: sent, outcome: describe(outcome))
        switch outcome {
        case .success(let answer) where answer.0.status != .serviceUnavailable: return answer
        case .success: tally.unavailable.add(1, ordering: .relaxed)
        case .failure: tally.unanswered.add(1, ordering: .relaxed)
        }
        if ContinuousClock.now + pause > giveUp { return try outcome.get() }
        tally.retries.add(1, ordering: .relaxed)
        try await Task.sleep(for: pause)
        pause = min(pause * 2, .seconds(1))
    }
}

/// An attempt's answer, as its status and the start of its body, or its failure.
func describe(_ outcome: Result<(HTTPClientResponse, ByteBuffer), any Error>) -> String {
    switch outcome {
    case .success(let (response, body)): "\(response.status.code) \(String(buffer: body).prefix(160))"
    case .failure(let error): "\(error)"
    }
}

/// Reads `user`'s notes once more and checks them against what it wrote, count and content.
func verifyNotes(client: HTTPClient, options: Options, user: String, wrote: [String], tally: Tally) async {
    var request = HTTPClientRequest(url: "http://\(options.host):\(options.port)/notes")
    request.headers.add(name: "X-User", value: user)
    do {
        let (response, body) = try await executeRetrying(request, client: client, options: options, tally: tally)
        guard response.status == .ok else {
            tally.errors.add(1, ordering: .relaxed)
            tally.note("\(user), at the end: status \(response.status.code): \(String(buffer: body))")
            return
        }
        let listed = try JSONDecoder().decode([Note].self, from: Data(body.readableBytesView)).map(\.text)
        if listed != wrote {
            tally.mismatches.add(1, ordering: .relaxed)
            tally.note("\(user), at the end: \(listed.count) notes stored, \(wrote.count) written")
        }
    } catch {
        tally.errors.add(1, ordering: .relaxed)
        tally.note("\(user), at the end: \(error)")
    }
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
    var latencies: [Duration] = []
    defer { tally.add(latencies) }
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
            let sent = ContinuousClock.now
            let response: HTTPClientResponse
            let body: ByteBuffer
            do {
                response = try await client.execute(request, timeout: .seconds(30))
                body = try await response.body.collect(upTo: 64 * 1_024)
            } catch {
                tally.attempted(request, sent: sent, outcome: "\(error)")
                throw error
            }
            latencies.append(sent.duration(to: .now))
            tally.attempted(request, sent: sent, outcome: "\(response.status.code)")
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
        let run = "lc\(String(UInt32.random(in: .min ... .max), radix: 16))"
        let amount = options.seconds.map { "for \($0) s" } ?? "\(options.requests) requests"
        if options.notes {
            print(
                "load-check: POST and GET http://\(options.host):\(options.port)/notes, \(amount), "
                    + "\(options.connections) connections, each a user of its own writing and reading its notes"
            )
        } else {
            print(
                "load-check: GET http://\(options.host):\(options.port)/whoami, \(amount), "
                    + "\(options.connections) connections, a random user and its own request id per request"
            )
        }

        let clock = ContinuousClock()
        let start = clock.now
        let deadline = options.seconds.map { start + .milliseconds(Int($0 * 1_000)) }
        let written = await withTaskGroup(of: (String, [String]).self) { group in
            for connection in 0..<options.connections {
                group.addTask {
                    guard options.notes else {
                        await runConnection(
                            client: client,
                            options: options,
                            run: run,
                            deadline: deadline,
                            tally: tally
                        )
                        return ("", [])
                    }
                    let user = "\(run)-\(connection)"
                    let notes = await runNotesConnection(
                        client: client,
                        options: options,
                        user: user,
                        deadline: deadline,
                        tally: tally
                    )
                    return (user, notes)
                }
            }
            var written: [String: [String]] = [:]
            for await (user, notes) in group where !user.isEmpty { written[user] = notes }
            return written
        }
        let elapsed = start.duration(to: clock.now)
        if options.notes {
            await withTaskGroup(of: Void.self) { group in
                for (user, notes) in written {
                    group.addTask {
                        await verifyNotes(client: client, options: options, user: user, wrote: notes, tally: tally)
                    }
                }
            }
            print("users: \(written.count)")
            print("retries: \(tally.retries.load(ordering: .relaxed))")
            print("unavailable: \(tally.unavailable.load(ordering: .relaxed))")
            print("unanswered: \(tally.unanswered.load(ordering: .relaxed))")
            print("replayed: \(tally.replayed.load(ordering: .relaxed))")
            print("written: \(written.values.reduce(0) { $0 + $1.count })")
            print("run: \(run)")
            if let path = options.written {
                // Sorted byte by byte, as `LC_ALL=C sort` sorts, so that a script can compare it with the database's
                // rows sorted the same way. The order of each user's notes was checked already, through the API.
                let lines = written.flatMap { user, notes in notes.map { "\(user)\t\($0)\n" } }
                    .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                try lines.joined().write(toFile: path, atomically: true, encoding: .utf8)
            }
        }
        try await client.shutdown()

        let seconds = elapsed.milliseconds / 1_000
        let finished = tally.finished.load(ordering: .relaxed)
        let errors = tally.errors.load(ordering: .relaxed)
        let mismatches = tally.mismatches.load(ordering: .relaxed)
        print("requests: \(finished)")
        print("errors: \(errors)")
        print("mismatches: \(mismatches)")
        print("elapsed: \(String(format: "%.2f", seconds)) s")
        print("requests/s: \(Int((Double(finished) / seconds).rounded()))")
        print("p50: \(String(format: "%.2f", tally.percentile(0.5))) ms")
        print("p99: \(String(format: "%.2f", tally.percentile(0.99))) ms")
        print("slowest: \(String(format: "%.2f", tally.slowestAttempt)) ms")
        print("slowest attempt: \(tally.slowestDescription)")
        for problem in tally.problems {
            print("  \(problem)")
        }
        if errors > 0 || mismatches > 0 || finished == 0 {
            print("load-check: FAILED")
            exit(1)
        }
        if let limit = options.slowestLimit, tally.slowestAttempt > limit * 1_000 {
            print(
                "load-check: FAILED, an attempt took \(String(format: "%.2f", tally.slowestAttempt)) ms, over \(limit) s"
            )
            exit(1)
        }
        if options.notes {
            print("load-check: OK, every list, and every user's notes at the end, were exactly what that user wrote")
        } else {
            print("load-check: OK, every response named its own request's user and id")
        }
    }
}

extension Duration {
    /// The duration in milliseconds.
    var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
