import Foundation
import Injected
import InjectedTesting
import Testing

/// The defects reported against core v4, each reproduced the way it happens in the field, asserting what should happen.
///
/// Every wait is bounded: gates are opened by the test itself, and semaphores, spins and polls give up after a few
/// seconds, so a regression fails the test instead of hanging the run. The tests run one at a time: the race test
/// keeps two threads spinning for about half a second, which would slow the others.
@Suite("Core v5: the defects reported against core v4", .serialized)
struct CoreV5DefectTests {
    @Test("a Task started in a captured scope's run on a Dispatch queue reads the request's write after it returned")
    func taskStartedFromAQueueKeepsTheRequestsWrite() async {
        let gate = AsyncGate()
        let queued = V5Slot<Task<String, Never>>()
        let inline = V5Slot<Task<String, Never>>()
        let handedOff = withInjectedValues { _ in
        } operation: {
            InjectedValues[\.v5User] = "alice"
            let scope = InjectedValues.capture()
            DispatchQueue.global().async {
                queued.store(
                    scope.run {
                        Task {
                            await gate.wait()
                            return InjectedValues[\.v5User]
                        }
                    }
                )
            }
            // The same code, run inline, as a control.
            inline.store(
                scope.run {
                    Task {
                        await gate.wait()
                        return InjectedValues[\.v5User]
                    }
                }
            )
            // The request returns once the queue has started its work.
            return queued.wait(seconds: 10) != nil
        }
        #expect(handedOff, "the queue did not run the request's work within 10 seconds")
        // The request has returned; the tasks read now.
        await gate.open()
        #expect(await inline.wait(seconds: 10)?.value == "alice")
        #expect(await queued.wait(seconds: 10)?.value == "alice")
    }

    @Test("a task started two scopes deep reads the outer write when the outer and middle scopes end together, 1,000×")
    func outerAndNestedScopesEndingTogether() async {
        guard #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) else { return }
        // The outer scope and the middle scope's last task each run on a thread of their own, so that the two ends
        // happen on two threads at once, however busy the shared pool is.
        let outerThread = V5ThreadExecutor(core: 0)
        let middleThread = V5ThreadExecutor(core: 1)
        defer {
            outerThread.stop()
            middleThread.stop()
        }
        var misses: [Int: String] = [:]
        for iteration in 0..<1_000 {
            let gate = AsyncGate()
            let meeting = V5Meeting()
            // Which of the two ends goes first, and by how much, swept from −15 to +15 µs in steps of 250 ns over the
            // iterations, so that whatever the two paths cost, some iterations end both runs at the same moment.
            let offset = (iteration % 121 - 60) * 250
            let written = "outer write \(iteration)"
            let request = Task(executorPreference: outerThread) {
                await withInjectedValues {
                    $0.v5Stage = "configured"
                } operation: {
                    await Task.yield()
                    InjectedValues[\.v5Stage] = written
                    let handles = withInjectedValues {
                        $0.v5Depth = 1
                    } operation: {
                        let reader = withInjectedValues {
                            $0.v5Depth = 2
                        } operation: {
                            Task {
                                // Reads once both scopes have returned.
                                await gate.wait()
                                return InjectedValues[\.v5Stage]
                            }
                        }
                        // A task of the middle scope, which holds its run until the outer operation returns.
                        let holder = Task(executorPreference: middleThread) {
                            meeting.waitForTheMoment(delayedBy: max(offset, 0))
                        }
                        return (reader, holder)
                    }
                    meeting.setTheMoment(inMicroseconds: 500)
                    meeting.waitForTheMoment(delayedBy: max(-offset, 0))
                    return handles
                }
            }
            let (reader, holder) = await request.value
            await holder.value
            await gate.open()
            let read = await reader.value
            if read != written { misses[iteration] = read }
        }
        let lost = misses.count
        let firstLost = misses.keys.sorted().prefix(5).map { "iteration \($0) read \(misses[$0]!)" }
        #expect(lost == 0, "\(lost) of 1,000 reads lost the outer write: \(firstLost.joined(separator: ", "))…")
    }

