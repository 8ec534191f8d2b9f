import Injected
import Testing

/// The README's example compiles and does what its comments say.
@Suite("README example")
struct ReadmeExampleTests {
    @Test("the README's override reaches the controller for one operation only")
    func readmeExample() {
        inFreshScope {
            let loaded = withInjectedValues {
                $0.networkProvider = MockedNetworkProvider()
            } operation: {
                DataController().load()
            }
            #expect(loaded == "mocked")
            #expect(DataController().load() == "live")
            InjectedValues[\.networkProvider] = MockedNetworkProvider()
            #expect(DataController().load() == "mocked")
        }
    }
}

// The README's code, with just enough around it to run.

private protocol NetworkProviding: Sendable {
    func requestData() -> String
}

private struct NetworkProvider: NetworkProviding {
    func requestData() -> String { "live" }
}

private struct MockedNetworkProvider: NetworkProviding {
    func requestData() -> String { "mocked" }
}

private enum NetworkProviderKey: ReadOnlyInjectionKey {
    static var currentValue: any NetworkProviding { NetworkProvider() }
}
extension InjectedValues {
    fileprivate var networkProvider: any NetworkProviding {
        get { Self[NetworkProviderKey.self] }
        set { Self[NetworkProviderKey.self] = newValue }
    }
}
private struct DataController {
    @Injected(\.networkProvider) var networkProvider

    func load() -> String { networkProvider.requestData() }
}
