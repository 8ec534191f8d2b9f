import ArticleBaseline
import Benchmark
import Dependencies
import Foundation
import Injected
import Swinject

// Every read benchmark reads the same kind of dependency: a small struct behind a protocol, so the cost measured is
// the container's, not the value's reference counting.

/// How many interleaved rounds the compared benchmarks run.
let rounds = 3

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        timeUnits: .nanoseconds,
        warmupIterations: 1_000,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 2_000
    )

    // MARK: Reads, side by side
    //
    // This machine's speed drifts over seconds, so benchmarks that are compared run in interleaved rounds (article,
    // Injected, …, article, Injected, …), and the report takes each ratio within a round, then the median of those.

    for round in 1...rounds {
        Benchmark("Article pattern: @Injected read #\(round)") { benchmark in
            let controller = ArticleController()
            for _ in benchmark.scaledIterations { blackHole(controller.provider.id) }
        }

        Benchmark("Injected: @Injected read, nothing overridden #\(round)") { benchmark in
            let controller = InjectedController()
            for _ in benchmark.scaledIterations { blackHole(controller.provider.id) }
        }

        Benchmark("Injected: @Injected read, global override #\(round)") { benchmark in
            InjectedValues[\.provider] = Provider(id: 2)
            let controller = InjectedController()
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(controller.provider.id) }
            benchmark.stopMeasurement()
            InjectedValues.reset()
        }

        Benchmark("Injected: @Injected read, inside one scope #\(round)") { benchmark in
            withInjectedValues {
                $0.provider = Provider(id: 3)
            } operation: {
                let controller = InjectedController()
                for _ in benchmark.scaledIterations { blackHole(controller.provider.id) }
            }
        }

        Benchmark("swift-dependencies: @Dependency read #\(round)") { benchmark in
            let controller = DependenciesController()
            for _ in benchmark.scaledIterations { blackHole(controller.provider.id) }
        }

        Benchmark("Swinject: resolve #\(round)") { benchmark in
            let container = Container()
            container.register((any Providing).self) { _ in Provider(id: 4) }
            for _ in benchmark.scaledIterations { blackHole(container.resolve((any Providing).self)!.id) }
        }

        // Each iteration reads 1M times on each thread; two threads should finish in about the time one takes.
        // The article's pattern, which takes no lock at all, shows what this machine allows.
        let threadConfiguration = Benchmark.Configuration(scalingFactor: .one, maxIterations: 10)
        for threads in [1, 2] {
            let name = "\(threads) thread\(threads == 1 ? "" : "s") × 1M reads #\(round)"
            Benchmark("Injected: \(name)", configuration: threadConfiguration) { benchmark in
                for _ in benchmark.scaledIterations {
                    onThreads(threads) {
                        let controller = InjectedController()
                        var sum = 0
                        for _ in 0..<1_000_000 { sum &+= controller.provider.id }
                        blackHole(sum)
                    }
                }
            }
            Benchmark("Article pattern: \(name)", configuration: threadConfiguration) { benchmark in
                for _ in benchmark.scaledIterations {
                    onThreads(threads) {
                        let controller = ArticleController()
                        var sum = 0
                        for _ in 0..<1_000_000 { sum &+= controller.provider.id }
                        blackHole(sum)
                    }
                }
            }
        }
    }

    // MARK: Scaling in the number of keys, and other operations

    for keys in [10, 10_000] {
        Benchmark("Injected: read with \(keys) keys overridden") { benchmark in
            ManyKeys.override(count: keys)
            let read = ManyKeys.reader(index: keys / 2)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(read()) }
            benchmark.stopMeasurement()
            InjectedValues.reset()
        }
    }

    for overrides in [1, 10] {
        Benchmark("Injected: enter and leave a scope with \(overrides) override\(overrides == 1 ? "" : "s")") {
            benchmark in
            for _ in benchmark.scaledIterations {
                withInjectedValues {
                    for index in 0..<overrides { ManyKeys.write(index: index, on: &$0) }
                } operation: {
                    blackHole(0)
                }
            }
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
}

/// Runs `body` on `threads` new threads at once and waits for all of them.
func onThreads(_ threads: Int, _ body: @escaping @Sendable () -> Void) {
    let group = DispatchGroup()
    for _ in 0..<threads {
        group.enter()
        Thread {
            body()
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

enum ProviderKey: InjectionKey {
    static let currentValue: any Providing = Provider(id: 1)
}

enum CachedServiceKey: InjectionKey {
    static var currentValue: any Providing { Provider(id: 5) }
    static var lifetime: InjectionLifetime { .cached }
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

// MARK: - Many keys

/// Up to 10,000 distinct keys, made at run time as nested generic types: `IndexedKey<Pair<Pair<D3, D1>, D4>>` and
/// so on, four levels of ten digits each.
enum ManyKeys {
    enum D0 {}
    enum D1 {}
    enum D2 {}
    enum D3 {}
    enum D4 {}
    enum D5 {}
    enum D6 {}
    enum D7 {}
    enum D8 {}
    enum D9 {}
    enum Pair<Left, Right> {}

    struct IndexedKey<Tag>: InjectionKey {
        static var currentValue: Int { 0 }
    }

    static let digits: [Any.Type] = [
        D0.self, D1.self, D2.self, D3.self, D4.self, D5.self, D6.self, D7.self, D8.self, D9.self,
    ]

    /// Overrides keys 0..<count in the global store.
    static func override(count: Int) {
        for index in 0..<count {
            var visitor = GlobalWriter(value: index)
            visit(index, &visitor)
        }
    }

    /// Overrides key `index` in a scope's update closure.
    static func write(index: Int, on values: inout InjectedValues) {
        var visitor = ScopeWriter(values: values, value: index)
        visit(index, &visitor)
    }

    /// A closure that reads key `index`, resolved once so the benchmark measures only the read.
    static func reader(index: Int) -> @Sendable () -> Int {
        var visitor = ReaderMaker()
        visit(index, &visitor)
        return visitor.reader!
    }

    /// Calls the visitor with the key type for `index`, built from its four decimal digits.
    static func visit<Visitor: KeyVisitor>(_ index: Int, _ visitor: inout Visitor) {
        let path = [index / 1_000 % 10, index / 100 % 10, index / 10 % 10, index % 10]
        extend(ManyKeys.self, path: path[...], &visitor)
    }

    private static func extend<Prefix, Visitor: KeyVisitor>(
        _ prefix: Prefix.Type,
        path: ArraySlice<Int>,
        _ visitor: inout Visitor
    ) {
        guard let digit = path.first else { return visitor.visit(IndexedKey<Prefix>.self) }
        func step<Digit>(_ digit: Digit.Type) {
            extend(Pair<Prefix, Digit>.self, path: path.dropFirst(), &visitor)
        }
        step(digits[digit])
    }
}

protocol KeyVisitor {
    mutating func visit<Tag>(_ key: ManyKeys.IndexedKey<Tag>.Type)
}

struct GlobalWriter: KeyVisitor {
    let value: Int

    func visit<Tag>(_ key: ManyKeys.IndexedKey<Tag>.Type) {
        InjectedValues[key] = value
    }
}

struct ScopeWriter: KeyVisitor {
    let values: InjectedValues
    let value: Int

    func visit<Tag>(_ key: ManyKeys.IndexedKey<Tag>.Type) {
        values[key] = value
    }
}

struct ReaderMaker: KeyVisitor {
    var reader: (@Sendable () -> Int)?

    mutating func visit<Tag>(_ key: ManyKeys.IndexedKey<Tag>.Type) {
        reader = { InjectedValues[key] }
    }
}
