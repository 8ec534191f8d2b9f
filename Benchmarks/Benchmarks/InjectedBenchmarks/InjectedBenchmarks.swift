import ArticleBaseline
import Benchmark
import Dependencies
import Foundation
import Injected
import ManyKeys
import Swinject

// Every read benchmark reads the same kind of dependency: a small struct behind a protocol, so the cost measured is
// the container's, not the value's reference counting.
//
// Two kinds of benchmark run here. The first kind times each read on its own, for the table of absolute costs. The
// second kind compares two reads in pairs of batches, for the ratios: this machine is a virtual machine whose speed
// changes in steps, often by nearly 2×, while a process runs (other guests share its physical cores), so two
// benchmarks timed a second apart can see different machines. A paired benchmark times a batch of one read and then
// a batch of the other, about a tenth of a millisecond each, in both orders, and records each pair's ratio; the
// median ratio holds whichever speed the machine had at the time.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 1_000,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 2_000
    )

    // MARK: Reads, each on its own

    Benchmark("Article pattern: @Injected read") { articleReads($0.scaledIterations.count) }
    Benchmark("Injected: @Injected read, nothing overridden") { injectedReads($0.scaledIterations.count) }
    // Each read benchmark reads once before it starts measuring: after a write, a thread's first read of the global
    // store copies the value into its view, which allocates. That does not happen again on later reads.
    Benchmark("Injected: @Injected read, global override") { benchmark in
        InjectedValues[\.provider] = Provider(id: 2)
        injectedReads(1)
        benchmark.startMeasurement()
        injectedReads(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
        InjectedValues.reset()
    }
    Benchmark("Injected: @Injected read, inside one scope") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 3)
        } operation: {
            injectedReads(1)
            benchmark.startMeasurement()
            injectedReads(benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
    }
    // An object made in a scope keeps it: read where it was made, and after the scope has ended, outside any scope.
    Benchmark("Injected: @Injected read, made in a scope, inside it") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 5)
        } operation: {
            let reads = scopedReads(InjectedController())
            reads(1)
            benchmark.startMeasurement()
            reads(benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
    }
    Benchmark("Injected: @Injected read, made in a scope, after it ended") { benchmark in
        let reads = scopedReads(controllerMadeInEndedScope())
        reads(1)
        benchmark.startMeasurement()
        reads(benchmark.scaledIterations.count)
        benchmark.stopMeasurement()
    }
    Benchmark("Article pattern: make an @Injected property") { articlePropertiesMade($0.scaledIterations.count) }
    Benchmark("Injected: make an @Injected property in a scope") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 5)
        } operation: {
            benchmark.startMeasurement()
            injectedPropertiesMade(benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
    }
    Benchmark("swift-dependencies: @Dependency read") { dependenciesReads($0.scaledIterations.count) }
    let container = swinjectContainer()
    Benchmark("Swinject: resolve") { swinjectReads(container, $0.scaledIterations.count) }
    for keys in [10, 10_000] {
        Benchmark("Injected: read with \(keys) keys overridden") { benchmark in
            overrideIndexedKeys(count: keys)
            let key = indexedKey(keys / 2)
            indexedReads(key, 1)
            benchmark.startMeasurement()
            indexedReads(key, benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
            InjectedValues.reset()
        }
    }

    // MARK: Reads, compared in pairs

    pairedBenchmark("Injected nothing overridden / article pattern", subject: injectedReads, reference: articleReads)
    pairedBenchmark("Injected global override / article pattern") { benchmark in
        InjectedValues[\.provider] = Provider(id: 2)
        measurePairs(benchmark, subject: injectedReads, reference: articleReads)
        InjectedValues.reset()
    }
    pairedBenchmark("Injected inside one scope / article pattern") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 3)
        } operation: {
            measurePairs(benchmark, subject: injectedReads, reference: articleReads)
        }
    }
    pairedBenchmark("Injected made in a scope, read inside it / article pattern") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 5)
        } operation: {
            measurePairs(benchmark, subject: scopedReads(InjectedController()), reference: articleReads)
        }
    }
    let keptController = controllerMadeInEndedScope()
    pairedBenchmark(
        "Injected made in a scope, read after it ended / article pattern",
        subject: scopedReads(keptController),
        reference: articleReads
    )
    pairedBenchmark("Injected property made in a scope / article property made") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 5)
        } operation: {
            measurePairs(benchmark, subject: injectedPropertiesMade, reference: articlePropertiesMade)
        }
    }
    // Carrying a scope into escaping work: capture it, then run in it, against opening a fresh scope.
    pairedBenchmark("Injected capture and run / enter a fresh scope") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 7)
        } operation: {
            measurePairs(benchmark, subject: capturedRuns, reference: freshScopes)
        }
    }
    // An article-style key, whose variable the store reads holding the thread's variable lock.
    pairedBenchmark("Injected article-style key / article pattern", subject: settableReads, reference: articleReads)
    // A callback that captures again in each run must hold one scope, however many hops it has made.
    let tenHops = captureHops(10)
    let manyHops = captureHops(10_000)
    pairedBenchmark(
        "Injected read after 10,000 capture hops / after 10 hops",
        subject: { count in manyHops.run { injectedReads(count) } },
        reference: { count in tenHops.run { injectedReads(count) } }
    )
    pairedBenchmark("swift-dependencies / Injected", subject: dependenciesReads, reference: injectedReads)
    pairedBenchmark("Swinject / Injected", subject: { swinjectReads(container, $0) }, reference: injectedReads)
    // The store holds 10 or 10,000 keys, never both at once, so each is compared with the article's read, and the
    // report divides the two ratios.
    for keys in [10, 10_000] {
        pairedBenchmark("Injected \(keys) keys overridden / article pattern") { benchmark in
            overrideIndexedKeys(count: keys)
            let key = indexedKey(keys / 2)
            measurePairs(benchmark, subject: { indexedReads(key, $0) }, reference: articleReads)
            InjectedValues.reset()
        }
    }
    // Two threads against one: each batch is 100,000 reads per thread. The article's pattern, which takes no lock, is
    // the control. (Child tasks are measured by the TaskScaling program: in this harness, a benchmark's child tasks
    // ran one after the other even for the article's pattern.)
    let scalingConfiguration = Benchmark.Configuration(
        metrics: [.throughput, scaling],
        scalingFactor: .one,
        maxDuration: .seconds(4)
    )
    let workers: [(String, @Sendable (Int) -> Void)] = [("Injected", injectedReads), ("Article pattern", articleReads)]
    for (name, reads) in workers {
        Benchmark("Paired: \(name) two threads / one thread", configuration: scalingConfiguration) { benchmark in
            measureScaling(benchmark) { threads in onThreads(threads) { reads(100_000) } }
        }
    }

    // MARK: Scopes and writes, against thread count

    // A server's per-request scope: one override, and 20 reads by a handler made once, before any request.
    // swift-dependencies runs the same request with `withDependencies`.
    pairedBenchmark(
        "swift-dependencies per-request scope / Injected",
        subject: dependenciesRequests,
        reference: requests
    )
    // The same requests, and a test's fresh scope that builds five `.cached` dependencies, with 500 idle threads
    // that have each read a dependency once (a large thread pool) against none. Each pair starts and joins the idle
    // threads outside the timed batches.
    let idleConfiguration = Benchmark.Configuration(
        metrics: [.throughput, scaling],
        scalingFactor: .one,
        maxDuration: .seconds(4)
    )
    let idleWork: [(String, Batch)] = [
        ("per-request scopes", requests),
        ("fresh scopes building five cached dependencies", freshScopesBuildingFive),
    ]
    for (name, work) in idleWork {
        let label = "Paired: Injected \(name) with 500 idle threads / no idle threads"
        Benchmark(label, configuration: idleConfiguration) { benchmark in
            measureIdleThreads(benchmark, count: 500) { work(1_000) }
        }
    }
    Benchmark("Paired: Injected per-request scopes two threads / one thread", configuration: scalingConfiguration) {
        benchmark in
        measureScaling(benchmark) { threads in onThreads(threads) { requests(10_000) } }
    }
    // Objects made in scopes that one thread opened, each read by a thread of its own: the scopes share nothing, so two
    // threads read twice as much as one. (Scopes that borrowed the lock of the thread opening them read no faster.)
    let madeOnOneThread = (0..<2).map { index in
        withInjectedValues {
            $0.provider = Provider(id: index)
        } operation: {
            InjectedController()
        }
    }
    Benchmark(
        "Paired: Injected reads through scopes opened on one thread two threads / one thread",
        configuration: scalingConfiguration
    ) { benchmark in
        measureScaling(benchmark) { threads in
            onThreads(threads) { index in
                let controller = madeOnOneThread[index]
                for _ in 0..<100_000 { blackHole(controller.provider.id) }
            }
        }
    }

    // MARK: Other operations

    for overrides in [1, 10] {
        Benchmark("Injected: enter and leave a scope with \(overrides) override\(overrides == 1 ? "" : "s")") {
            benchmark in
            let keys = (0..<overrides).map(indexedKey)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                withInjectedValues {
                    for (index, key) in keys.enumerated() { overrideIndexedKey(key, with: index, in: &$0) }
                } operation: {
                    blackHole(0)
                }
            }
            benchmark.stopMeasurement()
        }
    }

    Benchmark("Injected: capture a scope and run in it") { benchmark in
        withInjectedValues {
            $0.provider = Provider(id: 7)
        } operation: {
            benchmark.startMeasurement()
            capturedRuns(benchmark.scaledIterations.count)
            benchmark.stopMeasurement()
        }
    }

    Benchmark("Injected: first read of a .cached key") { benchmark in
        withInjectedValues(fresh: true, { _ in }) {
            for _ in benchmark.scaledIterations {
                InjectedValues.reset()
                blackHole(InjectedValues[\.cachedService].id)
            }
        }
    }

    Benchmark("Injected: global write") { benchmark in
        for iteration in benchmark.scaledIterations { InjectedValues[\.provider] = Provider(id: iteration) }
        benchmark.stopMeasurement()
        InjectedValues.reset()
    }

    // A global write visits every thread that has read the global store; this is what it costs with 500 of them.
    let idleWrites = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 20
    )
    Benchmark("Injected: global write with 500 idle threads", configuration: idleWrites) { benchmark in
        let threads = IdleThreads(count: 500)
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations { InjectedValues[\.provider] = Provider(id: iteration) }
        benchmark.stopMeasurement()
        threads.join()
        InjectedValues.reset()
    }
}

