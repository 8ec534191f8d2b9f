import Foundation
import Hummingbird
import Injected
import PostgresNIO
import Synchronization

/// Answers every request within a deadline, whatever the work behind it does.
///
/// A request's work (the middleware and its route, down to the database) runs in a task of its own, beside a timer.
/// If the work ends first, its answer is the request's. If the timer does, the request is answered 503 at once, and
/// its work is abandoned: cancelled, and the database connections it holds closed, so that a query that waits without
/// end on a connection PostgreSQL has dropped fails, and a fresh connection is opened in its place. The work is
/// not waited for: a call that ignores cancellation cannot hold its request, or the server's shutdown, past the
/// deadline.
///
/// The body of a request is read here, before its work starts, up to the limit of ``NotesController/maximumBodySize``
/// (and within the deadline, or 408), so that an abandoned task never reads from the connection that the server goes
/// on reading. The `/bench` routes, which touch no database, are served as they come, so the comparison measures the
/// scope alone.
struct DeadlineResponder<Inner: HTTPResponder>: HTTPResponder where Inner.Context: RequestContext {
    typealias Context = Inner.Context

    let inner: Inner
    let deadline: Duration
    /// The requests in flight, which a shutdown answers before the server closes their connections.
    let inFlight: InFlightRequests

    func respond(to request: Request, context: Context) async throws -> Response {
        if request.uri.path.hasPrefix("/bench/") { return try await inner.respond(to: request, context: context) }
        // The id is fixed here, so that the 503 names the id that the request's scope and its log use.
        let id = request.headers[.requestID] ?? RequestIDs.next()
        var head = request.head
        head.headerFields[.requestID] = id
        var request = Request(head: head, body: request.body)
        let started = ContinuousClock.now
        do {
            try await Self.readBody(of: &request, within: deadline, id: id)
        } catch let error as HTTPError {
            // Outside the router, which turns the errors of routes into responses: this one is turned here.
            return try error.response(from: request, context: context)
        }

        let watch = RequestWatch()
        guard inFlight.enter(watch) else {
            return try HTTPError(
                .serviceUnavailable,
                headers: [.requestID: id, .connection: "close"],
                message: "The server is shutting down and did not start the request: nothing was saved. Try again."
            ).response(from: request, context: context)
        }
        defer { inFlight.leave(watch) }
        let work = withInjectedValues {
            $0.requestWatch = watch
        } operation: {
            Task { [inner, request] in try await inner.respond(to: request, context: context) }
        }
        let remaining = deadline - (ContinuousClock.now - started)
        let outcome = await withTaskCancellationHandler {
            await watch.race(work, within: remaining)
        } onCancel: {
            work.cancel()
        }
        switch outcome {
        case .finished(let result):
            return try result.get()
        case .expired(let phase, let stopping):
            work.cancel()
            return try HTTPError(
                .serviceUnavailable,
                headers: stopping ? [.requestID: id, .connection: "close"] : [.requestID: id],
                message: Self.message(after: deadline, method: request.method, phase: phase, stopping: stopping)
            ).response(from: request, context: context)
        }
    }

    /// What a 503 for a request past its deadline, or abandoned by a shutdown (`stopping`), says; for a write,
    /// whether it was saved, as far as is known.
    static func message(
        after deadline: Duration,
        method: HTTPRequest.Method,
        phase: RequestWatch.Phase,
        stopping: Bool = false
    ) -> String {
        let late =
            stopping
            ? "The server is shutting down and abandoned the request before it finished"
            : "The request did not finish within \(deadline.formattedSeconds) and was abandoned"
        if [.get, .head].contains(method) {
            return "\(late)\(stopping ? "" : "; the database did not answer in time"). Try again shortly."
        }
        switch phase {
        case .beforeCommit:
            return "\(late) before its transaction committed: nothing was saved. Try again shortly."
        case .committing, .unknown:
            return "\(late) while it was saving: the outcome is unknown, the note may or may not have been saved. "
                + "Send it again with the same Idempotency-Key, or list the notes (GET /notes) before sending it again."
        }
    }

    /// Reads the body of a request that has one into the request, up to the limit and within `deadline`.
    ///
    /// A body over the limit is kept as far as it was read, a little over the limit, for the route to refuse with
    /// 413; a body declared over the limit is not read at all.
    private static func readBody(of request: inout Request, within deadline: Duration, id: String) async throws {
        guard ![.get, .head].contains(request.method) else { return }
        let limit = NotesController.maximumBodySize
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit { return }
        let body = request.body
        let read: ByteBuffer? = try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask {
                var buffer = ByteBuffer()
                for try await part in body {
                    buffer.writeImmutableBuffer(part)
                    if buffer.readableBytes > limit { break }
                }
                return buffer
            }
            group.addTask {
                try await Task.sleep(for: deadline)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let read else {
            throw HTTPError(
                .requestTimeout,
                headers: [.requestID: id, .connection: "close"],
                message: "The request's body did not arrive within \(deadline.formattedSeconds)."
            )
        }
        request.body = .init(buffer: read)
    }
}

/// What an abandoned request's work was doing, and the database connections to close when it is abandoned.
public final class RequestWatch: Sendable {
    /// How far a request's writes had gone when its deadline passed.
    public enum Phase: Sendable, Equatable {
        /// No database transaction was seen: the outcome of a write is unknown.
        case unknown
        /// A transaction was open, and its `COMMIT` not yet sent: closing its connection rolls it back.
        case beforeCommit
        /// The `COMMIT` had been sent: it may have been applied.
        case committing
    }

