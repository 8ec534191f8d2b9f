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
                    // Outside every scope, the object reads its own scope: the test's, where the write went.
                    precondition(model.x == 42, "the object does not read its own write: \(model.x)")
                }
                // Since core v5 the object remembers the test's own scope, which still runs: the write went there.
                precondition(model.x == 42, "the write did not reach the test's scope")
                precondition(InjectedValues[\.targetX] == 42, "the write did not reach the test's scope")
            }
            precondition(InjectedValues[\.targetX] == 0, "the test's write reached the global store")
        }
    }

    // Since core v5 a fresh scope's root ends with the scope: a write through its object afterwards has nowhere to go
    // in its world, so it is dropped with a warning rather than put in the global store, and reads fall to the global
    // store.
    @Test("a write through an object made in a fresh scope's update closure, after it ended, is dropped with a warning")
    func freshUpdateClosureObjectWritesInItsWorld() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let holder = ModelHolder()
            withInjectedValues(fresh: true) { _ in
                holder.model = TargetModel()
            } operation: {
            }
            onAnotherThread { holder.model!.x = 7 }
            precondition(holder.model!.x == 0, "the object reads a dropped write")
            precondition(InjectedValues[\.targetX] == 0, "the fresh scope's write reached the global store")
        }
        #expect(standardError(of: result).contains("a write of TargetXKey was dropped"))
    }

    @Test("a cached default built for a fresh scope writes in its world, not the global store")
    func defaultWritesInItsWorld() async {
        await #expect(processExitsWith: .success) {
            let holder = ModelHolder()
            withInjectedValues(fresh: true) { _ in
                holder.model = TargetModel()
            } operation: {
                onAnotherThread { precondition(holder.model!.writer.wrote, "the default did not run") }
                precondition(InjectedValues[\.targetName] == "written by a default", "the write left the scope")
            }
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

    // Since core v5 an ended scope is a value: the write goes to the global store, where every object of the scope
    // that does not override the key reads it.
    @Test(
        "a write through an object of a scope that ended and kept something reaches the global store, for all its objects"
    )
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
            precondition(InjectedValues[\.targetX] == 7, "the write did not reach the global store")
        }
    }

    // A third review: the read half of a write through a nested path read the object's ended scope, and the write
    // then put that scope's override, changed in one part, into the global store, for every reader in the app.
    @Test("a nested-path write through an object whose scope ended reads and writes the global store, not the scope's")
    func nestedWriteAfterTheScopeEndedKeepsTheScopesValueOut() async {
        await #expect(processExitsWith: .success) {
            let model = withInjectedValues {
                $0.targetConfig = TargetConfig(host: "staging", timeout: 5)
            } operation: {
                TargetConfigModel()
            }
            model.timeout = 10
            let global = InjectedValues[\.targetConfig]
            precondition(global == TargetConfig(host: "production", timeout: 10), "the global config is \(global)")
            precondition(model.config.host == "staging", "the object no longer reads its scope: \(model.config)")
        }
    }

    @Test("a nested-path write through an object whose scope ended, made in another scope, changes that scope's value")
    func nestedWriteInAnotherScopeChangesThatScopesValue() {
        inFreshScope {
            let model = withInjectedValues {
                $0.targetConfig = TargetConfig(host: "staging", timeout: 5)
            } operation: {
                TargetConfigModel()
            }
            withInjectedValues {
                $0.targetX = 1
            } operation: {
                model.timeout = 10
                #expect(InjectedValues[\.targetConfig] == TargetConfig(host: "production", timeout: 10))
            }
            #expect(model.config == TargetConfig(host: "staging", timeout: 5))
        }
    }

    @Test("a nested-path write from a thread through an object whose inner scope ended changes the outer scope's value")
    func nestedWriteFromAThreadChangesTheRunningScopesValue() {
        inFreshScope {
            withInjectedValues {
                $0.targetX = 1
            } operation: {
                let model = withInjectedValues {
                    $0.targetConfig = TargetConfig(host: "staging", timeout: 5)
                } operation: {
                    TargetConfigModel()
                }
                onAnotherThread { model.timeout = 10 }
                #expect(InjectedValues[\.targetConfig] == TargetConfig(host: "production", timeout: 10))
            }
        }
    }

    // A review of a speedup found the replaced value released after the write had put its own context back, so that
    // its `deinit` read through the snapshot the writing property lent.
    @Test("a value that a write through an object replaces is released outside the scope the object lends")
    func replacedValueIsReleasedOutsideTheWrite() async {
        await #expect(processExitsWith: .success) {
            let log = StringLog()
            withInjectedValues {
                $0.targetName = "the scope's"
            } operation: {
                let holder = ProbeHolder()
                InjectedValues[\.targetProbe] = ReleaseProbe("first", log)  // only the scope's cell holds it
                onAnotherThread { holder.probe = ReleaseProbe("second", log) }
            }
            let first = log.entries.first { $0.hasPrefix("first") }
            precondition(first == "first read default", "the replaced value's deinit: \(first ?? "none")")
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

/// Holds what a write through its property replaces.
private final class ProbeHolder: @unchecked Sendable {
    // `@unchecked Sendable`: the wrapper is never reassigned, and what it reads is the store's to guard.
    @Injected(\.targetProbe) var probe
}

/// A value whose `deinit` says what it reads of the store, where it is released.
private final class ReleaseProbe: Sendable {
    let name: String
    let log: StringLog

    init(_ name: String, _ log: StringLog) { (self.name, self.log) = (name, log) }

    deinit { log.append("\(name) read \(InjectedValues[\.targetName])") }
}

/// A cached dependency whose default writes another dependency where it is built.
private final class TargetWriter: Sendable {
    let wrote: Bool

    init() {
        InjectedValues[\.targetName] = "written by a default"
        wrote = true
    }
}

struct TargetConfig: Sendable, Equatable {
    var host: String
    var timeout: Int
}

private enum TargetConfigKey: ReadOnlyInjectionKey {
    static var currentValue: TargetConfig { TargetConfig(host: "production", timeout: 30) }
}

/// A model that writes one part of the configuration through a nested path.
private struct TargetConfigModel: Sendable {
    @Injected(\.targetConfig.timeout) var timeout
    @Injected(\.targetConfig) var config
}

private enum TargetXKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}

private enum TargetNameKey: ReadOnlyInjectionKey {
    static var currentValue: String { "default" }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum TargetProbeKey: ReadOnlyInjectionKey {
    static var currentValue: ReleaseProbe? { nil }
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

    fileprivate var targetConfig: TargetConfig {
        get { Self[TargetConfigKey.self] }
        set { Self[TargetConfigKey.self] = newValue }
    }

    fileprivate var targetName: String {
        get { Self[TargetNameKey.self] }
        set { Self[TargetNameKey.self] = newValue }
    }

    fileprivate var targetProbe: ReleaseProbe? {
        get { Self[TargetProbeKey.self] }
        set { Self[TargetProbeKey.self] = newValue }
    }

    fileprivate var targetWriter: TargetWriter {
        get { Self[TargetWriterKey.self] }
        set { Self[TargetWriterKey.self] = newValue }
    }
}
