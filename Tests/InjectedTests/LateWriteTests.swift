import Foundation
import Injected
import Testing

/// What a write made after a scope's operation returned does: the scope runs while any task started in it does, so
/// the write is seen by everything made in the scope until the last of them ends, and then what the update closure
/// set is what remains.
@Suite("Writes made after the operation returned")
struct LateWriteTests {
    @Test("a task's late write is seen by objects made in the scope while it runs, and dropped when it ends")
    func lateWriteReachesObjectsWhileTheRunLasts() async {
        let gate = AsyncGate()
        let (model, task) = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            let model = LabelModel()
            let task = Task {
                await gate.wait()
                InjectedValues[\.lateLabel] = "late"
                // Another thread, outside every scope, reads through the object made in the scope.
                return (InjectedValues[\.lateLabel], await Task.detached { model.label }.value)
            }
            return (model, task)
        }
        #expect(model.label == "configured")
        await gate.open()
        let (own, throughTheObject) = await task.value
        #expect(own == "late")
        #expect(throughTheObject == "late")
        // The task has ended, and with it the scope's run.
        #expect(await eventually { model.label == "configured" })
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

    @Test("a task started in a nested scope keeps the scope around it running, with the operation's writes")
    func taskInANestedScopeKeepsTheOuterRun() async {
        let gate = AsyncGate()
        let task = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            InjectedValues[\.lateLabel] = "written in the outer run"
            return withInjectedValues {
                $0.lateLevel = 1
            } operation: {
                Task {
                    await gate.wait()
                    return (InjectedValues[\.lateLabel], InjectedValues[\.lateLevel])
                }
            }
        }
        // Both operations have returned; the task started in the nested scope still runs.
        await gate.open()
        let (label, level) = await task.value
        #expect(label == "written in the outer run")
        #expect(level == 1)
    }

    @Test("a task started by a task of the scope, in a nested scope, sees the run after the first task ended")
    func grandchildTaskKeepsTheRun() async {
        let gate = AsyncGate()
        let first = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            InjectedValues[\.lateLabel] = "written in the run"
            return Task {
                withInjectedValues {
                    $0.lateLevel = 9
                } operation: {
                    Task {
                        await gate.wait()
                        return (InjectedValues[\.lateLabel], InjectedValues[\.lateLevel])
                    }
                }
            }
        }
        let second = await first.value
        await gate.open()
        let (label, level) = await second.value
        #expect(label == "written in the run")
        #expect(level == 9)
    }

    // Since core v5 a nested scope sees the scope around it live while that scope runs, and as it was when the nested
    // scope opened once it has ended: the task reads the outer scope after it ended, so it sees what it was then.
    @Test("a task started in a nested scope reads the outer scope as it was when the nested one opened, once it ended")
    func taskInANestedScopeReadsLaterOuterWrites() async {
        let gate = AsyncGate()
        let task = withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            let task = withInjectedValues {
                $0.lateLevel = 1
            } operation: {
                Task {
                    await gate.wait()
                    return InjectedValues[\.lateLabel]
                }
            }
            InjectedValues[\.lateLabel] = "written after the nested scope opened"
            return task
        }
        await gate.open()
        #expect(await task.value == "configured")
    }

    @Test("three levels deep, a task reads what the outermost run wrote while the middle scope was open")
    func threeLevelsKeepTheOutermostWrites() async {
        let gate = AsyncGate()
        let writing = AsyncGate()
        let task = await withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            // A task of the outermost scope, which writes in its run once the middle scope is open.
            let writer = Task {
                await writing.wait()
                InjectedValues[\.lateLabel] = "written in the outer run"
            }
            return await withInjectedValues {
                $0.lateLevel = 1
            } operation: {
                await writing.open()
                await writer.value
                return withInjectedValues {
                    $0.lateLevel = 2
                } operation: {
                    Task {
                        await gate.wait()
                        return (InjectedValues[\.lateLabel], InjectedValues[\.lateLevel])
                    }
                }
            }
        }
        // Every operation has returned, and the outer scope's writer has finished.
        await gate.open()
        let (label, level) = await task.value
        #expect(level == 2)
        #expect(label == "written in the outer run")
    }

    // Since core v5 there are no runs: a scope's values go with its cell, when the cell's last binding ends, which is
    // after the operation has returned.
    @Test("a value the scope replaced is released in it, and what it holds where its last binding ends")
    func writtenValueIsReleasedInTheScope() {
        let seen = SeenLabels()
        withInjectedValues {
            $0.lateLabel = "configured"
        } operation: {
            InjectedValues[\.releaseProbe] = ReleaseProbe { seen.append(InjectedValues[\.lateLabel]) }
            InjectedValues[\.releaseProbe] = nil
            InjectedValues[\.releaseProbe] = ReleaseProbe { seen.append(InjectedValues[\.lateLabel]) }
        }
        // The first was released by the second write, in the scope; the second with the scope's cell, after it.
        #expect(seen.labels == ["configured", "default"])
    }
}

/// Calls its closure when it is released.
private final class ReleaseProbe: Sendable {
    let onRelease: @Sendable () -> Void

    init(_ onRelease: @escaping @Sendable () -> Void) {
        self.onRelease = onRelease
    }

    deinit {
        onRelease()
    }
}

private enum ReleaseProbeKey: ReadOnlyInjectionKey {
    static var currentValue: ReleaseProbe? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

extension InjectedValues {
    fileprivate var releaseProbe: ReleaseProbe? {
        get { Self[ReleaseProbeKey.self] }
        set { Self[ReleaseProbeKey.self] = newValue }
    }
}

/// Labels seen by deinits, in order.
private final class SeenLabels: @unchecked Sendable {
    // `@unchecked Sendable`: `list` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var list: [String] = []

    var labels: [String] { lock.withLock { list } }

    func append(_ label: String) {
        lock.withLock { list.append(label) }
    }
}

/// Whether `condition` holds within five seconds, checked every millisecond: a task's locals are released shortly after
/// its value is returned.
private func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<5_000 {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
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
