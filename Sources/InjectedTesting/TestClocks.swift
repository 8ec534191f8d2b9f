// Two clocks for tests of code that waits: `TestClock`, whose time moves only when the test advances it, and
// `ImmediateClock`, whose sleeps return at once. Inject either where the code reads an `any Clock<Duration>`.
//
// Like InjectedTesting.swift, this file can be copied into a test target; it imports only Foundation, for its lock.
// Its declarations say `nonisolated`, so that it compiles in a test target whose default isolation is the main actor.

import Foundation

/// A clock whose time moves only when the test advances it, waking the tasks that sleep on it in deadline order.
///
/// Inject it where the code under test reads an `any Clock<Duration>`, start the code, and move the time forward
/// with ``advance(by:)`` or ``advance(to:)``. A sleep returns when the clock reaches its deadline, and not before,
/// however long the test takes in real time:
///
/// ```swift
/// let clock = TestClock()
/// let search = withInjectedValues { $0.clock = clock } operation: { SearchModel() }
/// let searching = search.type("swift")            // a task that waits out a 300 ms debounce, then searches
/// await clock.waitForSleepers()                    // the task is waiting
/// await clock.advance(by: .milliseconds(300))      // the wait ends
/// await searching.value                            // and the search has run
/// ```
///
/// The clock starts at ``Instant/zero``. An advance wakes each sleeper whose deadline it passes, earliest first
/// (sleepers with the same deadline in the order they began to sleep), with ``now`` at that sleeper's deadline, and
/// waits until the sleeper's task runs again before it wakes the next. A sleeper that sleeps again during the advance,
/// as a loop does, is woken again if its new deadline is within the advance too. A sleep whose deadline has passed
/// returns at once; a sleep cancelled before its deadline throws `CancellationError`.
///
/// > Important: What a woken task does after its sleep runs in parallel, with the other woken tasks and with the test.
/// > To check what it did, wait for it: await its task, or, for code that sleeps again, as a loop does, call
/// > ``waitForSleepers(_:)``. Call ``waitForSleepers(_:)`` before advancing, too, when the code under test starts in a
/// > task of its own: a sleep that begins after the advance is measured from the time the advance left.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public nonisolated final class TestClock: Clock, Sendable {
    /// A point in a test clock's time: how long after the clock's start it is.
    ///
    /// Instants hold nothing but their ``offset``, so a test can write down the instants it expects without asking
    /// the clock: `.zero.advanced(by: .seconds(3))`.
    public struct Instant: InstantProtocol, Sendable {
        /// The time since the clock started.
        ///
        /// A test can check it directly: `#expect(clock.now.offset == .seconds(3))`.
        public let offset: Duration

        /// The instant `offset` after the clock's start.
        ///
        /// It names a deadline to advance to: `await clock.advance(to: TestClock.Instant(offset: .seconds(5)))`.
        ///
        /// - Parameter offset: The time since the clock started.
        public init(offset: Duration) {
            self.offset = offset
        }

        /// The instant a clock starts at.
        ///
        /// Every test clock and immediate clock starts there, so `.zero.advanced(by: .seconds(3))` is three seconds
        /// into a test.
        public static var zero: Instant { Instant(offset: .zero) }

        /// The instant `duration` after this one.
        ///
        /// - Parameter duration: How far to move on; negative to move back.
        /// - Returns: The later, or earlier, instant.
        public func advanced(by duration: Duration) -> Instant {
            Instant(offset: offset + duration)
        }

        /// The time from this instant to `other`: positive when `other` is later.
        ///
        /// - Parameter other: The instant to measure to.
        /// - Returns: The time between the two.
        public func duration(to other: Instant) -> Duration {
            other.offset - offset
        }

        /// Whether `lhs` comes before `rhs`.
        ///
        /// - Parameters:
        ///   - lhs: An instant.
        ///   - rhs: Another instant.
        /// - Returns: `true` when `lhs` is earlier.
        public static func < (lhs: Instant, rhs: Instant) -> Bool {
            lhs.offset < rhs.offset
        }
    }

    /// A task asleep on the clock.
    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        /// Resumed with the advance's acknowledgement to send once the sleeper runs again, or with an error.
        let wake: CheckedContinuation<CheckedContinuation<Void, Never>?, any Error>
    }

    /// A test waiting for a number of sleepers.
    private struct Waiter {
        let id: UInt64
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var now = Instant.zero
        var sleepers: [Sleeper] = []
        var waiters: [Waiter] = []
        var lastID: UInt64 = 0

        mutating func nextID() -> UInt64 {
            lastID += 1
            return lastID
        }

        /// Takes out the waiters that enough sleepers satisfy now, to be resumed outside the lock.
        mutating func satisfiedWaiters() -> [Waiter] {
            let satisfied = waiters.filter { $0.count <= sleepers.count }
            waiters.removeAll { $0.count <= sleepers.count }
            return satisfied
        }
    }

    private let state = LockedState(State())

    /// A clock at ``Instant/zero``, with no one asleep on it.
    ///
    /// Make one in each test, so that tests running in parallel never move each other's time.
    public init() {}

    /// The clock's time: its start, moved on by every advance so far.
    ///
    /// Only an advance moves it: to each woken sleeper's deadline in turn, then to where the advance ends.
    public var now: Instant { state.withLock { $0.now } }

    /// The smallest step the clock measures.
    ///
    /// Zero: the clock has no tick of its own, and moves exactly as far as a test advances it.
    public var minimumResolution: Duration { .zero }

    /// How many tasks are asleep on the clock, waiting for it to reach their deadlines.
    ///
    /// A sleeper leaves the count when an advance wakes it or its task is cancelled. To wait until the count
    /// reaches a number, call ``waitForSleepers(_:)``.
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends the calling task until the clock reaches `deadline`, or throws when the task is cancelled first.
    ///
    /// A deadline the clock has already reached returns at once. Otherwise the task sleeps until an advance passes the
    /// deadline, however much real time goes by.
    ///
    /// - Parameters:
    ///   - deadline: The instant to wake at.
    ///   - tolerance: Ignored: the clock wakes each sleeper exactly at its deadline.
    /// - Throws: `CancellationError` when the task is cancelled before the clock reaches `deadline`; the sleep is then
    ///   forgotten, and no advance waits for it.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { $0.nextID() }
        let acknowledgement = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { wake in
                enum Outcome { case asleep, due, cancelled }
                // The cancellation flag is set before the handler below runs, and both take the lock: so either this
                // sees the flag, or the handler finds the sleeper that this added.
                let (outcome, waiters) = state.withLock { state -> (Outcome, [Waiter]) in
                    if Task.isCancelled { return (.cancelled, []) }
                    if deadline <= state.now { return (.due, []) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, wake: wake))
                    return (.asleep, state.satisfiedWaiters())
                }
                for waiter in waiters { waiter.continuation.resume() }
                switch outcome {
                case .asleep: break
                case .due: wake.resume(returning: nil)
                case .cancelled: wake.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.wake.resume(throwing: CancellationError())
        }
        // Running again: let the advance that woke this task go on to the next sleeper.
        acknowledgement?.resume()
    }

    /// Moves the clock's time forward by `duration`, waking, in deadline order, every task whose deadline it passes.
    ///
    /// Returns once each woken task has run again and had a moment to go on; see the type's discussion for what that
    /// does not cover.
    ///
    /// - Parameter duration: How far to move the time. Zero wakes the sleepers that are due now; a negative duration
    ///   wakes no one and leaves the time as it is.
    public func advance(by duration: Duration) async {
        await advance(to: now.advanced(by: duration))
    }

    /// Moves the clock's time forward to `deadline`, waking, in deadline order, every task whose deadline it passes.
    ///
    /// Returns once each woken task has run again and had a moment to go on; see the type's discussion for what that
    /// does not cover.
    ///
    /// - Parameter deadline: The time to move to. An instant the clock has passed wakes only the sleepers that are due
    ///   now, and leaves the time as it is: a test clock never goes back.
    public func advance(to deadline: Instant) async {
        await Self.letOtherTasksRun()
        while let sleeper = nextSleeper(dueBy: deadline) {
            await withCheckedContinuation { acknowledgement in
                sleeper.wake.resume(returning: acknowledgement)
            }
            await Self.letOtherTasksRun()
        }
    }

    /// Waits until at least `count` tasks are asleep on the clock.
    ///
    /// Call it before an advance that must wake code that is still on its way to sleep, and after one to wait for
    /// woken code that goes back to sleep, as a loop does:
    ///
    /// ```swift
    /// let refreshing = Task { await model.refreshEvery(.seconds(30)) }
    /// await clock.waitForSleepers()                // loaded once, and waiting
    /// await clock.advance(by: .seconds(30))
    /// await clock.waitForSleepers()                // loaded again, and waiting again
    /// ```
    ///
    /// It returns when the task that calls it is cancelled, too, so that a test's time limit can end it.
    ///
    /// - Parameter count: How many sleepers to wait for. The default is one.
    public func waitForSleepers(_ count: Int = 1) async {
        let id = state.withLock { $0.nextID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if Task.isCancelled || state.sleepers.count >= count { return true }
                    state.waiters.append(Waiter(id: id, count: count, continuation: continuation))
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume()
        }
    }

    /// Takes out the earliest sleeper due by `deadline`, moving the time to its deadline, or, when none is due, moves
    /// the time to `deadline` and returns `nil`.
    private func nextSleeper(dueBy deadline: Instant) -> Sleeper? {
        state.withLock { state in
            let earliest = state.sleepers.indices.min { a, b in
                (state.sleepers[a].deadline, state.sleepers[a].id) < (state.sleepers[b].deadline, state.sleepers[b].id)
            }
            guard let earliest, state.sleepers[earliest].deadline <= deadline else {
                state.now = max(state.now, deadline)
                return nil
            }
            let sleeper = state.sleepers.remove(at: earliest)
            state.now = max(state.now, sleeper.deadline)
            return sleeper
        }
    }

    /// Gives tasks that were just started or woken a chance to run up to their next suspension, such as a sleep.
    ///
    /// Nothing tells a clock when another task has suspended, so this only makes it likely; tests that need certainty
    /// use ``waitForSleepers(_:)`` or await the task.
    private static func letOtherTasksRun() async {
        for _ in 0..<20 { await Task.yield() }
    }
}