    @Test("4,000 hops that each build on the last one's scope, overriding the attempt, read it and free earlier hops")
    func retryHopsReleaseEarlierHops() {
        // Each hop makes its model from the previous model's scope, as a pager or a retry loop does.
        var model = withInjectedValues {
            $0.v5Source = "client"
        } operation: {
            V5HopModel()
        }
        var earlyFromProperty: [V5WeakMarker] = []
        for attempt in 1...4_000 {
            let marker = V5HopMarker()
            if attempt <= 10 { earlyFromProperty.append(V5WeakMarker(marker)) }
            model = withInjectedValues(from: model.$attempt) {
                $0.v5Attempt = attempt
                $0.v5HopMarker = marker
            } operation: {
                V5HopModel()
            }
        }
        #expect(model.attempt == 4_000)
        #expect(model.source == "client")
        #expect(model.marker != nil)
        let keptByProperty = earlyFromProperty.filter { $0.marker != nil }.count
        #expect(keptByProperty == 0, "the model of hop 4,000 still holds \(keptByProperty) of hops 1–10's values")

        // The same with captures: each hop runs in the last hop's capture and opens its scope there.
        var scope = withInjectedValues {
            $0.v5Source = "client"
        } operation: {
            InjectedValues.capture()
        }
        var earlyFromCapture: [V5WeakMarker] = []
        for attempt in 1...4_000 {
            let marker = V5HopMarker()
            if attempt <= 10 { earlyFromCapture.append(V5WeakMarker(marker)) }
            scope = scope.run {
                withInjectedValues {
                    $0.v5Attempt = attempt
                    $0.v5HopMarker = marker
                } operation: {
                    InjectedValues.capture()
                }
            }
        }
        #expect(scope.run { InjectedValues[\.v5Attempt] } == 4_000)
        #expect(scope.run { InjectedValues[\.v5Source] } == "client")
        let keptByCapture = earlyFromCapture.filter { $0.marker != nil }.count
        #expect(keptByCapture == 0, "the capture of hop 4,000 still holds \(keptByCapture) of hops 1–10's values")
    }

