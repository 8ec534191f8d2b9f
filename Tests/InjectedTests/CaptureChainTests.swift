import Foundation
import Testing

@testable import Injected

/// A callback that reschedules itself by capturing again inside each run, as polling and retries do, holds one scope
/// however many hops it makes: no chain of scopes grows, so reads cost the same and memory stays flat.
///
/// What a read costs is the walk of its levels, so these tests count the levels rather than time reads, which on a
/// shared machine measures its load; the benchmarks time them.
@Suite("Chains of captures")
struct CaptureChainTests {
    @Test("150,000 hops of capturing inside a run keep the levels a read walks and memory within 50 MB of 10 hops")
    func chainsStayFlat() {
        let start = withInjectedValues {
            $0.chainSource = "polling"
        } operation: {
            InjectedValues.capture()
        }
        let early = hops(10, from: start)
        let residentBefore = residentBytes()
        let late = hops(150_000, from: early)
        let residentAfter = residentBytes()
        #expect(late.run { InjectedValues[\.chainSource] } == "polling")
        #expect(depth(of: late) <= depth(of: early), "a read walks \(depth(of: late)) levels after 150,010 hops")
        // Resident memory is the process's, which the suite's other tests, running beside this one, move too. Under
        // ThreadSanitizer, whose allocator and shadow memory are not an app's, they moved it by more than the bound
        // (56 MB in one CI run, where this test took 84 s, against 3 s alone); the levels a read walks still hold there.
        if !runsUnderThreadSanitizer {
            #expect(
                residentAfter - residentBefore < 50_000_000,
                "memory grew by \(residentAfter - residentBefore) bytes"
            )
        }
    }

    @Test("10,000 hops made inside another scope keep one scope, and read both scopes' overrides")
    func chainsInsideAnotherScopeStayFlat() {
        let start = withInjectedValues {
            $0.chainSource = "polling"
        } operation: {
            InjectedValues.capture()
        }
        withInjectedValues {
            $0.chainAttempt = 7
        } operation: {
            let early = hops(10, from: start)
            let late = hops(10_000, from: early)
            #expect(depth(of: late) == depth(of: early))
            #expect(late.run { InjectedValues[\.chainSource] } == "polling")
            #expect(late.run { InjectedValues[\.chainAttempt] } == 7)
        }
    }

    @Test("a capture made in a scope before its first write sees the writes made after it")
    func captureBeforeTheFirstWrite() {
        let captured = withInjectedValues { _ in
        } operation: {
            let captured = InjectedValues.capture()
            InjectedValues[\.chainAttempt] = 3
            // Read on another thread, as a callback would be, where only the capture carries the scope.
            let seen = Counter()
            _ = runOnThreads(1) { _ in
                for _ in 0..<captured.run({ InjectedValues[\.chainAttempt] }) { seen.increment() }
            }
            #expect(seen.value == 3)
            return captured
        }
        // Once the operation has returned, the scope keeps what its update closure set: nothing.
        #expect(captured.run { InjectedValues[\.chainAttempt] } == 0)
    }

    // Since core v5 a capture keeps, once its scope has ended, what was visible when it was made: the write.
    @Test("a capture made in a scope that wrote sees the write while the scope runs, and after it ended")
    func capturesInAWritingRun() {
        let start = withInjectedValues {
            $0.chainSource = "polling"
        } operation: {
            InjectedValues.capture()
        }
        let next = start.run {
            InjectedValues[\.chainAttempt] = 1
            let next = InjectedValues.capture()
            #expect(next.run { InjectedValues[\.chainAttempt] } == 1)
            return next
        }
        #expect(next.run { InjectedValues[\.chainAttempt] } == 1)
        #expect(next.run { InjectedValues[\.chainSource] } == "polling")
    }
}

/// Work that reschedules itself in a new task, and objects that make their successors from their own scope: each hop
/// holds one scope however many hops come before it.
@Suite("Chains of tasks and objects")
struct TaskAndObjectChainTests {
    @Test(
        "a poll that reschedules itself with Task {} keeps the levels a read walks flat over 4,000 hops",
        arguments: [false, true]
    )
    func pollingInNewTasksStaysFlat(reusingTheFirstCapture: Bool) async {
        let start = withInjectedValues {
            $0.chainSource = "polling"
        } operation: {
            InjectedValues.capture()
        }
        let early = await Poller(start: start, reusing: reusingTheFirstCapture).poll(hops: 10)
        let late = await Poller(start: start, reusing: reusingTheFirstCapture).poll(hops: 4_000)
        #expect(late.source == "polling")
        #expect(depth(of: late.capture) <= 4, "the last hop's scope is \(depth(of: late.capture)) scopes deep")
        #expect(depth(of: late.capture) <= depth(of: early.capture) + 1)
    }