/// A clock whose sleeps return at once, moving its time on to their deadlines.
///
/// Inject it where the code under test waits on an `any Clock<Duration>` and the test cares what the code does, not
/// when: a retry, a debounce or a poll runs through its waits without taking any real time.
///
/// ```swift
/// let clock = ImmediateClock()
/// let search = withInjectedValues { $0.clock = clock } operation: { SearchModel() }
/// await search.type("swift").value                 // the debounce's wait returns at once
/// #expect(clock.now == .zero.advanced(by: .milliseconds(300)))
/// ```
///
/// The clock starts at ``TestClock/Instant/zero``. A sleep checks for cancellation, throwing `CancellationError` if
/// the task is cancelled, and otherwise moves ``now`` to its deadline, unless the time is already past it, and returns.
/// So the time is the latest deadline any task has slept until, and a task that sleeps in a loop sees it move by the
/// amount slept each time.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public nonisolated final class ImmediateClock: Clock, Sendable {
    /// A point in an immediate clock's time: how long after the clock's start it is.
    ///
    /// The type is a test clock's, so both clocks count from ``TestClock/Instant/zero`` and read alike in a test.
    public typealias Instant = TestClock.Instant

    private let time = LockedState(Instant.zero)

    /// A clock at ``TestClock/Instant/zero``.
    ///
    /// Make one in each test, so that each test's sleeps move only its own clock's time.
    public init() {}

    /// The clock's time: the latest deadline any task has slept until.
    ///
    /// Only sleeps move it, and never back.
    public var now: Instant { time.withLock { $0 } }

    /// The smallest step the clock measures.
    ///
    /// Zero: the clock has no tick of its own, and moves exactly to each deadline slept until.
    public var minimumResolution: Duration { .zero }

    /// Returns at once, after moving the clock's time on to `deadline`, unless the task is cancelled.
    ///
    /// - Parameters:
    ///   - deadline: The instant the caller would have woken at; the clock's time moves to it, unless it is past it.
    ///   - tolerance: Ignored.
    /// - Throws: `CancellationError` when the task is cancelled; the time then stays as it is.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        time.withLock { $0 = max($0, deadline) }
    }
}

/// A value that only one thread at a time reads or writes, behind a lock: the clocks' whole state.
///
/// `@unchecked Sendable` is safe because `value` is private and every access to it happens inside `withLock`, which
/// holds `lock` from before the access to after it; `Value` is `Sendable`, so what `withLock` returns may cross
/// threads. (`Synchronization.Mutex` says the same to the compiler, but only from macOS 15 and iOS 18 on.)
private nonisolated final class LockedState<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
