import Injected
import InjectedTesting
import Testing

/// A test under the trait neither sees nor changes the global store.
///
/// This suite writes a global override, so it is `.serialized`; every other test in this target runs under the trait
/// and so is unaffected by it.
@Suite("Isolation from the global store", .serialized)
struct GlobalIsolationTests {
    @Test("a global override made elsewhere is invisible in the trait's scope, and survives it")
    func globalOverrideIsInvisible() async throws {
        defer { InjectedValues.reset() }
        InjectedValues[\.provider] = Provider(id: 99)
        try await InjectedValuesTrait.injectedValues.provideScope(for: Test.current!, testCase: nil) {
            #expect(InjectedValues[\.provider].id == 0)
            InjectedValues[\.provider] = Provider(id: 1)
            InjectedValues.reset()
        }
        #expect(InjectedValues[\.provider].id == 99)
    }

    @Test("what a detached task sees: the global store, unless it reads through a wrapper made in the test")
    func detachedTasks() async throws {
        defer { InjectedValues.reset() }
        InjectedValues[\.provider] = Provider(id: 99)
        try await InjectedValuesTrait.injectedValues.provideScope(for: Test.current!, testCase: nil) {
            InjectedValues[\.provider] = Provider(id: 5)
            let controller = Controller()
            let direct = await Task.detached { InjectedValues[\.provider].id }.value
            let throughWrapper = await Task.detached { controller.provider.id }.value
            #expect(direct == 99)
            #expect(throughWrapper == 5)
        }
    }
}
