import Foundation
import Injected
import Testing

/// What a write made after a scope's operation returned does: a task started in the operation that outlives it
/// keeps its writes to itself and the other tasks of that run, and objects made in the scope see what the update
/// closure set.
@Suite("Writes made after the operation returned")
struct LateWriteTests {
    @Test("a task's write after the operation returned is not seen by objects made in the scope")
    func lateWriteDoesNotReachObjects() async {
        let (model, task) = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            let model = LabelModel()
            let task = Task {
                await Task.yield()
                InjectedValues[\.lateLabel] = "late"
                // The task still reads its own write.
                return InjectedValues[\.lateLabel]
            }
            return (model, task)
        }
        #expect(await task.value == "late")
        #expect(model.label == "configured")
        let child = withInjectedValues(from: model.$label) { _ in
        } operation: {
            LabelModel()
        }
        #expect(child.label == "configured")
    }

    @Test("a write during the operation is seen by objects made in the scope until it returns")
    func operationWriteReachesObjectsWhileItRuns() {
        let model = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            let model = LabelModel()
            InjectedValues[\.lateLabel] = "written"
            let seenFromAnotherThread = Task.detached { model.label }
            #expect(model.label == "written")
            _ = seenFromAnotherThread
            return model
        }
        #expect(model.label == "configured")
    }

    @Test("tasks of one run share their late writes, and a reset in one drops them for both")
    func lateTasksShareTheRun() async {
        let (first, second) = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            let gate = AsyncGate()
            let first = Task {
                await gate.wait()
                return InjectedValues[\.lateLabel]
            }
            let second = Task {
                InjectedValues[\.lateLabel] = "from the second task"
                await gate.open()
            }
            return (first, second)
        }
        await second.value
        #expect(await first.value == "from the second task")
    }
}

/// What a task started in a scope's operation sees once the operation has returned: the run's writes, and its own
/// later ones, directly and through everything it builds on the run.
@Suite("A task that outlives its scope")
struct OutlivingTaskTests {
    @Test("a task that outlives its scope sees the operation's writes, then its own, through all it builds on them")
    func outlivingTaskBuildsOnTheRun() async {
        let gate = AsyncGate()
        let task = withInjectedValues {
            $0.lateLabel = "anonymous"
        } operation: {
            InjectedValues[\.lateLabel] = "alice"
            return Task {
                // Runs once the operation has returned.
                await gate.wait()
                let model = withInjectedValues {
                    $0.lateLevel = 2
                } operation: {
                    LabelModel()
                }
                func everywhere() -> [String] {
                    [
                        InjectedValues[\.lateLabel],
                        withInjectedValues {
                            $0.lateLevel = 2
                        } operation: {
                            InjectedValues[\.lateLabel]
                        },
                        InjectedValues.capture().run { InjectedValues[\.lateLabel] },
                        model.label,
                        withInjectedValues {
                            $0.lateLevel = 3
                        } operation: {
                            LabelModel()
                        }.label,
                    ]
                }
                let before = everywhere()
                InjectedValues[\.lateLabel] = "bob"
                return (before, everywhere())
            }
        }
        await gate.open()
        let (before, after) = await task.value
        #expect(before == Array(repeating: "alice", count: 5))
        #expect(after == Array(repeating: "bob", count: 5))
    }
}

/// A gate that one task opens and another waits for.
private actor AsyncGate {
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

private struct LabelModel: Sendable {
    @Injected(\.lateLabel) var label
}

private enum LateLevelKey: ReadOnlyInjectionKey {
    static let currentValue = 0
}

private enum LateLabelKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

extension InjectedValues {
    fileprivate var lateLevel: Int {
        get { Self[LateLevelKey.self] }
        set { Self[LateLevelKey.self] = newValue }
    }

    fileprivate var lateLabel: String {
        get { Self[LateLabelKey.self] }
        set { Self[LateLabelKey.self] = newValue }
    }
}
