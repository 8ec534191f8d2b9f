import Foundation
import Injected
import Testing

/// A scope can be carried to models made later from a parent, and into work that escapes structured concurrency.
@Suite("Carrying a scope into later and escaping work")
struct EscapingWorkTests {
    // MARK: Child models

    @Test("a child made from its parent on another thread, after the parent's scope ended, keeps the parent's scope")
    func childMadeLaterOnAnotherThread() {
        let parent = withInjectedValues {
            $0.escapingSource = "parent's"
        } operation: {
            ParentModel()
        }
        let children = ResultSlot<ChildModel>()
        let thread = Thread {
            children.store(
                withInjectedValues(from: parent.scope) { _ in
                } operation: {
                    ChildModel()
                }
            )
        }
        thread.start()
        let child = children.wait()
        #expect(child.source == "parent's")
        #expect(parent.source == "parent's")
    }

    @Test("the update closure's overrides go on top of the parent's scope, and the parent keeps its own")
    func overridesOnTopOfTheParent() {
        let parent = withInjectedValues {
            $0.escapingSource = "parent's"
            $0.escapingOther = "parent's other"
        } operation: {
            ParentModel()
        }
        let child = withInjectedValues(from: parent.scope) {
            $0.escapingSource = "child's"
        } operation: {
            ChildModel()
        }
        #expect(child.source == "child's")
        #expect(child.other == "parent's other")
        #expect(parent.source == "parent's")
    }

    @Test("a parent made outside any scope gives the active scope")
    func parentWithoutAScope() {
        let unscoped = ParentModel()
        withInjectedValues {
            $0.escapingSource = "active"
        } operation: {
            let child = withInjectedValues(from: unscoped.scope) { _ in
            } operation: {
                ChildModel()
            }
            #expect(child.source == "active")
        }
    }

    @Test("a child made from its parent with no update closure keeps the parent's scope, synchronously or not")
    func childWithoutAnUpdateClosure() async {
        let parent = withInjectedValues {
            $0.escapingSource = "parent's"
        } operation: {
            ParentModel()
        }
        let child = withInjectedValues(from: parent.scope) { ChildModel() }
        let later = await withInjectedValues(from: parent.scope) {
            await Task.yield()
            return ChildModel()
        }
        #expect(child.source == "parent's")
        #expect(later.source == "parent's")
    }

    @Test("a subclass hands out the scope of an @Injected property it inherits")
    func parentsSuperclass() {
        let parent = withInjectedValues {
            $0.escapingSource = "base class's"
        } operation: {
            DerivedParent()
        }
        let child = withInjectedValues(from: parent.scope) { _ in
        } operation: {
            ChildModel()
        }
        #expect(child.source == "base class's")
    }

    @Test("where the child is made inside another scope, that scope's overrides win")
    func readersOverridesWin() {
        let parent = withInjectedValues {
            $0.escapingSource = "parent's"
            $0.escapingOther = "parent's other"
        } operation: {
            ParentModel()
        }
        let child = withInjectedValues {
            $0.escapingSource = "reader's"
        } operation: {
            withInjectedValues(from: parent.scope) { _ in
            } operation: {
                ChildModel()
            }
        }
        #expect(child.source == "reader's")
        #expect(child.other == "parent's other")
    }

    @Test("a parent from another fresh scope's world gives the caller's fresh scope")
    func parentFromAnotherFreshScope() {
        let parent = withInjectedValues(fresh: true) {
            $0.escapingSource = "test A"
        } operation: {
            ParentModel()
        }
        withInjectedValues(fresh: true) {
            $0.escapingSource = "test B"
        } operation: {
            let child = withInjectedValues(from: parent.scope) { _ in
            } operation: {
                ChildModel()
            }
            #expect(child.source == "test B")
            #expect(child.other == "default")
        }
    }

    @Test("a child made from its parent in an asynchronous operation keeps the parent's scope")
    func asynchronousChild() async {
        let parent = withInjectedValues {
            $0.escapingSource = "parent's"
        } operation: {
            ParentModel()
        }
        let child = await withInjectedValues(from: parent.scope) { _ in
        } operation: {
            await Task.yield()
            return ChildModel()
        }
        #expect(await Task.detached { child.source }.value == "parent's")
    }

