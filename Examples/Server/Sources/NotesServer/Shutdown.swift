import Foundation
import Logging
import ServiceLifecycle

/// Ends the process a bounded time after its graceful shutdown begins, whatever is still running.
///
/// The service group lets requests in flight finish, and then cancels them; but a task that ignores cancellation
/// (a query waiting on a connection that PostgreSQL dropped, in PostgresNIO 1.33.2) would keep the group, and the
/// process, alive without end. Every request is answered within its deadline (``DeadlineResponder``), so what remains
/// then is work already abandoned: once `bound` has passed since SIGTERM or SIGINT, this service ends the process
/// with `exitCode`, from a thread of its own, which nothing in the group can hold up.
///
/// Given the requests in flight, it answers those still running 503 at `answering` after the signal, before the
/// group cancels the server and closes their connections (``InFlightRequests``): a request whose deadline is longer
/// than the shutdown lets it run is answered rather than dropped.
public struct ShutdownBound: Service {
    /// How long after the graceful shutdown begins the process ends at the latest.
    public let bound: Duration
    /// The status the process exits with when the bound is reached.
    public let exitCode: Int32
    /// The requests in flight, and how long after the graceful shutdown begins those still running are answered.
    public let inFlight: (requests: InFlightRequests, answering: Duration)?
    private let logger: Logger

    /// Makes the service.
    ///
    /// - Parameters:
    ///   - bound: How long after the graceful shutdown begins the process ends at the latest.
    ///   - exitCode: The status the process exits with if the bound is reached.
    ///   - inFlight: The requests in flight, and how long after the graceful shutdown begins those still running are
    ///     answered 503; `nil` to leave them to the group.
    ///   - logger: Where to say so.
    public init(
        bound: Duration,
        exitCode: Int32 = 1,
        inFlight: (requests: InFlightRequests, answering: Duration)? = nil,
        logger: Logger
    ) {
        self.bound = bound
        self.exitCode = exitCode
        self.inFlight = inFlight
        self.logger = logger
    }

    /// Waits for the graceful shutdown, then starts the clock that ends the process.
    public func run() async throws {
        // Cancelled rather than shut down gracefully: the group is ending by itself, with nothing to bound.
        guard (try? await gracefulShutdown()) != nil else { return }
        let (bound, exitCode, logger) = (bound, exitCode, logger)
        if let (requests, answering) = inFlight {
            Thread {
                Thread.sleep(forTimeInterval: answering.inSeconds)
                let count = requests.count
                if count > 0 { logger.warning("answering the \(count) requests still running 503, as shut down") }
                requests.abandonAll()
            }.start()
        }
        Thread {
            Thread.sleep(forTimeInterval: bound.inSeconds)
            logger.warning("the graceful shutdown took longer than \(bound); ending the process")
            exit(exitCode)
        }.start()
    }
}
