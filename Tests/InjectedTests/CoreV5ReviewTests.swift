import Foundation
import Injected
import Testing

/// The defects two outside reviews of core v5 reproduced with small programs, each the way it fails in the field.
///
/// The races run in a child process each (an exit test), where no other test sees the global store they reset and
/// write, and a bounded number of rounds; each failed on the code before its fix in most runs.
@Suite("Core v5 review")
struct CoreV5ReviewTests {
    // Round 7, after the faster read path: a property read in a view, whose cell ended, read the view's empty cell.
    @Test(
        "a model made in an update closure, read by a task the closure started after the scope ended, keeps its override"
    )
    func updateClosureModelReadAfterTheScopeEnded() async {
        let ended = DispatchSemaphore(value: 0)
        let read = StringLog()
        withInjectedValues { values in
            values.reviewFlavor = "from the update closure"
            let model = ReviewFlavorModel()
            Task {
                ended.wait()
                read.append(model.flavor)
            }
        } operation: {
            _ = InjectedValues[\.reviewFlavor]
        }
        ended.signal()
        #expect(await read.eventuallyHasOne())
        #expect(read.entries == ["from the update closure"])
    }

    @Test("a replaced value whose deinit reads a dependency is released after the scope's lock, not under it")
    func deinitOfAReplacedValueReadsWithoutDeadlock() {
        let finished = DispatchSemaphore(value: 0)
        let seen = StringLog()
        Thread {
            withInjectedValues {
                $0.reviewName = "request"
            } operation: {
                InjectedValues[\.reviewToken] = ReviewToken(seen)
                var model: ReviewModel? = ReviewModel()  // its snapshot's frame holds the token
                InjectedValues[\.reviewToken] = nil  // now only that snapshot does
                model = nil
                _ = model
                _ = ReviewModel()  // replaces the snapshot, releasing the token
            }
            finished.signal()
        }.start()
        #expect(finished.wait(timeout: .now() + 10) == .success, "the scope deadlocked in the token's deinit")
        #expect(seen.entries == ["request"])
    }

    @Test("a write through a nested path leaves the keys of the written type that the outer getter reads alone")
    func nestedKeyPathWriteReadsSiblingsOfTheSameType() {
        withInjectedValues { _ in
        } operation: {
            InjectedValues[\.reviewConfig.user] = "alice"
            #expect(InjectedValues[\.reviewConfig].host == "example.com")
            #expect(InjectedValues[\.reviewConfig].user == "alice")
        }
    }

