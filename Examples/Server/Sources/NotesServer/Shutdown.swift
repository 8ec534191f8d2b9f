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
public struct ShutdownBound: Service {
    /// How long after the graceful shutdown begins the process ends at the latest.
    public let bound: Duration
    /// The status the process exits with when the bound is reached.
    public let exitCode: Int32
    private let logger: Logger

    /// Makes the service.
    ///
    /// - Parameters:
    ///   - bound: How long after the graceful shutdown begins the process ends at the latest.
    ///   - exitCode: The status the process exits with if the bound is reached.
    ///   - logger: Where to say so.
    public init(bound: Duration, exitCode: Int32 = 1, logger: Logger) {
        self.bound = bound
        self.exitCode = exitCode
        self.logger = logger
    }

    /// Waits for the graceful shutdown, then starts the clock that ends the process.
    public func run() async throws {
        // Cancelled rather than shut down gracefully: the group is ending by itself, with nothing to bound.
        guard (try? await gracefulShutdown()) != nil else { return }
        let (bound, exitCode, logger) = (bound, exitCode, logger)
        Thread {
            Thread.sleep(
                forTimeInterval: Double(bound.components.seconds) + Double(bound.components.attoseconds) / 1e18
            )
            logger.warning("the graceful shutdown took longer than \(bound); ending the process")
            exit(exitCode)
        }.start()
    }
}
