import Injected
import Testing

/// `.uncached` keys follow their declaration; `.cached` keys are built once per root and rebuilt after a reset.
@Suite("Lifetimes")
struct LifetimeTests {
    @Test("a cached dependency first read in a fresh scope's update closure is built with what the closure set")
    func cachedBuiltInAnUpdateClosure() {
        let built = withInjectedValues(fresh: true) {
            $0.greetingName = "configured"
            _ = $0.greeting
        } operation: {
            InjectedValues[\.greeting]
        }
        #expect(built == "hello, configured")
    }

    @Test("a stateful service whose key declares no lifetime is made once: what one reader does, the next sees")
    func statefulServiceIsMadeOnce() async {
        await inFreshScope {
            let first = SessionScreen()
            let second = SessionScreen()
            await first.tokens.login()
            #expect(await second.tokens.isLoggedIn())
            #expect(await InjectedValues[\.tokens].isLoggedIn())
        }
    }

    @Test("an uncached stored static is created on first read and then shared")
    func uncachedStoredIsLazyAndShared() {
        inFreshScope {
            #expect(lazyBuilds.value == 0)
            let first = InjectedValues[LazyStoredKey.self]
            #expect(lazyBuilds.value == 1)
            #expect(InjectedValues[LazyStoredKey.self] === first)
            #expect(lazyBuilds.value == 1)
        }
    }

    @Test("an uncached computed default makes a new instance per read")
    func uncachedComputedIsFactory() {
        inFreshScope {
            let first = InjectedValues[CountedFactoryKey.self]
            let second = InjectedValues[CountedFactoryKey.self]
            #expect(first !== second)
            #expect(factoryBuilds.value == 2)
        }
    }

    @Test("a cached default is built once and shared until reset")
    func cachedIsBuiltOnce() {
        inFreshScope {
            let first = InjectedValues[CountedSingletonKey.self]
            #expect(InjectedValues[CountedSingletonKey.self] === first)
            #expect(singletonBuilds.value == 1)
            InjectedValues.reset()
            let rebuilt = InjectedValues[CountedSingletonKey.self]
            #expect(rebuilt !== first)
            #expect(InjectedValues[CountedSingletonKey.self] === rebuilt)
            #expect(singletonBuilds.value == 2)
        }
    }

    @Test("an override wins over a cached value, and reset drops both")
    func overrideWinsOverCache() {
        inFreshScope {
            let cached = InjectedValues[\.singleton]
            let replacement = Instance("replacement")
            InjectedValues[\.singleton] = replacement
            #expect(InjectedValues[\.singleton] === replacement)
            InjectedValues.reset()
            let afterReset = InjectedValues[\.singleton]
            #expect(afterReset !== replacement)
            #expect(afterReset !== cached)
        }
    }

    @Test("each fresh scope has its own cache, shared by the scopes nested in it")
    func freshScopesHaveOwnCache() {
        let (outer, nested) = inFreshScope {
            let outer = InjectedValues[\.singleton]
            let nested = withInjectedValues {
                $0.factory = Instance()
            } operation: {
                InjectedValues[\.singleton]
            }
            return (outer, nested)
        }
        let other = inFreshScope { InjectedValues[\.singleton] }
        #expect(outer === nested)
        #expect(outer !== other)
    }

    // Since issue 37 a cached default follows its inputs: a nested scope that overrides one gets a value of its own.
    @Test("a cached default is built from its root's values, and for a nested scope that overrides one, from its own")
    func cachedIsBuiltInRootContext() {
        inFreshScope {
            InjectedValues[\.factory] = Instance("root's")
            let built = withInjectedValues {
                $0.factory = Instance("nested override")
            } operation: {
                InjectedValues[\.composite]
            }
            #expect(built.part.label == "nested override")
            #expect(InjectedValues[\.composite] !== built)
            #expect(InjectedValues[\.composite].part.label == "root's")
            #expect(InjectedValues[\.composite] === InjectedValues[\.composite])
        }
    }

    @Test("an uncached default is built from the reader's values")
    func uncachedIsBuiltInReaderContext() {
        inFreshScope {
            let built = withInjectedValues {
                $0.factory = Instance("nested override")
            } operation: {
                InjectedValues[UncachedCompositeKey.self]
            }
            #expect(built.part.label == "nested override")
        }
    }
}

private let lazyBuilds = Counter()
private let factoryBuilds = Counter()
private let singletonBuilds = Counter()

final class Composite: Sendable {
    let part: Instance

    init(part: Instance) {
        self.part = part
    }
}

/// A token store, an actor with state, declared as a newcomer declares it: a computed default and no lifetime.
private actor TokenStore {
    private var token: String?

    func login() { token = "token" }

    func isLoggedIn() -> Bool { token != nil }
}

private enum TokenStoreKey: ReadOnlyInjectionKey {
    static var currentValue: TokenStore { TokenStore() }
}

/// A screen that logs in and checks the session through its own property.
private struct SessionScreen: Sendable {
    @Injected(\.tokens) var tokens
}

private enum GreetingNameKey: ReadOnlyInjectionKey {
    static var currentValue: String { "default" }
}

private enum GreetingKey: ReadOnlyInjectionKey {
    static var currentValue: String { "hello, \(InjectedValues[\.greetingName])" }
    static var lifetime: InjectionLifetime { .cached }
}

private enum LazyStoredKey: ReadOnlyInjectionKey {
    static let currentValue: Instance = {
        lazyBuilds.increment()
        return Instance("lazy")
    }()
    static var lifetime: InjectionLifetime { .uncached }
}

/// Counted, and read only by `uncachedComputedIsFactory`, so that parallel tests cannot change the count.
private enum CountedFactoryKey: ReadOnlyInjectionKey {
    static var currentValue: Instance {
        factoryBuilds.increment()
        return Instance("factory")
    }
    static var lifetime: InjectionLifetime { .uncached }
}

/// Counted, and read only by `cachedIsBuiltOnce`, so that parallel tests cannot change the count.
private enum CountedSingletonKey: ReadOnlyInjectionKey {
    static var currentValue: Instance {
        singletonBuilds.increment()
        return Instance("singleton")
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum FactoryKey: ReadOnlyInjectionKey {
    static var currentValue: Instance { Instance("factory") }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum SingletonKey: ReadOnlyInjectionKey {
    static var currentValue: Instance { Instance("singleton") }
    static var lifetime: InjectionLifetime { .cached }
}

private enum CompositeKey: ReadOnlyInjectionKey {
    static var currentValue: Composite { Composite(part: InjectedValues[\.factory]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum UncachedCompositeKey: ReadOnlyInjectionKey {
    static var currentValue: Composite { Composite(part: InjectedValues[\.factory]) }
    static var lifetime: InjectionLifetime { .uncached }
}

extension InjectedValues {
    fileprivate var tokens: TokenStore {
        get { Self[TokenStoreKey.self] }
        set { Self[TokenStoreKey.self] = newValue }
    }

    fileprivate var greetingName: String {
        get { Self[GreetingNameKey.self] }
        set { Self[GreetingNameKey.self] = newValue }
    }

    fileprivate var greeting: String { Self[GreetingKey.self] }

    fileprivate var factory: Instance {
        get { Self[FactoryKey.self] }
        set { Self[FactoryKey.self] = newValue }
    }

    fileprivate var singleton: Instance {
        get { Self[SingletonKey.self] }
        set { Self[SingletonKey.self] = newValue }
    }

    fileprivate var composite: Composite {
        get { Self[CompositeKey.self] }
        set { Self[CompositeKey.self] = newValue }
    }
}