    @Test("an object made in a test stays out of a plain scope's reads after the test has ended")
    func testObjectStaysOutOfTheProcessAfterTheTest() {
        let model = withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.reviewName = "test-mock"
        } operation: {
            ReviewModel()
        }
        let read = withInjectedValues {
            $0.reviewOther = "x"
        } operation: {
            model.name
        }
        #expect(read == "live")
    }

    @Test("a task that outlives its test builds the test's cached service with the test's overrides, and no report")
    func cachedBuildAfterTheTestUsesItsOverrides() async {
        let reports = StringLog()
        let gate = AsyncGate()
        let task = withTestInjectedValues(strict: true, reportingTo: reports.append) {
            $0.reviewName = "mock-api"
        } operation: {
            withInjectedValues {
                $0.reviewOther = "child"
            } operation: {
                Task {
                    await gate.wait()
                    return (InjectedValues[\.reviewName], InjectedValues[\.reviewRepo].api)
                }
            }
        }
        await gate.open()
        let (name, api) = await task.value
        #expect(name == "mock-api")
        #expect(api == "mock-api")
        #expect(!reports.entries.contains { $0.contains("ReviewNameKey") }, "reported: \(reports.entries)")
    }

    @Test("a key read while another thread finishes building what it needs is not taken for a cycle, 300,000 rounds")
    func finishedBuildIsNoCycle() async {
        await #expect(processExitsWith: .success) {
            // The second thread is released first, as in the reproduction: it builds the inner key and then waits for
            // the first thread's build of the outer one, while that build reads the inner key.
            let rounds = RoundThreads(
                {
                    _ = InjectedValues[\.reviewInner]
                    _ = InjectedValues[\.reviewOuter]
                },
                { _ = InjectedValues[\.reviewOuter] }
            )
            for _ in 0..<300_000 { rounds.run { InjectedValues.reset() } }
        }
    }

    @Test("a global write racing the first build of a cached article-style key is what later reads get, 100,000 rounds")
    func globalWriteRacingACachedVariableBuild() async {
        await #expect(processExitsWith: .success) {
            let round = StringLog()
            let rounds = RoundThreads(
                { _ = InjectedValues[\.reviewConnection] },
                { InjectedValues[\.reviewConnection] = ReviewConnection(round.entries.count) }
            )
            for index in 0..<100_000 {
                rounds.run {
                    InjectedValues.reset()
                    round.append("")
                }
                let read = InjectedValues[\.reviewConnection].tag
                precondition(read == index + 1, "round \(index): read \(read) after the write of \(index + 1)")
            }
        }
    }

    @Test("a write through an object whose scope ends at that moment goes to the global store, never dropped")
    func writeAsTheScopeEndsIsNotDropped() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let holder = ReviewHolder()
            let rounds = RoundThreads({ holder.model!.count = 7 })
            for _ in 0..<100_000 {
                withInjectedValues {
                    $0.reviewCount = 1
                } operation: {
                    holder.model = ReviewModel()
                    rounds.start()
                    var sum = 0
                    for step in 0..<Int.random(in: 0..<300) { sum &+= step }
                    precondition(sum >= 0)
                }
                rounds.finish()
            }
        }
        #expect(!standardError(of: result).contains("was dropped"))
    }

    @Test("a cached build a task starts in a fresh scope reads the scope's overrides though the scope ends mid-build")
    func cachedBuildOutlivingItsFreshScopeUsesItsOverrides() async {
        let signals = ReviewSlowKey.signals
        let task = await withCheckedContinuation { (made: CheckedContinuation<Task<(String, String), Never>, Never>) in
            Thread {
                let task = withInjectedValues(fresh: true) {
                    $0.reviewName = "fresh-override"
                } operation: {
                    withInjectedValues { _ in
                    } operation: {
                        let task = Task { (InjectedValues[\.reviewName], InjectedValues[\.reviewSlow].name) }
                        _ = signals.started.wait(timeout: .now() + 10)  // the build has begun
                        return task
                    }
                }
                signals.proceed.signal()  // the fresh scope has ended
                made.resume(returning: task)
            }.start()
        }
        let (direct, built) = await task.value
        #expect(direct == "fresh-override")
        #expect(built == "fresh-override")
    }

    @Test("a write through a key path gives a setter that reads other keys, or the old value, their real values")
    func keyPathWriteSetterReadsRealValues() {
        withInjectedValues { _ in
        } operation: {
            InjectedValues[\.reviewEndpoint] = "/v2"
            InjectedValues[\.reviewAudited] = "a"
            #expect(InjectedValues[\.reviewEndpoint] == "https://api.example.com/v2")
            #expect(InjectedValues[\.reviewAudited] == "->a")
        }
        withInjectedValues {
            $0.reviewEndpoint = "/v2"
            $0.reviewAudited = "a"
        } operation: {
            #expect(InjectedValues[\.reviewEndpoint] == "https://api.example.com/v2")
            #expect(InjectedValues[\.reviewAudited] == "->a")
        }
    }

    @Test("a write through a path into a class-typed dependency sets the property on the instance the getter returns")
    func nestedWriteIntoAClassDependencyReachesTheInstance() {
        let other = ReviewNode("other")
        withInjectedValues { _ in
        } operation: {
            InjectedValues[\.reviewNode.next] = other
        }
        #expect(ReviewNode.live.next === other)
        #expect(other.next === other)
    }

    @Test("a value a write through an object replaces is released outside the write, so its deinit reads its own scope")
    func replacedValueDeinitReadsItsOwnScope() async {
        await #expect(processExitsWith: .success) {
            // In a child process: the write, outside every scope through an object whose scope has ended, goes to the
            // global store.
            let log = StringLog()
            InjectedValues[\.reviewSession] = withInjectedValues {
                $0.reviewName = "eu"
            } operation: {
                ReviewSession(log)
            }
            let controller = withInjectedValues {
                $0.reviewName = "us"
            } operation: {
                ReviewController()
            }
            controller.session.wrappedValue = nil
            precondition(log.entries == ["eu"], "the session's deinit read \(log.entries)")
        }
    }

    @Test("an object made from a test's object after the test ends stays out of the process's scopes too")
    func objectMadeFromAnEndedTestsObjectStaysInThatTest() {
        let parent = withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.reviewName = "test-mock"
        } operation: {
            ReviewModel()
        }
        let child = withInjectedValues(from: parent.nameProperty.projectedValue) { ReviewModel() }
        let (plain, fresh) = (
            withInjectedValues {
                $0.reviewOther = "x"
            } operation: {
                child.name
            },
            withInjectedValues(fresh: true) { _ in
            } operation: {
                child.name
            }
        )
        #expect(plain == "live")
        #expect(fresh == "live")
    }

    @Test(
        "a cached build for a fresh scope reads its overrides when the scope ends as the build begins, 100,000 rounds"
    )
    func cachedBuildAsTheFreshScopeEnds() async {
        await #expect(processExitsWith: .success) {
            let holder = ReviewHolder()
            let global = InjectedValues[\.reviewService]
            let rounds = RoundThreads {
                let service = holder.model!.service
                precondition(
                    service === global || service.name == "fresh",
                    "built for the fresh scope: \(service.name)"
                )
            }
            for _ in 0..<100_000 {
                withInjectedValues(fresh: true) {
                    $0.reviewName = "fresh"
                } operation: {
                    holder.model = ReviewModel()
                    rounds.start()
                    var sum = 0
                    for step in 0..<Int.random(in: 0..<300) { sum &+= step }
                    precondition(sum >= 0)
                }
                rounds.finish()
            }
        }
    }

    @Test("a write through an object made from an ended test's object is dropped with a warning, never made global")
    func writeThroughWhatAnEndedTestsObjectMadeIsDropped() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let parent = withTestInjectedValues(strict: false, reportingTo: { _ in }) {
                $0.reviewName = "test-mock"
            } operation: {
                ReviewModel()
            }
            let child = withInjectedValues(from: parent.nameProperty.projectedValue) { ReviewModel() }
            child.nameProperty.wrappedValue = "from-child"
            precondition(InjectedValues[\.reviewName] == "live", "the global store got \(InjectedValues[\.reviewName])")
        }
        #expect(standardError(of: result).contains("a write of ReviewNameKey was dropped"))
    }

    @Test("a cached build for a test that has ended drops its writes with a warning, and leaves the global store alone")
    func cachedBuildAfterItsTestEndedDropsItsWrites() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let gate = AsyncGate()
            let task = withTestInjectedValues(strict: false, reportingTo: { _ in }) { _ in
            } operation: {
                withInjectedValues { _ in
                } operation: {
                    Task {
                        await gate.wait()
                        return InjectedValues[\.reviewWriter].other
                    }
                }
            }
            await gate.open()
            let built = await task.value
            precondition(built == "", "the build read \(built)")
            precondition(InjectedValues[\.reviewOther] == "", "the global store got \(InjectedValues[\.reviewOther])")
        }
        #expect(standardError(of: result).contains("a write of ReviewOtherKey was dropped"))
    }

    @Test("a cached default built for a test that writes through an app object's property writes into the test")
    func cachedBuildWritingThroughAnAppObjectStaysInTheTest() async {
        await #expect(processExitsWith: .success) {
            reviewAppObjects.model = withInjectedValues {
                $0.reviewCount = 1
            } operation: {
                ReviewModel()
            }
            let inTest = withTestInjectedValues(strict: false, reportingTo: { _ in }) { _ in
            } operation: {
                _ = InjectedValues[\.reviewThroughApp]
                return InjectedValues[\.reviewCount]
            }
            precondition(inTest == 42, "the test read \(inTest)")
            precondition(InjectedValues[\.reviewCount] == 0, "the global store got \(InjectedValues[\.reviewCount])")
        }
    }

    @Test("a reset by a cached build made after its fresh scope ended is dropped with a warning, and empties no cache")
    func resetInABuildAfterTheScopeEndedIsDropped() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            let gate = AsyncGate()
            let task = withInjectedValues(fresh: true) { _ in
            } operation: {
                withInjectedValues { _ in
                } operation: {
                    Task {
                        let before = InjectedValues[\.reviewService]
                        await gate.wait()
                        _ = InjectedValues[\.reviewResetter]
                        return before === InjectedValues[\.reviewService]
                    }
                }
            }
            await gate.open()
            let kept = await task.value
            precondition(kept, "the reset emptied the cache that the nested scope's task reads")
        }
        #expect(standardError(of: result).contains("a reset was dropped"))
    }

    // A third review: a factory default read through a property ran with the property's scope in this thread's
    // context, which a task it started had only until its first suspension.
    @Test(
        "a Task.immediate a factory default starts, read through an object of an ended scope, reads it across an await"
    )
    func immediateTaskOfAFactoryReadThroughAPropertyKeepsTheScope() async {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
        let model = withInjectedValues {
            $0.reviewFlavor = "scoped"
        } operation: {
            ReviewProbeModel()
        }
        #expect(await model.probe.reads.value == ["scoped", "scoped"])
    }
}