/// A batch of reads, as many as the argument says.
///
/// Each library's batch reads in its own loop, so one call per batch is all the overhead a benchmark adds, and it is
/// the same for every library.
typealias Batch = (Int) -> Void

func articleReads(_ count: Int) {
    let controller = ArticleController()
    for _ in 0..<count { blackHole(controller.provider.id) }
}

func injectedReads(_ count: Int) {
    let controller = InjectedController()
    for _ in 0..<count { blackHole(controller.provider.id) }
}

func settableReads(_ count: Int) {
    let controller = SettableController()
    for _ in 0..<count { blackHole(controller.provider.id) }
}

/// A scope captured `hops` times, each time inside a run of the previous capture, as a polling callback does.
func captureHops(_ hops: Int) -> InjectedValues.CapturedScope {
    var captured = withInjectedValues {
        $0.provider = Provider(id: 8)
    } operation: {
        InjectedValues.capture()
    }
    for _ in 0..<hops {
        captured = captured.run { InjectedValues.capture() }
    }
    return captured
}

/// Reads through a controller that was made in a scope, wherever the batch runs.
func scopedReads(_ controller: InjectedController) -> Batch {
    { count in for _ in 0..<count { blackHole(controller.provider.id) } }
}

/// A controller made in a scope with one override, which has ended by the time this returns.
func controllerMadeInEndedScope() -> InjectedController {
    withInjectedValues {
        $0.provider = Provider(id: 6)
    } operation: {
        InjectedController()
    }
}