    /// How a request ended: its work finished, or its deadline passed first, or the server's shutdown (`stopping`).
    enum Outcome {
        case finished(Result<Response, any Error>)
        case expired(Phase, stopping: Bool)
    }

    private struct State {
        var phase = Phase.unknown
        var expired = false
        var connections: [ObjectIdentifier: PostgresConnection] = [:]
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
    }

    private let state = Mutex(State())

    /// Makes a watch for one request.
    public init() {}

    /// Waits for `work`, or for `duration`, whichever ends first; when the time ends first, expires the watch.
    func race(_ work: Task<Response, any Error>, within duration: Duration) async -> Outcome {
        let timer = Task {
            try? await Task.sleep(for: duration)
            if !Task.isCancelled { self.expire() }
        }
        let watcher = Task {
            let result = await work.result
            self.finish(.finished(result))
        }
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let ready = state.withLock { state -> Outcome? in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        timer.cancel()
        _ = watcher
        return outcome
    }

    private func finish(_ outcome: Outcome) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: outcome)
    }

    /// Ends the request's wait: marks the watch expired, closes the connections its work holds, and answers; at its
    /// deadline, or, `stopping`, when the server shuts down.
    func expire(stopping: Bool = false) {
        let (phase, connections) = state.withLock { state -> (Phase, [PostgresConnection]) in
            guard state.outcome == nil else { return (state.phase, []) }
            state.expired = true
            defer { state.connections = [:] }
            return (state.phase, Array(state.connections.values))
        }
        for connection in connections { connection.close().whenComplete { _ in } }
        finish(.expired(phase, stopping: stopping))
    }

    /// Records that `connection` serves the request, so that it is closed if the request is abandoned.
    ///
    /// - Returns: `false` if the request has already been abandoned: the caller must not use the connection.
    func use(_ connection: PostgresConnection) -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.connections[ObjectIdentifier(connection)] = connection
            return true
        }
    }

    /// Records that `connection` no longer serves the request.
    ///
    /// - Returns: `false` if the request was abandoned while it held the connection, which its watch has closed or is
    ///   closing.
    @discardableResult
    func release(_ connection: PostgresConnection) -> Bool {
        state.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(connection)) != nil }
    }

    /// Records that a transaction has begun.
    func beginTransaction() {
        state.withLock { state in
            if !state.expired { state.phase = .beforeCommit }
        }
    }

    /// Records that the transaction's `COMMIT` is about to be sent, unless the request has been abandoned.
    ///
    /// - Returns: `false` if the request has been abandoned: the caller must not commit.
    func beginCommit() -> Bool {
        state.withLock { state in
            guard !state.expired else { return false }
            state.phase = .committing
            return true
        }
    }
}

/// The requests in flight, so that a shutdown can answer those still running before the server closes their
/// connections.
///
/// A request whose deadline is longer than the shutdown lets it run (`NOTES_REQUEST_DEADLINE=60`) would otherwise
/// lose its connection unanswered when the process ends. ``ShutdownBound`` calls ``abandonAll()`` shortly before the
/// service group cancels the server: every request still running is answered 503, saying so, and its work abandoned
/// as at its deadline; a request that comes after is answered 503 without starting.
public final class InFlightRequests: Sendable {
    private let state = Mutex((watches: [ObjectIdentifier: RequestWatch](), stopping: false))

    /// Makes an empty set.
    public init() {}

    /// Counts a request in: `false` once the server is shutting down.
    func enter(_ watch: RequestWatch) -> Bool {
        state.withLock { state in
            guard !state.stopping else { return false }
            state.watches[ObjectIdentifier(watch)] = watch
            return true
        }
    }

    /// Counts a request out.
    func leave(_ watch: RequestWatch) {
        _ = state.withLock { $0.watches.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// The number of requests in flight.
    public var count: Int { state.withLock { $0.watches.count } }

    /// Answers every request in flight 503, as abandoned by the shutdown, and every request after it without starting.
    public func abandonAll() {
        let watches = state.withLock { state in
            state.stopping = true
            return Array(state.watches.values)
        }
        for watch in watches { watch.expire(stopping: true) }
    }
}

/// The request was abandoned at its deadline, before its work used the database.
public struct RequestAbandoned: Error, CustomStringConvertible {
    /// The message.
    public var description: String { "the request passed its deadline and was abandoned" }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var inSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// The duration in seconds, as "5 s" or "0.5 s".
    var formattedSeconds: String {
        inSeconds == inSeconds.rounded() ? "\(Int(inSeconds)) s" : "\(inSeconds) s"
    }
}
