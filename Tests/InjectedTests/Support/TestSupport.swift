import Foundation
import Injected
import Testing

/// A counter that many threads can bump, for "built exactly once" checks.
final class Counter: @unchecked Sendable {
    // `@unchecked Sendable`: `count` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    func increment() {
        add(1)
    }

    func add(_ amount: Int) {
        lock.withLock { count += amount }
    }
}

/// An object with identity, so tests can tell instances apart.
final class Instance: Sendable {
    let label: String

    init(_ label: String = "") {
        self.label = label
    }
}

/// Runs `body` on `count` new threads, released together once all of them exist, and waits for every thread.
///
/// - Returns: `true` if every thread finished within `timeout` seconds; `false` means something hung.
func runOnThreads(_ count: Int, timeout: TimeInterval = 60, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
    let ready = DispatchGroup()
    let done = DispatchGroup()
    let start = DispatchSemaphore(value: 0)
    for index in 0..<count {
        ready.enter()
        done.enter()
        Thread {
            ready.leave()
            start.wait()
            body(index)
            done.leave()
        }.start()
    }
    ready.wait()
    for _ in 0..<count { start.signal() }
    return done.wait(timeout: .now() + timeout) == .success
}

/// Runs `body` in a fresh scope, so a test sees no global override and has its own cache of `.cached` values.
func inFreshScope<R>(_ body: () throws -> R) rethrows -> R {
    try withInjectedValues(fresh: true, { _ in }, operation: body)
}

/// Runs `body` in a fresh scope, so a test sees no global override and has its own cache of `.cached` values.
func inFreshScope<R>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: () async throws -> R
) async rethrows -> R {
    try await withInjectedValues(fresh: true, { _ in }, operation: body)
}

/// What a child process wrote to standard error, as text.
func standardError(of result: ExitTest.Result?) -> String {
    String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// A gate that one task opens and others wait for.
actor AsyncGate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

/// Strings recorded from any thread: reports, or what a deinit read.
final class StringLog: @unchecked Sendable {
    // `@unchecked Sendable`: `stored` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var stored: [String] = []

    var entries: [String] { lock.withLock { stored } }

    @Sendable func append(_ entry: String) {
        lock.withLock { stored.append(entry) }
    }

    /// Whether an entry is recorded within five seconds.
    func eventuallyHasOne() async -> Bool {
        for _ in 0..<5_000 {
            if !entries.isEmpty { return true }
            try? await Task.sleep(nanoseconds: 1_000_000)
        }
        return !entries.isEmpty
    }
}