/// Threads that each run their body once per round.
private final class RoundThreads: @unchecked Sendable {
    // `@unchecked Sendable`: the semaphores are made to be shared; the bodies are set once, before the threads start.
    private let bodies: [@Sendable () -> Void]
    private let go: [DispatchSemaphore]
    private let done = DispatchSemaphore(value: 0)

    init(_ bodies: (@Sendable () -> Void)...) {
        self.bodies = bodies
        go = bodies.map { _ in DispatchSemaphore(value: 0) }
        for (body, go) in zip(bodies, go) {
            let done = self.done
            Thread {
                while true {
                    go.wait()
                    body()
                    done.signal()
                }
            }.start()
        }
    }

    /// Runs `before`, then every body at once, and waits for them.
    func run(_ before: () -> Void = {}) {
        before()
        start()
        finish()
    }

    func start() {
        for go in go { go.signal() }
    }

    func finish() {
        for _ in bodies { done.wait() }
    }
}

/// An object the app made, which a test's cached default writes through.
private let reviewAppObjects = ReviewHolder()

/// Holds the model the threads write through.
private final class ReviewHolder: @unchecked Sendable {
    // `@unchecked Sendable`: set before a round starts, read by the round's thread.
    var model: ReviewModel?
}

private final class ReviewToken: Sendable {
    private let log: StringLog

