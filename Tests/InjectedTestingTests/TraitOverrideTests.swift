import Injected
import InjectedTesting
import Testing

/// The trait's overrides are applied before each test, freshly for each case.
@Suite("Trait overrides")
struct TraitOverrideTests {
    @Test("an update closure applies its overrides first", .injectedValues { $0.provider = Provider(id: 42) })
    func updateClosure() {
        #expect(InjectedValues[\.provider].id == 42)
        #expect(Controller().provider.id == 42)
    }

    @Test("a one-key override applies its value", .injecting(\.provider, Provider(id: 7)))
    func oneKey() {
        #expect(InjectedValues[\.provider].id == 7)
    }

    @Test("a one-key override makes a new instance for every case", .injecting(\.cart, Cart()), arguments: 1...10)
    func oneKeyPerCase(id: Int) async {
        InjectedValues[\.cart].add("item \(id)")
        await Task.yield()
        #expect(InjectedValues[\.cart].items == ["item \(id)"])
    }

    @Test(
        "a model made with overrides inside a test keeps them in the test body and its child tasks",
        .injectedValues { $0.provider = Provider(id: 42) }
    )
    func modelMadeWithOverrides() async {
        let controller = withInjectedValues {
            $0.provider = Provider(id: 5)
        } operation: {
            Controller()
        }
        #expect(controller.provider.id == 5)
        async let child = controller.provider.id
        #expect(await child == 5)
        let grouped = await withTaskGroup(of: Int.self) { group in
            group.addTask { controller.provider.id }
            return await group.next() ?? 0
        }
        #expect(grouped == 5)
        #expect(await Task.detached { controller.provider.id }.value == 5)
        #expect(InjectedValues[\.provider].id == 42)
    }

    @Test("an update closure that throws fails the test before it runs")
    func throwingUpdate() async {
        let trait = InjectedValuesTrait.injectedValues { _ in throw SetUpFailure() }
        await #expect(throws: SetUpFailure.self) {
            try await trait.provideScope(for: Test.current!, testCase: nil) {
                Issue.record("the test body must not run when the update throws")
            }
        }
    }
}

private struct SetUpFailure: Error {}