    @Test(
        "a factory default that writes, read through a test's object on another thread, leaves the global store alone"
    )
    func factoryWriteOffTheTestsTaskStaysInTheTest() async {
        await #expect(processExitsWith: .success) {
            withTestInjectedValues(strict: false, reportingTo: { _ in }) { _ in
            } operation: {
                let model = V5FactoryModel()
                let done = DispatchSemaphore(value: 0)
                // Off the test's task, while the test still runs.
                DispatchQueue.global().async {
                    _ = model.product
                    done.signal()
                }
                precondition(done.wait(timeout: .now() + 10) == .success, "the queue did not run within 10 seconds")
            }
            let global = InjectedValues[\.v5Other]
            precondition(global == "default", "the factory's write reached the global store: \(global)")
        }
    }

    @Test("a cached build that read a fresh scope's run write and finished after the run ended is built again")
    func cachedBuildFromAnEndedRunIsRebuilt() {
        let hooks = V5BuildHooks()
        let firstBuild = V5Slot<V5Built>()
        let model = withInjectedValues(fresh: true) {
            $0.v5Config = "kept"
            $0.v5BuildHooks = hooks
        } operation: {
            let model = V5ConfigModel()
            Thread { firstBuild.store(model.built) }.start()
            // The build begins, the operation writes, the build reads the write, and the operation returns before the
            // build finishes.
            #expect(hooks.started.wait(timeout: .now() + 10) == .success, "the build did not begin")
            InjectedValues[\.v5Config] = "written in the operation"
            hooks.mayRead.signal()
            #expect(hooks.didRead.wait(timeout: .now() + 10) == .success, "the build did not read")
            return model
        }
        hooks.mayFinish.signal()
        let built = firstBuild.wait(seconds: 10)
        // Since issue 37 a cached default follows its inputs: the scope ended before the build finished, so the value
        // built from the operation's write is not kept, and the model gets one built from what it remembers.
        #expect(built?.config == "kept")
        let after = model.built
        #expect(after === built)
        #expect(after.config != "written in the operation", "the value built from the ended operation's write is kept")
        #expect(InjectedValues[\.v5Built].config != "written in the operation")
        withInjectedValues(fresh: true) {
            $0.v5Config = "a new fresh scope's"
        } operation: {
            #expect(InjectedValues[\.v5Built].config == "a new fresh scope's")
        }
    }

    @Test("a Task.immediate started in an update closure or a cached default reads the same before and after an await")
    func immediateTaskReadsTheSameAcrossAnAwait() async {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
        // A task started in an update closure inherits what the closure binds, a view of the new scope, which it
        // reads while the scope runs, before its first await and after it alike.
        let started = V5TaskBox()
        let inUpdate = await withInjectedValues {
            $0.v5Flavor = "scoped"
            started.task = v5ReadsAcrossAnAwait()
        } operation: {
            await started.task?.value ?? []
        }
        #expect(inUpdate.count == 2 && inUpdate.first == inUpdate.last, "read \(inUpdate) before and after the await")

        let inDefault = await withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.v5Flavor = "mock"
        } operation: {
            await InjectedValues[\.v5ImmediateProbe].reads?.value ?? []
        }
        #expect(
            inDefault == ["mock", "mock"],
            "the cached default's task read \(inDefault) before and after the await"
        )
    }

    @Test("a cached service that makes a child from one of its own properties with from: in a test reports nothing")
    func fromInsideACachedServiceReportsNothing() {
        let reports = StringLog()
        let network = withTestInjectedValues(strict: false, reportingTo: reports.append) {
            $0.v5Network = "mock"
        } operation: {
            InjectedValues[\.v5Catalog].makeDetail().network
        }
        #expect(reports.entries.isEmpty, "reported: \(reports.entries)")
        #expect(network == "mock")
    }

    @Test("a cached token refresher built in a test sees the test's value in its task, later reads and deinit")
    func cachedRefresherKeepsTheTestsValue() async {
        // Built on first read, as a cached default.
        let builtLog = StringLog()
        let built = await withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.v5Clock = "mock"
            $0.v5DeinitLog = builtLog
        } operation: {
            let refresher = InjectedValues[\.v5Refresher]
            return await refresher.reading()
        }
        #expect(built == V5RefresherReading(atInit: "mock", inTask: "mock", later: "mock"))
        #expect(await builtLog.eventuallyHasOne(), "the refresher built as a default was not released")
        #expect(builtLog.entries == ["mock"], "its deinit read \(builtLog.entries)")

        // Set in the test's update closure.
        let setLog = StringLog()
        let set = await withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.v5Clock = "mock"
            $0.v5DeinitLog = setLog
            $0.v5Refresher = V5TokenRefresher()
        } operation: {
            await InjectedValues[\.v5Refresher].reading()
        }
        #expect(set == V5RefresherReading(atInit: "mock", inTask: "mock", later: "mock"))
        #expect(await setLog.eventuallyHasOne(), "the refresher set in the update closure was not released")
        #expect(setLog.entries == ["mock"], "its deinit read \(setLog.entries)")
    }

    @Test("an object a helper made in a fresh scope outside any test reads that scope's mock inside a plain scope")
    func freshHelperObjectInsideAPlainScope() {
        let checkout = v5MakeCheckoutWithAMock()
        #expect(checkout.network == "mock")
        let read = withInjectedValues { _ in
        } operation: {
            checkout.network
        }
        #expect(read == "mock")
        let readWithAnotherOverride = withInjectedValues {
            $0.v5Other = "unrelated"
        } operation: {
            checkout.network
        }
        #expect(readWithAnotherOverride == "mock")
    }
}

// MARK: - Helpers

/// A value handed from another thread, which the test waits for, for a few seconds at most.
private final class V5Slot<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var value: Value?
    private let ready = DispatchSemaphore(value: 0)

    func store(_ value: Value) {
        lock.withLock { self.value = value }
        ready.signal()
    }

    /// The value, or `nil` if it was not stored within `seconds`.
    func wait(seconds: Double) -> Value? {
        if let value = lock.withLock({ value }) { return value }
        guard ready.wait(timeout: .now() + seconds) == .success else { return nil }
        ready.signal()
        return lock.withLock { value }
    }
}

/// A moment that one thread sets, shortly ahead, and two threads spin until, so that both act at once.
///
/// Every spin is bounded: a thread that comes late goes on at once, and one that never sees the moment set gives up
/// after five seconds.
private final class V5Meeting: @unchecked Sendable {
    // `@unchecked Sendable`: `moment` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var moment: UInt64?

