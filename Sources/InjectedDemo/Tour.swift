import Foundation
import Injected

/// The article's playground, replayed with the real library and the demo's own network providers.
enum Tour {
    /// A mock, as the article's `MockedNetworkProvider`.
    struct MockedNetworkProvider: NetworkProviding {
        var name: String { "MockedNetworkProvider" }
        func imageData(from url: URL) async throws -> Data { Data() }
    }

    struct DataController {
        @Injected(\.networkProvider) var networkProvider

        func performDataRequest() -> String {
            "Data requested using the '\(networkProvider.name)'"
        }
    }

    static func run(output: (String) -> Void) {
        // A fresh scope: the tour's overrides end with it, whatever the rest of the process injected.
        withInjectedValues(fresh: true, { _ in }) {
            output("The article's playground, with Injected:\n")
            let dataController = DataController()
            output("print(dataController.networkProvider)          → \(dataController.networkProvider.name)")

            InjectedValues[\.networkProvider] = MockedNetworkProvider()
            output("InjectedValues[\\.networkProvider] = Mocked…     → \(dataController.networkProvider.name)")

            dataController.networkProvider = OfflineNetworkProvider()
            output("dataController.networkProvider = Offline…      → \(dataController.networkProvider.name)")

            output("dataController.performDataRequest()            → \(dataController.performDataRequest())")
        }
        output("\nThe overrides stayed in the tour's scope; the process still sees the defaults.")
    }
}