/// Captures the active scope and runs in it, each time, as a completion handler made and called in turn would.
func capturedRuns(_ count: Int) {
    for _ in 0..<count {
        let scope = InjectedValues.capture()
        scope.run { blackHole(0) }
    }
}

/// Opens and closes a fresh scope with no overrides, each time.
func freshScopes(_ count: Int) {
    for _ in 0..<count {
        withInjectedValues(fresh: true, { _ in }) { blackHole(0) }
    }
}

func articlePropertiesMade(_ count: Int) {
    for _ in 0..<count { blackHole(ArticleController()) }
}

func injectedPropertiesMade(_ count: Int) {
    for _ in 0..<count { blackHole(InjectedController()) }
}

func dependenciesReads(_ count: Int) {
    let controller = DependenciesController()
    for _ in 0..<count { blackHole(controller.provider.id) }
}

func swinjectContainer() -> Container {
    let container = Container()
    container.register((any Providing).self) { _ in Provider(id: 4) }
    return container
}

func swinjectReads(_ container: Container, _ count: Int) {
    for _ in 0..<count { blackHole(container.resolve((any Providing).self)!.id) }
}

/// `count` requests, each a scope with one override in which the server's long-lived handler reads it 20 times.
func requests(_ count: Int) {
    let handler = InjectedController()
    for request in 0..<count {
        withInjectedValues {
            $0.provider = Provider(id: request)
        } operation: {
            for _ in 0..<20 { blackHole(handler.provider.id) }
        }
    }
}