    /// Sets the moment `microseconds` from now.
    func setTheMoment(inMicroseconds microseconds: UInt64) {
        let now = DispatchTime.now().uptimeNanoseconds
        lock.withLock { moment = now + microseconds * 1_000 }
    }

    /// Spins until `nanoseconds` after the moment, once it is set.
    func waitForTheMoment(delayedBy nanoseconds: Int) {
        let giveUp = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
        var target: UInt64?
        while target == nil, DispatchTime.now().uptimeNanoseconds < giveUp {
            target = lock.withLock { moment }.map { $0 + UInt64(nanoseconds) }
        }
        guard let target else { return }
        while DispatchTime.now().uptimeNanoseconds < min(target, giveUp) {}
    }
}

/// An executor that runs the jobs of the tasks that prefer it on one thread of its own, which polls for them until
/// stopped.
///
/// The thread polls instead of sleeping, and on Linux keeps to the core it is given, so that two such threads run at
/// once: otherwise the scheduler often puts both on one core, where one waits while the other spins.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private final class V5ThreadExecutor: TaskExecutor, @unchecked Sendable {
    // `@unchecked Sendable`: `jobs` and `stopping` are only read and written while holding `lock`.
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private var stopping = false

    init(core: Int) {
        Thread { [self] in
            v5KeepToCore(core)
            run()
        }.start()
    }

    func enqueue(_ job: UnownedJob) {
        lock.withLock { jobs.append(job) }
    }

    /// Lets the thread exit once it has run the jobs enqueued so far.
    func stop() {
        lock.withLock { stopping = true }
    }

    private func run() {
        while true {
            let (job, stopped): (UnownedJob?, Bool) = lock.withLock {
                (jobs.isEmpty ? nil : jobs.removeFirst(), stopping)
            }
            if let job {
                job.runSynchronously(on: asUnownedTaskExecutor())
            } else if stopped {
                return
            } else {
                sched_yield()
            }
        }
    }
}

/// Keeps the calling thread on one core, on Linux where the process may use it; elsewhere, does nothing.
private func v5KeepToCore(_ core: Int) {
    #if os(Linux)
    // `sched_setaffinity` is a GNU extension that the Glibc module does not import, so it is looked up by name.
    typealias SetAffinity = @convention(c) (Int32, Int, UnsafeRawPointer) -> Int32
    guard core < ProcessInfo.processInfo.activeProcessorCount, let symbol = dlsym(nil, "sched_setaffinity") else {
        return
    }
    var mask = [UInt64](repeating: 0, count: 16)
    mask[core / 64] = 1 << UInt64(core % 64)
    _ = mask.withUnsafeBytes { unsafeBitCast(symbol, to: SetAffinity.self)(0, $0.count, $0.baseAddress!) }
    #endif
}

// MARK: Hops

/// A value each hop writes, to tell whether hop 4,000 still holds the earlier ones.
private final class V5HopMarker: Sendable {}

/// A weak reference to a hop's marker.
private final class V5WeakMarker {
    weak var marker: V5HopMarker?

    init(_ marker: V5HopMarker) {
        self.marker = marker
    }
}

/// The model of one hop: a page, or an attempt.
private struct V5HopModel: Sendable {
    @Injected(\.v5Attempt) var attempt
    @Injected(\.v5Source) var source
    @Injected(\.v5HopMarker) var marker
}

// MARK: Factory default that writes

/// A product a factory default makes, writing another dependency as it does.
private struct V5Product: Sendable {
    init() {
        InjectedValues[\.v5Other] = "written by the factory"
    }
}

private struct V5FactoryModel: Sendable {
    @Injected(\.v5Product) var product
}

// MARK: Cached build that outlives the run

/// Makes the first build of `V5BuiltKey` in a scope that sets them wait for the test at each step.
private final class V5BuildHooks: @unchecked Sendable {
    // `@unchecked Sendable`: `used` is only read and written while holding `lock`; semaphores are thread-safe.
    let started = DispatchSemaphore(value: 0)
    let mayRead = DispatchSemaphore(value: 0)
    let didRead = DispatchSemaphore(value: 0)
    let mayFinish = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var used = false

