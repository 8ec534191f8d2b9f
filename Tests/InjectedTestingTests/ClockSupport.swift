import Dispatch
import Synchronization

/// Runs every job of the tasks that prefer it on one queue, one job at a time.
///
/// A task that a test clock wakes runs on until it next suspends before the clock's advance goes on, when both prefer
/// this executor; so what the woken code did is settled by the time the advance returns, and a test can check the
/// order of wake-ups without a race.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class SerialTaskExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "SerialTaskExecutor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// Runs `body`, and the child tasks it starts, one job at a time on a serial executor.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
func serially(_ body: () async throws -> Void) async rethrows {
    try await withTaskExecutorPreference(SerialTaskExecutor(), operation: body)
}

/// What woken tasks recorded, in the order they recorded it.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class Log<Entry: Sendable>: Sendable {
    private let storage = Mutex<[Entry]>([])

    func append(_ entry: Entry) {
        storage.withLock { $0.append(entry) }
    }

    var entries: [Entry] { storage.withLock { $0 } }
}