/// The same requests as ``requests(_:)``, with swift-dependencies.
func dependenciesRequests(_ count: Int) {
    let handler = DependenciesController()
    for request in 0..<count {
        withDependencies {
            $0.provider = Provider(id: request)
        } operation: {
            for _ in 0..<20 { blackHole(handler.provider.id) }
        }
    }
}

/// `count` tests' worth of set-up: each a fresh scope that builds five `.cached` dependencies.
func freshScopesBuildingFive(_ count: Int) {
    for _ in 0..<count {
        withInjectedValues(fresh: true) { _ in
        } operation: {
            blackHole(InjectedValues[\.cachedOne].id)
            blackHole(InjectedValues[\.cachedTwo].id)
            blackHole(InjectedValues[\.cachedThree].id)
            blackHole(InjectedValues[\.cachedFour].id)
            blackHole(InjectedValues[\.cachedFive].id)
        }
    }
}

/// Reads `key` `count` times.
///
/// The key arrives as an existential and is opened once, here, so each read passes its conformance to the store as a
/// read of a key declared in source does.
func indexedReads<Key: IndexedInjectionKey>(_ key: Key.Type, _ count: Int) {
    for _ in 0..<count { blackHole(InjectedValues[key]) }
}

// MARK: - Pairs

/// A pair's cost ratio, in thousandths: 1,000 means the two cost the same.
let costRatio = BenchmarkMetric.custom("Cost ratio (thousandths)", polarity: .prefersSmaller, useScalingFactor: false)

/// Two threads' throughput over one thread's, in thousandths: 2,000 is perfect scaling.
let scaling = BenchmarkMetric.custom("Scaling (thousandths)", polarity: .prefersLarger, useScalingFactor: false)

/// Registers a benchmark that compares `subject` with `reference` in pairs of batches, with nothing to set up.
func pairedBenchmark(_ name: String, subject: @escaping Batch, reference: @escaping Batch) {
    pairedBenchmark(name) { measurePairs($0, subject: subject, reference: reference) }
}

/// Registers a benchmark named "Paired: `name`" whose body calls ``measurePairs(_:subject:reference:)`` once per
/// iteration, after any setting up it needs.
func pairedBenchmark(_ name: String, body: @escaping (Benchmark) -> Void) {
    Benchmark(
        "Paired: \(name)",
        configuration: .init(
            metrics: [.throughput, costRatio],
            warmupIterations: 10,
            scalingFactor: .one,
            maxDuration: .seconds(2),
            maxIterations: 1_000
        ),
        closure: body
    )
}

/// Times a batch of 1,000 `subject` reads and a batch of 1,000 `reference` reads, in both orders, and records each
/// pair's ratio of the subject's time to the reference's.
func measurePairs(_ benchmark: Benchmark, subject: Batch, reference: Batch) {
    let clock = ContinuousClock()
    let batch = 1_000
    for subjectFirst in [true, false] {
        var subjectTime = Duration.zero
        var referenceTime = Duration.zero
        if subjectFirst {
            subjectTime = clock.measure { subject(batch) }
            referenceTime = clock.measure { reference(batch) }
        } else {
            referenceTime = clock.measure { reference(batch) }
            subjectTime = clock.measure { subject(batch) }
        }
        benchmark.measurement(costRatio, Int((subjectTime / referenceTime * 1_000).rounded()))
    }
}

/// Records, for pairs of batches, two threads' throughput over one thread's.
///
/// Each pair times one thread's batch and two threads' batches at once, in both orders. `run` starts the given
/// number of threads and returns when all of them are done.
func measureScaling(_ benchmark: Benchmark, _ run: (Int) -> Void) {
    let clock = ContinuousClock()
    for oneFirst in [true, false] {
        var one = Duration.zero
        var two = Duration.zero
        if oneFirst {
            one = clock.measure { run(1) }
            two = clock.measure { run(2) }
        } else {
            two = clock.measure { run(2) }
            one = clock.measure { run(1) }
        }
        benchmark.measurement(scaling, Int((one / two * 2_000).rounded()))
    }
}

/// Records, for pairs of batches, the throughput of `batch` while `count` idle threads exist over its throughput
/// while none do, in both orders.
///
/// The idle threads each read a dependency once, as the threads of a large pool that has served requests do, and
/// then wait; they are started before, and joined after, the timed batch.
func measureIdleThreads(_ benchmark: Benchmark, count: Int, _ batch: () -> Void) {
    let clock = ContinuousClock()
    for idleFirst in [true, false] {
        var none = Duration.zero
        var idle = Duration.zero
        if !idleFirst { none = clock.measure(batch) }
        let threads = IdleThreads(count: count)
        idle = clock.measure(batch)
        threads.join()
        if idleFirst { none = clock.measure(batch) }
        benchmark.measurement(scaling, Int((none / idle * 1_000).rounded()))
    }
}