    /// Whether this is the first build, which the test steps through; later builds run straight through.
    func claim() -> Bool {
        lock.withLock {
            defer { used = true }
            return !used
        }
    }
}

/// What a cached default built from the configuration.
private final class V5Built: Sendable {
    let config: String

    init() {
        let hooks = InjectedValues[\.v5BuildHooks]
        let stepped = hooks?.claim() == true
        if stepped, let hooks {
            hooks.started.signal()
            _ = hooks.mayRead.wait(timeout: .now() + 10)
        }
        config = InjectedValues[\.v5Config]
        if stepped, let hooks {
            hooks.didRead.signal()
            _ = hooks.mayFinish.wait(timeout: .now() + 10)
        }
    }
}

private struct V5ConfigModel: Sendable {
    @Injected(\.v5Built) var built
}

// MARK: Task.immediate

/// Starts a task at once that reads the flavor before and after its first suspension.
@available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *)
private func v5ReadsAcrossAnAwait() -> Task<[String], Never> {
    Task.immediate {
        let before = InjectedValues[\.v5Flavor]
        await Task.yield()
        return [before, InjectedValues[\.v5Flavor]]
    }
}

/// Holds a task an update closure starts, for the operation to await.
private final class V5TaskBox: @unchecked Sendable {
    // `@unchecked Sendable`: set in the update closure, read in the operation, on one task, one after the other.
    var task: Task<[String], Never>?
}

/// A cached dependency whose default starts a `Task.immediate`.
private final class V5ImmediateProbe: Sendable {
    let reads: Task<[String], Never>?

    init() {
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            reads = v5ReadsAcrossAnAwait()
        } else {
            reads = nil
        }
    }
}

// MARK: from: inside a cached service

/// A cached service that makes children from its own scope.
private final class V5CatalogService: @unchecked Sendable {
    // `@unchecked Sendable`: the wrapper is never reassigned, and what it reads is the store's to guard.
    @Injected(\.v5Network) var network

    func makeDetail() -> V5Detail {
        withInjectedValues(from: $network) { V5Detail() }
    }
}

private struct V5Detail: Sendable {
    @Injected(\.v5Network) var network
}

// MARK: Token refresher

/// What a token refresher read: in its initializer, in the task it starts there, and later on another thread.
private struct V5RefresherReading: Equatable, Sendable {
    let atInit: String
    let inTask: String
    let later: String
}

/// A cached service that starts a task in its initializer and reads its clock again later and in its deinit.
private final class V5TokenRefresher: @unchecked Sendable {
    // `@unchecked Sendable`: the wrapper is never reassigned, and what it reads is the store's to guard.
    @Injected(\.v5Clock) var clock
    private let clockAtInit: String
    private let refresh: Task<String, Never>
    private let deinitLog: StringLog?

    init() {
        clockAtInit = InjectedValues[\.v5Clock]
        deinitLog = InjectedValues[\.v5DeinitLog]
        refresh = Task { InjectedValues[\.v5Clock] }
    }

    func reading() async -> V5RefresherReading {
        let later = await Task.detached { self.clock }.value
        return V5RefresherReading(atInit: clockAtInit, inTask: await refresh.value, later: later)
    }

    deinit {
        deinitLog?.append(clock)
    }
}

// MARK: Fresh helper

private struct V5Checkout: Sendable {
    @Injected(\.v5Network) var network
}

/// A helper, called outside any test, that makes its object in a fresh scope with a mock.
private func v5MakeCheckoutWithAMock() -> V5Checkout {
    withInjectedValues(fresh: true) {
        $0.v5Network = "mock"
    } operation: {
        V5Checkout()
    }
}

// MARK: - Keys

extension InjectedValues {
    fileprivate var v5User: String {
        get { Self[V5UserKey.self] }
        set { Self[V5UserKey.self] = newValue }
    }

    fileprivate var v5Stage: String {
        get { Self[V5StageKey.self] }
        set { Self[V5StageKey.self] = newValue }
    }

    fileprivate var v5Depth: Int {
        get { Self[V5DepthKey.self] }
        set { Self[V5DepthKey.self] = newValue }
    }

    fileprivate var v5Attempt: Int {
        get { Self[V5AttemptKey.self] }
        set { Self[V5AttemptKey.self] = newValue }
    }

