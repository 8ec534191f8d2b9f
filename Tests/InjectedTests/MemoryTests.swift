import Injected
import Testing

/// What a scope holds is released when the scope ends or is reset, and `@Injected` creates no retain cycles.
///
/// Each test keeps only weak references to the objects it checks, so a leak shows as a reference that stays set.
@Suite("Memory")
struct MemoryTests {
    @Test("a scope's overridden values are released when the scope ends")
    func overridesReleasedAtScopeEnd() {
        weak var weakValue: Tracked?
        withInjectedValues {
            let value = Tracked()
            weakValue = value
            $0.tracked = value
        } operation: {
            #expect(weakValue != nil)
        }
        #expect(weakValue == nil)
    }

    @Test("a fresh scope's cached instances are released when the scope ends")
    func cacheReleasedAtScopeEnd() {
        weak var weakCached: Tracked?
        inFreshScope {
            weakCached = InjectedValues[\.cachedTracked]
            #expect(weakCached != nil)
        }
        #expect(weakCached == nil)
    }

    @Test("reset releases overridden values and cached instances at once")
    func resetReleases() {
        inFreshScope {
            weak var weakValue: Tracked?
            weak var weakCached: Tracked?
            do {
                let value = Tracked()
                weakValue = value
                InjectedValues[\.tracked] = value
                weakCached = InjectedValues[\.cachedTracked]
            }
            #expect(weakValue != nil)
            #expect(weakCached != nil)
            InjectedValues.reset()
            #expect(weakValue == nil)
            #expect(weakCached == nil)
        }
    }

    @Test("an override replaced by another write is released at once")
    func replacedOverrideReleased() {
        inFreshScope {
            weak var weakValue: Tracked?
            do {
                let value = Tracked()
                weakValue = value
                InjectedValues[\.tracked] = value
            }
            InjectedValues[\.tracked] = Tracked()
            #expect(weakValue == nil)
        }
    }

    @Test("an object with @Injected properties is released normally")
    func holderReleased() {
        inFreshScope {
            weak var weakHolder: Holder?
            do {
                let holder = Holder()
                weakHolder = holder
                _ = holder.tracked
            }
            #expect(weakHolder == nil)
        }
    }

    @Test("a value stored in a scope whose properties remember that scope is released with it")
    func noCycleThroughCapturedScope() {
        weak var weakHolder: Holder?
        weak var weakTracked: Tracked?
        withInjectedValues {
            // Created inside the scope, so its @Injected property remembers the scope; then stored in it.
            let holder = Holder()
            weakHolder = holder
            $0.holder = holder
            let tracked = Tracked()
            weakTracked = tracked
            $0.tracked = tracked
        } operation: {
            #expect(InjectedValues[\.holder].tracked === weakTracked)
        }
        #expect(weakHolder == nil)
        #expect(weakTracked == nil)
    }

    @Test("a value made in the update closure, with @Injected properties, is released when the scope ends")
    func updateClosureValueReleased() {
        let released = Counter()
        let tracked = Tracked()
        withInjectedValues {
            $0.tracked = tracked
            $0.service = CountedService(released)
            $0.serviceSwiftUIStyle = CountedService(released)
        } operation: {
            #expect(InjectedValues[\.service].tracked === tracked)
            #expect(InjectedValues[\.serviceSwiftUIStyle].tracked === tracked)
            #expect(released.value == 0)
        }
        #expect(released.value == 2)
    }

    @Test("a value made and written inside a fresh scope's operation is released when the scope ends")
    func operationValueReleased() {
        let released = Counter()
        let tracked = Tracked()
        inFreshScope {
            InjectedValues[\.tracked] = tracked
            InjectedValues[\.service] = CountedService(released)
            let holder = ServiceHolder(released)
            #expect(holder.service.tracked === tracked)
        }
        #expect(released.value == 2)
    }

    @Test("a cached value built in a fresh scope, with @Injected properties, is released with the scope")
    func cachedValueWithPropertiesReleased() {
        let before = cachedServiceReleases.value
        let tracked = Tracked()
        inFreshScope {
            InjectedValues[\.tracked] = tracked
            let cached = InjectedValues[\.cachedService]
            #expect(cached === InjectedValues[\.cachedService])
            #expect(cached.tracked === tracked)
        }
        #expect(cachedServiceReleases.value == before + 1)
    }