/// Threads that have each read a dependency once and wait, until `join()` lets them finish.
///
/// POSIX threads rather than `Thread`, so that `join()` returns only once every thread has exited, after the library
/// has forgotten it.
final class IdleThreads {
    #if canImport(Darwin)
    private var handles: [pthread_t?] = []
    #else
    private var handles: [pthread_t] = []
    #endif

    init(count: Int) {
        for _ in 0..<count {
            #if canImport(Darwin)
            var handle: pthread_t?
            #else
            var handle = pthread_t()
            #endif
            let status = pthread_create(
                &handle,
                nil,
                { _ in
                    blackHole(InjectedValues[\.provider].id)
                    idleThreadsRead.signal()
                    idleThreadsRelease.wait()
                    return nil
                },
                nil
            )
            precondition(status == 0, "pthread_create failed with \(status)")
            handles.append(handle)
        }
        for _ in 0..<count { idleThreadsRead.wait() }
    }

    func join() {
        for _ in handles { idleThreadsRelease.signal() }
        for handle in handles {
            #if canImport(Darwin)
            pthread_join(handle!, nil)
            #else
            pthread_join(handle, nil)
            #endif
        }
    }
}

let idleThreadsRead = DispatchSemaphore(value: 0)
let idleThreadsRelease = DispatchSemaphore(value: 0)

/// Runs `body` on `threads` new threads at once and waits for all of them.
func onThreads(_ threads: Int, _ body: @escaping @Sendable () -> Void) {
    onThreads(threads) { _ in body() }
}

/// Runs `body` on `threads` new threads at once, giving each its index, and waits for all of them.
func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<threads {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

// MARK: - The dependency, declared for each library

protocol Providing: Sendable {
    var id: Int { get }
}

struct Provider: Providing {
    let id: Int
}

// The article's pattern.

enum ArticleProviderKey: ArticleInjectionKey {
    nonisolated(unsafe) static var currentValue: any Providing = Provider(id: 1)
}

extension ArticleInjectedValues {
    var provider: any Providing {
        get { Self[ArticleProviderKey.self] }
        set { Self[ArticleProviderKey.self] = newValue }
    }
}

struct ArticleController {
    @ArticleInjected(\.provider) var provider
}

// Injected.

enum ProviderKey: ReadOnlyInjectionKey {
    static let currentValue: any Providing = Provider(id: 1)
    static var lifetime: InjectionLifetime { .uncached }
}

enum SettableProviderKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: any Providing = Provider(id: 1)
}

struct SettableController {
    @Injected(\.settableProvider) var provider
}

enum CachedServiceKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 5) }
    static var lifetime: InjectionLifetime { .cached }
}

enum CachedOneKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 11) }
    static var lifetime: InjectionLifetime { .cached }
}

enum CachedTwoKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 12) }
    static var lifetime: InjectionLifetime { .cached }
}

enum CachedThreeKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 13) }
    static var lifetime: InjectionLifetime { .cached }
}

enum CachedFourKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 14) }
    static var lifetime: InjectionLifetime { .cached }
}

enum CachedFiveKey: ReadOnlyInjectionKey {
    static var currentValue: any Providing { Provider(id: 15) }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    var settableProvider: any Providing {
        get { Self[SettableProviderKey.self] }
        set { Self[SettableProviderKey.self] = newValue }
    }

    var cachedOne: any Providing { Self[CachedOneKey.self] }
    var cachedTwo: any Providing { Self[CachedTwoKey.self] }
    var cachedThree: any Providing { Self[CachedThreeKey.self] }
    var cachedFour: any Providing { Self[CachedFourKey.self] }
    var cachedFive: any Providing { Self[CachedFiveKey.self] }
}

extension InjectedValues {
    var provider: any Providing {
        get { Self[ProviderKey.self] }
        set { Self[ProviderKey.self] = newValue }
    }

    var cachedService: any Providing {
        get { Self[CachedServiceKey.self] }
        set { Self[CachedServiceKey.self] = newValue }
    }
}

struct InjectedController: Sendable {
    @Injected(\.provider) var provider
}

// swift-dependencies.

enum DependenciesProviderKey: DependencyKey {
    static let liveValue: any Providing = Provider(id: 1)
}

extension DependencyValues {
    var provider: any Providing {
        get { self[DependenciesProviderKey.self] }
        set { self[DependenciesProviderKey.self] = newValue }
    }
}

struct DependenciesController {
    @Dependency(\.provider) var provider
}
