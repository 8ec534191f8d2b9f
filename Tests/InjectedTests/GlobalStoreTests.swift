import Foundation
import Injected
import Testing

extension ProcessGlobalStateTests {
    /// Writes made while no scope is active go to the process-global store.
    @Suite("Global store")
    struct GlobalStoreTests {
        @Test("a global override is seen by an older wrapper, another thread and a detached task")
        func globalOverrideIsSeenEverywhere() async {
            defer { InjectedValues.reset() }
            let wrapper = Injected(\.globalGreeting)
            InjectedValues[\.globalGreeting] = "global override"
            #expect(wrapper.wrappedValue == "global override")
            #expect(await Task.detached { InjectedValues[\.globalGreeting] }.value == "global override")
            let fromThread = Counter()
            let finished = runOnThreads(2) { _ in
                if InjectedValues[\.globalGreeting] == "global override" { fromThread.increment() }
            }
            #expect(finished)
            #expect(fromThread.value == 2)
        }

        @Test("a global override is shadowed by a scope and comes back after it")
        func scopeShadowsGlobal() {
            defer { InjectedValues.reset() }
            InjectedValues[\.globalGreeting] = "global"
            withInjectedValues {
                $0.globalGreeting = "scoped"
            } operation: {
                #expect(InjectedValues[\.globalGreeting] == "scoped")
            }
            withInjectedValues(fresh: true) { _ in
            } operation: {
                #expect(InjectedValues[\.globalGreeting] == "default")
            }
            #expect(InjectedValues[\.globalGreeting] == "global")
        }

        @Test("a global reset drops global overrides and the global cache")
        func globalReset() {
            defer { InjectedValues.reset() }
            let cached = InjectedValues[\.globalSingleton]
            #expect(InjectedValues[\.globalSingleton] === cached)
            InjectedValues[\.globalGreeting] = "override"
            InjectedValues.reset()
            #expect(InjectedValues[\.globalGreeting] == "default")
            #expect(InjectedValues[\.globalSingleton] !== cached)
        }

        @Test("a global write to a read-only key overrides it in the store, and reset drops the override")
        func readOnlyKeyWriteOverrides() {
            defer { InjectedValues.reset() }
            InjectedValues[GlobalGreetingKey.self] = "override"
            #expect(InjectedValues[\.globalGreeting] == "override")
            #expect(GlobalGreetingKey.currentValue == "default")
            InjectedValues.reset()
            #expect(InjectedValues[\.globalGreeting] == "default")
        }

        @Test("a global write through the key type assigns a settable key's currentValue, and reset assigns it back")
        func settableKeyWriteAssignsCurrentValue() {
            defer { InjectedValues.reset() }
            InjectedValues[GlobalStoredKey.self] = "override"
            #expect(InjectedValues[GlobalStoredKey.self] == "override")
            #expect(GlobalStoredKey.currentValue == "override")
            InjectedValues.reset()
            #expect(GlobalStoredKey.currentValue == "stored default")
            #expect(InjectedValues[GlobalStoredKey.self] == "stored default")
        }
    }

}

private enum GlobalGreetingKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum GlobalSingletonKey: ReadOnlyInjectionKey {
    static var currentValue: Instance { Instance("global singleton") }
    static var lifetime: InjectionLifetime { .cached }
}

private enum GlobalStoredKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = "stored default"
}

extension InjectedValues {
    fileprivate var globalGreeting: String {
        get { Self[GlobalGreetingKey.self] }
        set { Self[GlobalGreetingKey.self] = newValue }
    }

    fileprivate var globalSingleton: Instance {
        get { Self[GlobalSingletonKey.self] }
        set { Self[GlobalSingletonKey.self] = newValue }
    }
}
