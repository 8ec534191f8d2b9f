import Foundation
import Injected
import Testing

/// Where a write goes when it is made outside every scope through an object that remembers one: into the innermost
/// scope of the object's that runs or keeps something, and past every scope into the object's root, never into the
/// global store from inside a fresh scope's or a test's world.
///
/// Each test writes outside every scope, so it runs in a child process (an exit test), where no other test sees the
/// global store it checks.
@Suite("Where a write through a remembered scope goes")
struct WriteTargetTests {
    @Test("a write through an object made in a test's update closure stays in the test's world")
    func updateClosureObjectWritesInTheTestsWorld() async {
        await #expect(processExitsWith: .success) {
            let holder = ModelHolder()
            withTestInjectedValues(strict: false, reportingTo: { _ in }) {
                $0.targetX = 1
                holder.model = TargetModel()
            } operation: {
                let model = holder.model!
                onAnotherThread {
                    model.x = 42
                    // Outside every scope, the object reads its own scope: the test's root, where the write went.
                    precondition(model.x == 42, "the object does not read its own write: \(model.x)")
                }
                // In the test, the test's own override comes first, and the write did not replace it.
                precondition(model.x == 1, "the write replaced the test's own override")
                precondition(InjectedValues[\.targetX] == 1, "the write replaced the test's own override")
            }
            precondition(InjectedValues[\.targetX] == 0, "the test's write reached the global store")
        }
    }

    @Test("a write through an object made in a fresh scope's update closure, after it ended, stays in its world")
    func freshUpdateClosureObjectWritesInItsWorld() async {
        await #expect(processExitsWith: .success) {
            let holder = ModelHolder()
            withInjectedValues(fresh: true) { _ in
                holder.model = TargetModel()
            } operation: {
            }
            onAnotherThread { holder.model!.x = 7 }
            precondition(holder.model!.x == 7, "the object does not read its own write")
            precondition(InjectedValues[\.targetX] == 0, "the fresh scope's write reached the global store")
        }
    }

    @Test("a cached default built for a fresh scope that has ended writes in its world, not the global store")
    func defaultWritesInItsWorld() async {
        await #expect(processExitsWith: .success) {
            let holder = ModelHolder()
            withInjectedValues(fresh: true) { _ in
                holder.model = TargetModel()
            } operation: {
            }
            precondition(holder.model!.writer.wrote, "the default did not run")
            precondition(holder.model!.name == "written by a default", "the object does not read the default's write")
            precondition(InjectedValues[\.targetName] == "default", "the default's write reached the global store")
        }
    }

    @Test("a write through an object of a scope that ended and kept nothing reaches the objects made from it before")
    func writeThroughAnEmptyEndedScopeIsSeenByEarlierChildren() async {
        await #expect(processExitsWith: .success) {
            let (first, second) = withInjectedValues { _ in
            } operation: {
                (TargetModel(), TargetModel())
            }
            let childBefore = withInjectedValues(from: second.$x) { TargetModel() }
            first.x = 7
            let childAfter = withInjectedValues(from: second.$x) { TargetModel() }
            let seen = [first.x, second.x, childBefore.x, childAfter.x]
            precondition(seen == [7, 7, 7, 7], "objects of one scope disagree: \(seen)")
        }
    }

    @Test("a write through an object of a scope that ended and kept something stays in that scope, for all its objects")
    func writeThroughAKeptScopeStaysInIt() async {
        await #expect(processExitsWith: .success) {
            let (first, second) = withInjectedValues {
                $0.targetName = "kept"
            } operation: {
                (TargetModel(), TargetModel())
            }
            let childBefore = withInjectedValues(from: second.$x) { TargetModel() }
            first.x = 7
            let childAfter = withInjectedValues(from: second.$x) { TargetModel() }
            let seen = [first.x, second.x, childBefore.x, childAfter.x]
            precondition(seen == [7, 7, 7, 7], "objects of one scope disagree: \(seen)")
            precondition(InjectedValues[\.targetX] == 0, "the write reached the global store")
        }
    }
}

/// Runs `body` on a new thread, outside every scope, and waits for it.
private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let done = DispatchSemaphore(value: 0)
    Thread {
        body()
        done.signal()
    }.start()
    done.wait()
}

/// Holds a model made in an update closure, for after the scope.
private final class ModelHolder: @unchecked Sendable {
    // `@unchecked Sendable`: each test sets `model` before any other thread reads it.
    var model: TargetModel?
}

/// An object whose properties remember the scope it was made in.
private final class TargetModel: @unchecked Sendable {
    // `@unchecked Sendable`: the wrappers are never reassigned, and what they read is the store's to guard.
    @Injected(\.targetX) var x
    @Injected(\.targetName) var name
    @Injected(\.targetWriter) var writer
}

/// A cached dependency whose default writes another dependency where it is built.
private final class TargetWriter: Sendable {
    let wrote: Bool

    init() {
        InjectedValues[\.targetName] = "written by a default"
        wrote = true
    }
}

private enum TargetXKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}

private enum TargetNameKey: ReadOnlyInjectionKey {
    static var currentValue: String { "default" }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum TargetWriterKey: ReadOnlyInjectionKey {
    static var currentValue: TargetWriter { TargetWriter() }
}

extension InjectedValues {
    fileprivate var targetX: Int {
        get { Self[TargetXKey.self] }
        set { Self[TargetXKey.self] = newValue }
    }

    fileprivate var targetName: String {
        get { Self[TargetNameKey.self] }
        set { Self[TargetNameKey.self] = newValue }
    }

    fileprivate var targetWriter: TargetWriter {
        get { Self[TargetWriterKey.self] }
        set { Self[TargetWriterKey.self] = newValue }
    }
}