    init(_ log: StringLog) {
        self.log = log
    }

    deinit { log.append(InjectedValues[\.reviewName]) }
}

private final class ReviewModel: Sendable {
    let nameProperty = Injected(\.reviewName)
    let countProperty = Injected(\.reviewCount)
    let serviceProperty = Injected(\.reviewService)

    var name: String { nameProperty.wrappedValue }

    var service: ReviewService { serviceProperty.wrappedValue }

    var count: Int {
        get { countProperty.wrappedValue }
        set { countProperty.wrappedValue = newValue }
    }
}

private final class ReviewRepo: Sendable {
    let api = InjectedValues[\.reviewName]
}

/// A dependency whose build takes a moment, as a real one's does.
private final class ReviewInner: Sendable {
    init() {
        var sum = 0
        for step in 0..<200 { sum &+= step }
        precondition(sum > 0)
    }
}

private final class ReviewOuter: Sendable {
    let inner = InjectedValues[\.reviewInner]
}

private final class ReviewConnection: Sendable {
    let tag: Int

    init(_ tag: Int) {
        self.tag = tag
    }
}

private struct ReviewConfig: Sendable {
    var host: String
    var user: String
}

/// What the slow build and the test that ends its scope signal each other.
private final class ReviewSignals: @unchecked Sendable {
    // `@unchecked Sendable`: semaphores are made to be signalled and waited on from any thread; both are constants.
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
}

/// A service built from another dependency, as a client is from its configuration.
private final class ReviewService: Sendable {
    let name = InjectedValues[\.reviewName]
}

