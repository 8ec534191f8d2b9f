import Injected
import Testing

/// The scopes a thread opens, other than roots, share that thread's scope lock.
///
/// That is safe only because no code holds two scopes' locks at once: a lookup that held one scope's lock while taking
/// the next one's would deadlock its own thread on the first chain of scopes it walked. Each test runs on threads of
/// its own under a watchdog, so such a deadlock fails the test instead of hanging it.
@Suite("Shared scope locks")
struct SharedScopeLockTests {
    @Test("a read walks 100 nested scopes opened on one thread, which share its lock, and finds the outermost override")
    func readsThroughNestedScopesOfOneThread() {
        let seen = Box<[Int]>([])
        let finished = runOnThreads(1, timeout: 20) { _ in
            inFreshScope {
                withInjectedValues {
                    write(slots[0], 7, in: &$0)
                    $0.depthMark = 7
                } operation: {
                    let property = Injected(\.depthMark)
                    nest(99) {
                        // Through the active run's scopes, and through the scopes down to the one a property made
                        // outside them remembers.
                        seen.value = [read(slots[0]), read(slots[1]), property.wrappedValue]
                    }
                }
            }
        }
        #expect(finished, "the walk did not finish within 20 seconds: it deadlocked on the thread's shared lock")
        #expect(seen.value == [7, -1, 7])
    }

    @Test("a captured scope run inside other scopes of the same thread reads both, in order")
    func capturedScopeInsideScopesOfOneThread() {
        let seen = Box<[Int]>([])
        let finished = runOnThreads(1, timeout: 20) { _ in
            inFreshScope {
                let captured = withInjectedValues {
                    write(slots[0], 1, in: &$0)
                    write(slots[1], 1, in: &$0)
                } operation: {
                    nest(20) { InjectedValues.capture() }
                }
                withInjectedValues {
                    write(slots[1], 2, in: &$0)
                    write(slots[2], 2, in: &$0)
                } operation: {
                    nest(20) {
                        // The reader's scopes come first, then the captured scope's.
                        seen.value = captured.run { [read(slots[0]), read(slots[1]), read(slots[2]), read(slots[3])] }
                    }
                }
            }
        }
        #expect(finished, "the reads did not finish within 20 seconds: they deadlocked on the thread's shared lock")
        #expect(seen.value == [1, 2, 2, -1])
    }

    @Test("64 scopes opened on one thread, run from 8 threads × 1,000 times at once, each see only their own values")
    func scopesOfOneThreadUsedFromMany() {
        inFreshScope {
            // Opened one after another on this thread, so all 64 share its scope lock.
            let scopes = (0..<64).map { index in
                withInjectedValues {
                    write(slots[0], index, in: &$0)
                } operation: {
                    InjectedValues.capture()
                }
            }
            let mismatches = Counter()
            let finished = runOnThreads(8, timeout: 60) { thread in
                for operation in 0..<1_000 {
                    let index = (thread * 7 + operation) % scopes.count
                    let mine = thread * 10_000 + operation
                    scopes[index].run {
                        // Each run writes in a scope of its own, nested in the shared one.
                        write(slots[1], mine)
                        withInjectedValues {
                            write(slots[2], operation, in: &$0)
                        } operation: {
                            if read(slots[0]) != index || read(slots[1]) != mine || read(slots[2]) != operation {
                                mismatches.increment()
                            }
                        }
                    }
                }
            }
            #expect(finished, "a thread did not finish within 60 seconds: the shared lock deadlocked")
            #expect(mismatches.value == 0)
            // The runs' writes ended with them: each scope still holds only what its update closure set.
            let kept = Counter()
            let checked = runOnThreads(1, timeout: 20) { _ in
                for index in scopes.indices where scopes[index].run({ read(slots[0]) == index && read(slots[1]) == -1 })
                {
                    kept.increment()
                }
            }
            #expect(checked, "the check did not finish within 20 seconds: the shared lock deadlocked")
            #expect(kept.value == scopes.count)
        }
    }
}

/// Runs `body` inside `depth` scopes nested one in another, each overriding one slot that `body` does not read.
private func nest<R>(_ depth: Int, _ body: () -> R) -> R {
    guard depth > 0 else { return body() }
    return withInjectedValues {
        write(slots[11], depth, in: &$0)
    } operation: {
        nest(depth - 1, body)
    }
}

private enum DepthMarkKey: ReadOnlyInjectionKey {
    static var currentValue: Int { -1 }
}

extension InjectedValues {
    fileprivate var depthMark: Int {
        get { Self[DepthMarkKey.self] }
        set { Self[DepthMarkKey.self] = newValue }
    }
}

/// A value that a test's thread sets and the test reads once the thread is done.
private final class Box<Value: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: written by one thread, and read only after `runOnThreads` has waited for it.
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}
