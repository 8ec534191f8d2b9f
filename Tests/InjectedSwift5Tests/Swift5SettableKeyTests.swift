import Foundation
import Injected
import Testing

/// The article's keys, declared as its copies declare them in Swift 5 mode, written both ways in the order a real
/// project's test classes write them.
///
/// Each sequence writes the global store, so it runs in a child process of its own (an exit test), away from the
/// tests in other targets that write and reset the global store at the same time. A step that goes wrong ends the
/// child with the step's number as its exit code.
@Suite("Writing an article-style key both ways, in Swift 5 mode")
struct Swift5SettableKeyTests {
    @Test("a direct write after a write through the store is what readers see, and so is the reverse")
    func writesInEitherOrder() async {
        await #expect(processExitsWith: .success) {
            let leftOver = MockAppState()
            InjectedValues[\.appState] = leftOver
            leftOver.isActive = false
            let stub = MockAppState()
            AppStateKey.currentValue = stub
            check(Policy().appState === stub, step: 1)  // a direct write after a store write was not seen

            AppStateKey.currentValue = MockAppState()
            let mock = MockAppState()
            InjectedValues[\.appState] = mock
            check(Policy().appState === mock, step: 2)  // a store write after a direct write was not seen
            check(AppStateKey.currentValue === mock, step: 3)  // a store write did not assign currentValue
        }
    }

    @Test("changing the instance currentValue holds after a write through the store is what readers see")
    func mutationAfterStoreWrite() async {
        await #expect(processExitsWith: .success) {
            let original = AppStateKey.currentValue
            InjectedValues[\.appState] = MockAppState()
            AppStateKey.currentValue.isActive = false
            check(!Policy().appState.isActive, step: 4)  // a change to the instance currentValue holds was not seen
            InjectedValues.reset()
            check(AppStateKey.currentValue === original, step: 5)  // reset did not assign back the original
        }
    }

    @Test("8 threads × 20,000 mixed reads and global writes through the store never race, in Swift 5 mode")
    func concurrentReadsAndWrites() async {
        await #expect(processExitsWith: .success) {
            let group = DispatchGroup()
            for index in 0..<8 {
                group.enter()
                Thread {
                    for step in 0..<20_000 {
                        if step % 4 == 0 {
                            InjectedValues[\.appState] = MockAppState()
                        } else {
                            _ = Policy().appState.isActive
                        }
                    }
                    _ = index
                    group.leave()
                }.start()
            }
            // A reader racing a writer may read a released instance, which crashes the child, or, under
            // ThreadSanitizer, ends it with a report; a deadlock ends it here.
            check(group.wait(timeout: .now() + 120) == .success, step: 6)  // the threads did not finish
        }
    }
}

/// Ends the child process with `step` as its exit code unless `condition` holds, so that a failure names the step
/// that went wrong: the parent's expectation then reports `.exitCode(step)`.
private func check(_ condition: Bool, step: Int32) {
    if !condition { exit(step) }
}

private class MockAppState {
    var isActive = true
}

private struct Policy {
    @Injected(\.appState) var appState: MockAppState
}

private struct AppStateKey: InjectionKey {
    static var currentValue = MockAppState()
}

extension InjectedValues {
    fileprivate var appState: MockAppState {
        get { Self[AppStateKey.self] }
        set { Self[AppStateKey.self] = newValue }
    }
}