/// A service whose build writes a dependency, then reads it back.
private final class ReviewWriter: Sendable {
    let other: String

    init() {
        InjectedValues[\.reviewOther] = "written by the build"
        other = InjectedValues[\.reviewOther]
    }
}

/// A service whose build resets the scope it is built for.
private final class ReviewResetter: Sendable {
    init() {
        InjectedValues.reset()
    }
}

private final class ReviewSlow: Sendable {
    let name: String

    init(name: String) {
        self.name = name
    }
}

/// A class with a property of its own type, as a tree's node or a router has.
private final class ReviewNode: @unchecked Sendable {
    // `@unchecked Sendable`: `link` is only read and written while holding `lock`.
    static let live = ReviewNode("live")

    let name: String
    private let lock = NSLock()
    private var link: ReviewNode?

    init(_ name: String) {
        self.name = name
    }

    var next: ReviewNode {
        get { lock.withLock { link } ?? self }
        set { lock.withLock { link = newValue } }
    }
}

private final class ReviewSession: Sendable {
    let name = Injected(\.reviewName)
    private let log: StringLog

    init(_ log: StringLog) {
        self.log = log
    }

    deinit { log.append(name.wrappedValue) }
}

private final class ReviewController: Sendable {
    let session = Injected(\.reviewSession)
}

private enum ReviewSlowKey: ReadOnlyInjectionKey {
    static let signals = ReviewSignals()

    /// Signals that it has begun, and finishes once the test lets it.
    static var currentValue: ReviewSlow {
        signals.started.signal()
        _ = signals.proceed.wait(timeout: .now() + 10)
        return ReviewSlow(name: InjectedValues[\.reviewName])
    }
}

private enum ReviewServiceKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewService { ReviewService() }
}

private enum ReviewWriterKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewWriter { ReviewWriter() }
}

/// A cached default that writes through the app's object.
private enum ReviewThroughAppKey: ReadOnlyInjectionKey {
    static var currentValue: Int {
        reviewAppObjects.model!.count = 42
        return 0
    }
}

private enum ReviewResetterKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewResetter { ReviewResetter() }
}

private enum ReviewBaseURLKey: ReadOnlyInjectionKey {
    static var currentValue: String { "https://api.example.com" }
}

private enum ReviewEndpointKey: ReadOnlyInjectionKey {
    static var currentValue: String { "https://api.example.com/v1" }
}

private enum ReviewAuditKey: ReadOnlyInjectionKey {
    static var currentValue: String { "" }
}

private enum ReviewNodeKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewNode { .live }
}

private enum ReviewSessionKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewSession? { nil }
}

private enum ReviewNameKey: ReadOnlyInjectionKey {
    static var currentValue: String { "live" }
}

private enum ReviewOtherKey: ReadOnlyInjectionKey {
    static var currentValue: String { "" }
}

private enum ReviewCountKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}

private enum ReviewTokenKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewToken? { nil }
}

private enum ReviewHostKey: ReadOnlyInjectionKey {
    static var currentValue: String { "example.com" }
}

private enum ReviewUserKey: ReadOnlyInjectionKey {
    static var currentValue: String { "guest" }
}

private enum ReviewRepoKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewRepo { ReviewRepo() }
}

private enum ReviewInnerKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewInner { ReviewInner() }
}

private enum ReviewOuterKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewOuter { ReviewOuter() }
}

