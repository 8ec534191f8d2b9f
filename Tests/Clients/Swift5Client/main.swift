#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A Swift 5 mode app that copied Injected's single file, written with the article's key forms.
// Tests/Clients/run.sh compiles it together with Sources/Injected/Injected.swift and runs it.

protocol NetworkProviding {
    func requestData() -> String
}

struct NetworkProvider: NetworkProviding {
    func requestData() -> String { "Data requested using the 'NetworkProvider'" }
}

struct MockedNetworkProvider: NetworkProviding {
    func requestData() -> String { "Data requested using the 'MockedNetworkProvider'" }
}

private struct NetworkProviderKey: InjectionKey {
    static var currentValue: NetworkProviding = NetworkProvider()
}

final class ChatClient {}

private struct ChatClientKey: InjectionKey {
    static var currentValue: ChatClient?
}

extension InjectedValues {
    var networkProvider: NetworkProviding {
        get { Self[NetworkProviderKey.self] }
        set { Self[NetworkProviderKey.self] = newValue }
    }

    var chatClient: ChatClient? {
        get { self[ChatClientKey.self] }
        set { self[ChatClientKey.self] = newValue }
    }
}

struct DataController {
    @Injected(\.networkProvider) var networkProvider: NetworkProviding
    @Injected(\.chatClient) static var chatClient

    func performDataRequest() -> String {
        networkProvider.requestData()
    }
}

func check(_ condition: Bool, _ message: String) {
    if !condition {
        print("swift5 client: FAILED: \(message)")
        exit(1)
    }
}

let dataController = DataController()
check(dataController.networkProvider is NetworkProvider, "the default provider")

InjectedValues[\.networkProvider] = MockedNetworkProvider()
check(dataController.networkProvider is MockedNetworkProvider, "a global override reaches an older object")

dataController.networkProvider = NetworkProvider()
check(dataController.performDataRequest() == "Data requested using the 'NetworkProvider'", "the wrapper's setter")

check(DataController.chatClient == nil, "an optional key with no initial value")
ChatClientKey.currentValue = ChatClient()
check(DataController.chatClient === ChatClientKey.currentValue, "a direct write to currentValue")

withInjectedValues {
    $0.networkProvider = MockedNetworkProvider()
} operation: {
    check(dataController.networkProvider is MockedNetworkProvider, "a scoped override")
}
check(dataController.networkProvider is NetworkProvider, "the scope ended")

InjectedValues.reset()
check(InjectedValues[\.networkProvider] is NetworkProvider, "reset")
print("swift5 client: ok")
