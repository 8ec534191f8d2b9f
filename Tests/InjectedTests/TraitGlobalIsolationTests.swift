import Injected
import InjectedTesting
import Testing

extension ProcessGlobalStateTests {
    /// A test under the `.injectedValues` trait neither sees nor changes the global store.
    @Suite("The trait's isolation from the global store")
    struct TraitGlobalIsolationTests {
        @Test("a global override made elsewhere is invisible in the trait's scope, and survives it")
        func globalOverrideIsInvisible() async throws {
            defer { InjectedValues.reset() }
            InjectedValues[\.isolatedProvider] = IsolatedProvider(id: 99)
            try await InjectedValuesTrait.injectedValues.provideScope(for: Test.current!, testCase: nil) {
                #expect(InjectedValues[\.isolatedProvider].id == 0)
                InjectedValues[\.isolatedProvider] = IsolatedProvider(id: 1)
                InjectedValues.reset()
            }
            #expect(InjectedValues[\.isolatedProvider].id == 99)
        }

        @Test("what a detached task sees: the global store, unless it reads through a wrapper made in the test")
        func detachedTasks() async throws {
            defer { InjectedValues.reset() }
            InjectedValues[\.isolatedProvider] = IsolatedProvider(id: 99)
            try await InjectedValuesTrait.injectedValues.provideScope(for: Test.current!, testCase: nil) {
                InjectedValues[\.isolatedProvider] = IsolatedProvider(id: 5)
                let controller = IsolatedController()
                let direct = await Task.detached { InjectedValues[\.isolatedProvider].id }.value
                let throughWrapper = await Task.detached { controller.provider.id }.value
                #expect(direct == 99)
                #expect(throughWrapper == 5)
            }
        }
    }
}

private struct IsolatedProvider: Sendable {
    let id: Int
}

private struct IsolatedController {
    @Injected(\.isolatedProvider) var provider
}

private enum IsolatedProviderKey: ReadOnlyInjectionKey {
    static var currentValue: IsolatedProvider { IsolatedProvider(id: 0) }
}

extension InjectedValues {
    fileprivate var isolatedProvider: IsolatedProvider {
        get { Self[IsolatedProviderKey.self] }
        set { Self[IsolatedProviderKey.self] = newValue }
    }
}