    fileprivate var v5Source: String {
        get { Self[V5SourceKey.self] }
        set { Self[V5SourceKey.self] = newValue }
    }

    fileprivate var v5HopMarker: V5HopMarker? {
        get { Self[V5HopMarkerKey.self] }
        set { Self[V5HopMarkerKey.self] = newValue }
    }

    fileprivate var v5Other: String {
        get { Self[V5OtherKey.self] }
        set { Self[V5OtherKey.self] = newValue }
    }

    fileprivate var v5Product: V5Product {
        get { Self[V5ProductKey.self] }
        set { Self[V5ProductKey.self] = newValue }
    }

    fileprivate var v5Config: String {
        get { Self[V5ConfigKey.self] }
        set { Self[V5ConfigKey.self] = newValue }
    }

    fileprivate var v5BuildHooks: V5BuildHooks? {
        get { Self[V5BuildHooksKey.self] }
        set { Self[V5BuildHooksKey.self] = newValue }
    }

    fileprivate var v5Built: V5Built {
        get { Self[V5BuiltKey.self] }
        set { Self[V5BuiltKey.self] = newValue }
    }

    fileprivate var v5Flavor: String {
        get { Self[V5FlavorKey.self] }
        set { Self[V5FlavorKey.self] = newValue }
    }

    fileprivate var v5ImmediateProbe: V5ImmediateProbe {
        get { Self[V5ImmediateProbeKey.self] }
        set { Self[V5ImmediateProbeKey.self] = newValue }
    }

    fileprivate var v5Network: String {
        get { Self[V5NetworkKey.self] }
        set { Self[V5NetworkKey.self] = newValue }
    }

    fileprivate var v5Catalog: V5CatalogService {
        get { Self[V5CatalogKey.self] }
        set { Self[V5CatalogKey.self] = newValue }
    }

    fileprivate var v5Clock: String {
        get { Self[V5ClockKey.self] }
        set { Self[V5ClockKey.self] = newValue }
    }

    fileprivate var v5DeinitLog: StringLog? {
        get { Self[V5DeinitLogKey.self] }
        set { Self[V5DeinitLogKey.self] = newValue }
    }

    fileprivate var v5Refresher: V5TokenRefresher {
        get { Self[V5RefresherKey.self] }
        set { Self[V5RefresherKey.self] = newValue }
    }
}

private enum V5UserKey: ReadOnlyInjectionKey {
    static let currentValue = "anonymous"
}

private enum V5StageKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum V5DepthKey: ReadOnlyInjectionKey {
    static let currentValue = 0
}

private enum V5AttemptKey: ReadOnlyInjectionKey {
    static let currentValue = 0
}

private enum V5SourceKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum V5HopMarkerKey: ReadOnlyInjectionKey {
    static var currentValue: V5HopMarker? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum V5OtherKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

/// A factory: a new product, which writes `v5Other`, on every read.
private enum V5ProductKey: ReadOnlyInjectionKey {
    static var currentValue: V5Product { V5Product() }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum V5ConfigKey: ReadOnlyInjectionKey {
    static let currentValue = "live"
}

private enum V5BuildHooksKey: ReadOnlyInjectionKey {
    static var currentValue: V5BuildHooks? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum V5BuiltKey: ReadOnlyInjectionKey {
    static var currentValue: V5Built { V5Built() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum V5FlavorKey: ReadOnlyInjectionKey {
    static let currentValue = "live"
}

private enum V5ImmediateProbeKey: ReadOnlyInjectionKey {
    static var currentValue: V5ImmediateProbe { V5ImmediateProbe() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum V5NetworkKey: ReadOnlyInjectionKey {
    static let currentValue = "live"
}

private enum V5CatalogKey: ReadOnlyInjectionKey {
    static var currentValue: V5CatalogService { V5CatalogService() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum V5ClockKey: ReadOnlyInjectionKey {
    static let currentValue = "live"
}

private enum V5DeinitLogKey: ReadOnlyInjectionKey {
    static var currentValue: StringLog? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum V5RefresherKey: ReadOnlyInjectionKey {
    static var currentValue: V5TokenRefresher { V5TokenRefresher() }
    static var lifetime: InjectionLifetime { .cached }
}