    @Test("an actor whose state other tasks change hands its scope to the children it makes")
    func actorParent() async {
        let parent = withInjectedValues {
            $0.escapingSource = "actor's"
        } operation: {
            ParentActor()
        }
        let children = await withTaskGroup(of: String.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index.isMultiple(of: 2) {
                        await parent.touch()
                        return "actor's"
                    }
                    return await parent.makeChild().source
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(children.allSatisfy { $0 == "actor's" })
    }

    @Test("parents and children made from them are released, with their scopes")
    func childrenDoNotLeak() {
        let released = Counter()
        do {
            let parent = withInjectedValues {
                $0.escapingService = CountedEscapingService(released)
            } operation: {
                ParentModel()
            }
            let child = withInjectedValues(from: parent.scope) {
                $0.escapingService = CountedEscapingService(released)
            } operation: {
                ChildModel()
            }
            #expect(child.service !== parent.service)
            #expect(released.value == 0)
        }
        #expect(released.value == 2)
    }

    // MARK: Captured scopes

    @Test("a GCD callback runs in the captured scope")
    func gcdCallback() async {
        let read = await withInjectedValues {
            $0.escapingSource = "captured"
        } operation: {
            let scope = InjectedValues.capture()
            return await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(returning: scope.run { InjectedValues[\.escapingSource] })
                }
            }
        }
        #expect(read == "captured")
    }

    @Test("a Thread runs in the captured scope, after the scope has ended")
    func threadAfterTheScope() {
        let scope = withInjectedValues {
            $0.escapingSource = "captured"
        } operation: {
            InjectedValues.capture()
        }
        let reads = ResultSlot<String>()
        let thread = Thread { reads.store(scope.run { InjectedValues[\.escapingSource] }) }
        thread.start()
        #expect(reads.wait() == "captured")
        #expect(InjectedValues[\.escapingSource] == "default")
    }

    @Test("an asynchronous run sees the captured scope, and its writes end with it")
    func asynchronousRun() async {
        let scope = withInjectedValues {
            $0.escapingSource = "captured"
        } operation: {
            InjectedValues.capture()
        }
        let (during, afterWrite) = await Task.detached {
            await scope.run {
                let during = InjectedValues[\.escapingSource]
                InjectedValues[\.escapingSource] = "written in the run"
                await Task.yield()
                return (during, InjectedValues[\.escapingSource])
            }
        }.value
        #expect(during == "captured")
        #expect(afterWrite == "written in the run")
        #expect(scope.run { InjectedValues[\.escapingSource] } == "captured")
    }

    @Test("a run inside another scope puts that scope's overrides first")
    func runInsideAnotherScope() {
        let scope = withInjectedValues {
            $0.escapingSource = "captured"
            $0.escapingOther = "captured other"
        } operation: {
            InjectedValues.capture()
        }
        withInjectedValues {
            $0.escapingSource = "reader's"
        } operation: {
            #expect(scope.run { InjectedValues[\.escapingSource] } == "reader's")
            #expect(scope.run { InjectedValues[\.escapingOther] } == "captured other")
        }
    }

    @Test("a capture made outside any scope runs its body where it is run")
    func captureOutsideAnyScope() {
        let scope = InjectedValues.capture()
        #expect(scope.run { InjectedValues[\.escapingSource] } == "default")
        withInjectedValues {
            $0.escapingSource = "where it runs"
        } operation: {
            #expect(scope.run { InjectedValues[\.escapingSource] } == "where it runs")
        }
    }

    @Test("a capture holds its scope's values while it lives, and nothing once it is gone")
    func captureKeepsNothingAfterwards() {
        weak var weakService: CountedEscapingService?
        let released = Counter()
        var scope: InjectedValues.CapturedScope? = withInjectedValues {
            let service = CountedEscapingService(released)
            weakService = service
            $0.escapingService = service
        } operation: {
            InjectedValues.capture()
        }
        #expect(weakService != nil)
        #expect(scope?.run { InjectedValues[\.escapingService] } === weakService)
        scope = nil
        #expect(weakService == nil)
        #expect(released.value == 1)
    }

    @Test("a run inside a request's scope keeps the request's overrides in everything it reaches")
    func runInsideARunKeepsTheRequest() {
        // Captured at set-up, outside any request, as a client library does.
        let client = withInjectedValues {
            $0.escapingOther = "client"
        } operation: {
            InjectedValues.capture()
        }
        let other = withInjectedValues {
            $0.escapingOther = "other"
        } operation: {
            InjectedValues.capture()
        }
        let audit = withInjectedValues {
            $0.escapingOther = "audit"
        } operation: {
            ParentModel()
        }
        let seen = withInjectedValues {
            $0.escapingSource = "r1"
        } operation: {
            client.run {
                [
                    InjectedValues[\.escapingSource],
                    audit.source,
                    other.run { InjectedValues[\.escapingSource] },
                    other.run { audit.source },
                    withInjectedValues(from: audit.scope) { _ in
                    } operation: {
                        ChildModel()
                    }.source,
                    other.run { client.run { InjectedValues[\.escapingSource] } },
                ]
            }
        }
        #expect(seen == Array(repeating: "r1", count: 6))
    }

    @Test("one capture run on 8 threads at once, 1,000 times each, sees the captured scope every time")
    func concurrentRuns() {
        let scope = withInjectedValues {
            $0.escapingSource = "captured"
        } operation: {
            InjectedValues.capture()
        }
        let mismatches = Counter()
        let finished = runOnThreads(8) { thread in
            for iteration in 0..<1_000 {
                scope.run {
                    if InjectedValues[\.escapingSource] != "captured" { mismatches.increment() }
                    InjectedValues[\.escapingOther] = "thread \(thread), run \(iteration)"
                    if InjectedValues[\.escapingOther] != "thread \(thread), run \(iteration)" {
                        mismatches.increment()
                    }
                }
            }
        }
        #expect(finished)
        #expect(mismatches.value == 0)
    }
}