    @Test("an object kept after its scope keeps the scope's values alive exactly as long as it lives")
    func keptObjectKeepsValuesForItsLife() {
        let released = Counter()
        var holder: ServiceHolder? = withInjectedValues {
            $0.service = CountedService(released)
        } operation: {
            ServiceHolder(released)
        }
        #expect(released.value == 0)
        #expect(holder?.service.tracked != nil)
        holder = nil
        #expect(released.value == 2)
    }

    @Test("10,000 scoped objects made and dropped leave nothing behind")
    func tenThousandScopedObjects() {
        let made = Counter()
        let released = Counter()
        for _ in 0..<10_000 {
            withInjectedValues {
                made.increment()
                $0.service = CountedService(released)
            } operation: {
                made.increment()
                InjectedValues[\.otherService] = CountedService(released)
                made.increment()
                _ = ServiceHolder(released).service.tracked
            }
        }
        #expect(made.value == 30_000)
        #expect(released.value == 30_000)
    }
}

final class Tracked: Sendable {}

/// A service with a dependency of its own, which counts its releases.
private final class CountedService: Sendable {
    private let trackedProperty = Injected(\.tracked)
    private let released: Counter

    var tracked: Tracked { trackedProperty.wrappedValue }

    init(_ released: Counter) {
        self.released = released
    }

    deinit { released.increment() }
}

/// A model that reads the service, made in a scope and sometimes kept after it.
private final class ServiceHolder {
    @Injected(\.service) var service
    private let released: Counter

    init(_ released: Counter) {
        self.released = released
    }

    deinit { released.increment() }
}

/// Releases of the one `CachedServiceKey` value each fresh scope builds; only `cachedValueWithPropertiesReleased`
/// reads this key.
private let cachedServiceReleases = Counter()

/// A `Sendable` class keeps its dependency in a `let` wrapper, which remembers the scope like `@Injected` does.
final class Holder: Sendable {
    private let trackedProperty = Injected(\.tracked)

    var tracked: Tracked { trackedProperty.wrappedValue }
}

private enum TrackedKey: ReadOnlyInjectionKey {
    static var currentValue: Tracked { Tracked() }
}

private enum CachedTrackedKey: ReadOnlyInjectionKey {
    static var currentValue: Tracked { Tracked() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum HolderKey: ReadOnlyInjectionKey {
    static var currentValue: Holder { Holder() }
}

private enum ServiceKey: ReadOnlyInjectionKey {
    static var currentValue: CountedService { CountedService(Counter()) }
}

private enum OtherServiceKey: ReadOnlyInjectionKey {
    static var currentValue: CountedService { CountedService(Counter()) }
}

private enum CachedServiceKey: ReadOnlyInjectionKey {
    static var currentValue: CountedService { CountedService(cachedServiceReleases) }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var service: CountedService {
        get { Self[ServiceKey.self] }
        set { Self[ServiceKey.self] = newValue }
    }

    fileprivate var serviceSwiftUIStyle: CountedService {
        get { self[OtherServiceKey.self] }
        set { self[OtherServiceKey.self] = newValue }
    }

    fileprivate var otherService: CountedService {
        get { Self[OtherServiceKey.self] }
        set { Self[OtherServiceKey.self] = newValue }
    }

    fileprivate var cachedService: CountedService {
        get { Self[CachedServiceKey.self] }
        set { Self[CachedServiceKey.self] = newValue }
    }

    fileprivate var tracked: Tracked {
        get { Self[TrackedKey.self] }
        set { Self[TrackedKey.self] = newValue }
    }

    fileprivate var cachedTracked: Tracked {
        get { Self[CachedTrackedKey.self] }
        set { Self[CachedTrackedKey.self] = newValue }
    }

    fileprivate var holder: Holder {
        get { Self[HolderKey.self] }
        set { Self[HolderKey.self] = newValue }
    }
}