private struct ReviewConnectionKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = ReviewConnection(0)
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var reviewName: String {
        get { Self[ReviewNameKey.self] }
        set { Self[ReviewNameKey.self] = newValue }
    }

    fileprivate var reviewOther: String {
        get { Self[ReviewOtherKey.self] }
        set { Self[ReviewOtherKey.self] = newValue }
    }

    fileprivate var reviewCount: Int {
        get { Self[ReviewCountKey.self] }
        set { Self[ReviewCountKey.self] = newValue }
    }

    fileprivate var reviewToken: ReviewToken? {
        get { Self[ReviewTokenKey.self] }
        set { Self[ReviewTokenKey.self] = newValue }
    }

    /// A composite accessor, whose getter reads two keys of the type a nested write writes.
    fileprivate var reviewConfig: ReviewConfig {
        get { ReviewConfig(host: Self[ReviewHostKey.self], user: Self[ReviewUserKey.self]) }
        set {
            Self[ReviewHostKey.self] = newValue.host
            Self[ReviewUserKey.self] = newValue.user
        }
    }

    fileprivate var reviewRepo: ReviewRepo {
        get { Self[ReviewRepoKey.self] }
        set { Self[ReviewRepoKey.self] = newValue }
    }

    fileprivate var reviewInner: ReviewInner {
        get { Self[ReviewInnerKey.self] }
        set { Self[ReviewInnerKey.self] = newValue }
    }

    fileprivate var reviewOuter: ReviewOuter {
        get { Self[ReviewOuterKey.self] }
        set { Self[ReviewOuterKey.self] = newValue }
    }

    fileprivate var reviewConnection: ReviewConnection {
        get { Self[ReviewConnectionKey.self] }
        set { Self[ReviewConnectionKey.self] = newValue }
    }
    fileprivate var reviewService: ReviewService {
        get { Self[ReviewServiceKey.self] }
        set { Self[ReviewServiceKey.self] = newValue }
    }

    fileprivate var reviewWriter: ReviewWriter {
        get { Self[ReviewWriterKey.self] }
        set { Self[ReviewWriterKey.self] = newValue }
    }

    fileprivate var reviewThroughApp: Int {
        get { Self[ReviewThroughAppKey.self] }
        set { Self[ReviewThroughAppKey.self] = newValue }
    }

    fileprivate var reviewResetter: ReviewResetter {
        get { Self[ReviewResetterKey.self] }
        set { Self[ReviewResetterKey.self] = newValue }
    }

    fileprivate var reviewSlow: ReviewSlow {
        get { Self[ReviewSlowKey.self] }
        set { Self[ReviewSlowKey.self] = newValue }
    }

    /// A setter that joins the written path to another dependency.
    fileprivate var reviewEndpoint: String {
        get { Self[ReviewEndpointKey.self] }
        set { Self[ReviewEndpointKey.self] = Self[ReviewBaseURLKey.self] + newValue }
    }

    /// A setter that reads the value it replaces.
    fileprivate var reviewAudited: String {
        get { Self[ReviewAuditKey.self] }
        set { Self[ReviewAuditKey.self] = Self[ReviewAuditKey.self] + "->" + newValue }
    }

    fileprivate var reviewNode: ReviewNode {
        get { Self[ReviewNodeKey.self] }
        set { Self[ReviewNodeKey.self] = newValue }
    }

    fileprivate var reviewSession: ReviewSession? {
        get { Self[ReviewSessionKey.self] }
        set { Self[ReviewSessionKey.self] = newValue }
    }

    fileprivate var reviewFlavor: String {
        get { Self[ReviewFlavorKey.self] }
        set { Self[ReviewFlavorKey.self] = newValue }
    }
}

private enum ReviewFlavorKey: ReadOnlyInjectionKey {
    static var currentValue: String { "default" }
}

/// A model that reads the flavor through its property.
private struct ReviewFlavorModel: Sendable {
    @Injected(\.reviewFlavor) var flavor
}

/// Starts a task at once that reads the flavor before and after its first suspension.
private final class ReviewProbe: Sendable {
    let reads: Task<[String], Never>

    init() {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            reads = Task { [] }
            return
        }
        reads = Task.immediate {
            let before = InjectedValues[\.reviewFlavor]
            await Task.yield()
            try? await Task.sleep(for: .milliseconds(1))
            return [before, InjectedValues[\.reviewFlavor]]
        }
    }
}

/// A factory whose value starts a task.
private enum ReviewProbeKey: ReadOnlyInjectionKey {
    static var currentValue: ReviewProbe { ReviewProbe() }
    static var lifetime: InjectionLifetime { .uncached }
}

extension InjectedValues {
    fileprivate var reviewProbe: ReviewProbe { Self[ReviewProbeKey.self] }
}

private struct ReviewProbeModel: Sendable {
    @Injected(\.reviewProbe) var probe
}