// MARK: - Models and keys

private final class ParentModel: Sendable {
    // A `Sendable` class may hold the wrapper in a `let`, which it reads through `wrappedValue`.
    let sourceProperty = Injected(\.escapingSource)
    let serviceProperty = Injected(\.escapingService)

    var source: String { sourceProperty.wrappedValue }
    var service: CountedEscapingService { serviceProperty.wrappedValue }
    /// The scope this model was made in, for the models it makes.
    var scope: InjectedValues.CapturedScope { sourceProperty.projectedValue }
}

private class BaseParent {
    @Injected(\.escapingSource) var source
}

/// A parent whose state other tasks change while it makes children: only its own code reads its properties.
private actor ParentActor {
    @Injected(\.escapingSource) var source
    private var touches: [Int] = []

    func touch() {
        touches.append(touches.count)
    }

    func makeChild() -> ChildModel {
        withInjectedValues(from: $source) { _ in
        } operation: {
            ChildModel()
        }
    }
}

private final class DerivedParent: BaseParent {
    var scope: InjectedValues.CapturedScope { $source }
}

private struct ChildModel: Sendable {
    @Injected(\.escapingSource) var source
    @Injected(\.escapingOther) var other
    @Injected(\.escapingService) var service
}

/// A service that counts its releases; `Sendable` because it holds nothing mutable.
private final class CountedEscapingService: Sendable {
    private let released: Counter

    init(_ released: Counter) {
        self.released = released
    }

    deinit { released.increment() }
}

/// A value handed from a thread to the test, which waits for it.
private final class ResultSlot<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is written once before `ready` is signalled, and read only after waiting for it.
    private var value: Value?
    private let ready = DispatchSemaphore(value: 0)

    func store(_ value: Value) {
        self.value = value
        ready.signal()
    }

    func wait() -> Value {
        ready.wait()
        return value!
    }
}

private enum EscapingSourceKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum EscapingOtherKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum EscapingServiceKey: ReadOnlyInjectionKey {
    static var currentValue: CountedEscapingService { CountedEscapingService(Counter()) }
}

extension InjectedValues {
    fileprivate var escapingSource: String {
        get { Self[EscapingSourceKey.self] }
        set { Self[EscapingSourceKey.self] = newValue }
    }

    fileprivate var escapingOther: String {
        get { Self[EscapingOtherKey.self] }
        set { Self[EscapingOtherKey.self] = newValue }
    }

    fileprivate var escapingService: CountedEscapingService {
        get { Self[EscapingServiceKey.self] }
        set { Self[EscapingServiceKey.self] = newValue }
    }
}
