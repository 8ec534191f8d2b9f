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
}

final class Tracked: Sendable {}

final class Holder {
    @Injected(\.tracked) var tracked
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

extension InjectedValues {
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