    @Test("a retry loop whose every attempt writes in its run, 4,000 attempts, keeps its levels flat and frees them")
    func writingRetriesStayFlat() async {
        let early = await Retrier().retry(attempts: 10)
        let late = await Retrier().retry(attempts: 4_000)
        #expect(late.attempt == 4_000)
        #expect(late.previous == 3_999, "an attempt no longer reads the one before it")
        // Attempts whose tasks are still finishing keep their scopes running, so how many levels are live, and how many
        // values alive, depends on scheduling, a few more on a loaded machine; a chain that grew would hold thousands.
        #expect(
            late.depth <= early.depth + 12,
            "a read walks \(late.depth) levels after 4,000 attempts, \(early.depth) after 10"
        )
        #expect(late.alive <= early.alive + 12, "\(late.alive) attempts' values are still alive")
    }

    @Test("an object that makes its successor in a run of its own scope, 5,000 times, holds one scope")
    func successorsMadeInRunsStayFlat() {
        var attempt = withInjectedValues {
            $0.chainSource = "client"
        } operation: {
            Attempt()
        }
        for _ in 0..<10 { attempt = attempt.retry() }
        let early = depth(of: attempt.$source)
        for _ in 0..<5_000 { attempt = attempt.retry() }
        #expect(depth(of: attempt.$source) <= early)
        #expect(attempt.source == "client")
    }

    @Test("a model made from its predecessor's scope with from:, 5,000 times, holds one scope")
    func successorsMadeFromTheScopeStayFlat() {
        var attempt = withInjectedValues {
            $0.chainSource = "client"
        } operation: {
            Attempt()
        }
        for _ in 0..<10 { attempt = attempt.next() }
        let early = depth(of: attempt.$source)
        for _ in 0..<5_000 { attempt = attempt.next() }
        #expect(depth(of: attempt.$source) <= early)
        #expect(attempt.source == "client")
    }
}

/// An attempt at a request that makes the next one from its own scope, as retries do.
private struct Attempt: Sendable {
    @Injected(\.chainSource) var source

    func retry() -> Attempt {
        $source.run { Attempt() }
    }

    func next() -> Attempt {
        withInjectedValues(from: $source) { _ in
        } operation: {
            Attempt()
        }
    }
}

/// A poll that runs in a captured scope and reschedules itself in a new task, capturing again each time or reusing
/// the first capture.
private final class Poller: Sendable {
    let start: InjectedValues.CapturedScope
    let reusing: Bool

    init(start: InjectedValues.CapturedScope, reusing: Bool) {
        self.start = start
        self.reusing = reusing
    }

    /// What the last hop saw: its capture, and the source it read.
    struct LastHop: Sendable {
        let capture: InjectedValues.CapturedScope
        let source: String
    }

    func poll(hops: Int) async -> LastHop {
        await withCheckedContinuation { continuation in
            hop(start, remaining: hops, continuation)
        }
    }

    private func hop(
        _ scope: InjectedValues.CapturedScope,
        remaining: Int,
        _ continuation: CheckedContinuation<LastHop, Never>
    ) {
        Task {
            await scope.run {
                await Task.yield()
                let next = InjectedValues.capture()
                guard remaining > 0 else {
                    continuation.resume(returning: LastHop(capture: next, source: InjectedValues[\.chainSource]))
                    return
                }
                hop(reusing ? start : next, remaining: remaining - 1, continuation)
            }
        }
    }
}

/// Makes `count` hops: each runs in the last capture and captures again there, as a rescheduling callback does.
private func hops(_ count: Int, from start: InjectedValues.CapturedScope) -> InjectedValues.CapturedScope {
    var captured = start
    for _ in 0..<count {
        captured = captured.run { InjectedValues.capture() }
    }
    return captured
}

/// How many levels a captured scope's snapshot has.
private func depth(of captured: InjectedValues.CapturedScope) -> Int {
    var (count, level) = (0, captured.snapshot)
    while let current = level {
        count += 1
        level = current.next
    }
    return count
}

/// Whether ThreadSanitizer's runtime is in the process, as `swift test --sanitize=thread` links it.
private var runsUnderThreadSanitizer: Bool {
    #if canImport(Darwin)
    let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
    #else
    let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
    #endif
    return dlsym(everywhere, "__tsan_init") != nil
}

/// The process's resident memory, from `/proc/self/statm` (0 where it does not exist).
private func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

private enum ChainSourceKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum ChainAttemptKey: ReadOnlyInjectionKey {
    static let currentValue = 0
}

extension InjectedValues {
    fileprivate var chainSource: String {
        get { Self[ChainSourceKey.self] }
        set { Self[ChainSourceKey.self] = newValue }
    }

    fileprivate var chainAttempt: Int {
        get { Self[ChainAttemptKey.self] }
        set { Self[ChainAttemptKey.self] = newValue }
    }
}

/// Attempts that each start the next in a new task and a scope of their own, writing their number in their run.
private final class Retrier: Sendable {
    /// What the last attempt saw.
    struct Last: Sendable {
        let attempt: Int
        let previous: Int
        /// The levels a read walks there.
        let depth: Int
        let alive: Int
    }

    func retry(attempts: Int) async -> Last {
        await withInjectedValues {
            $0.chainSource = "client"
        } operation: {
            await withCheckedContinuation { continuation in
                attempt(1, last: attempts, continuation)
            }
        }
    }

    private func attempt(_ number: Int, last: Int, _ continuation: CheckedContinuation<Last, Never>) {
        Task {
            withInjectedValues { _ in
            } operation: {
                let previous = InjectedValues[\.chainAttempt]
                InjectedValues[\.chainAttempt] = number
                InjectedValues[\.chainMarker] = AttemptMarker()
                guard number < last else {
                    continuation.resume(
                        returning: Last(
                            attempt: number,
                            previous: previous,
                            depth: depth(of: InjectedValues.capture()),
                            alive: AttemptMarker.alive.value
                        )
                    )
                    return
                }
                attempt(number + 1, last: last, continuation)
            }
        }
    }
}

/// A value each attempt writes, which counts the instances alive.
private final class AttemptMarker: Sendable {
    static let alive = Counter()

    init() {
        Self.alive.increment()
    }

    deinit {
        Self.alive.add(-1)
    }
}

private enum ChainMarkerKey: ReadOnlyInjectionKey {
    static var currentValue: AttemptMarker? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

extension InjectedValues {
    fileprivate var chainMarker: AttemptMarker? {
        get { Self[ChainMarkerKey.self] }
        set { Self[ChainMarkerKey.self] = newValue }
    }
}
