import Foundation
import Injected
import Testing

// The article's code, as projects copied it. It is compiled here unchanged, in Swift 5 mode, which is the only mode
// that accepts its plain `static var` key. The one addition is `print` below, which records what the code prints.

protocol NetworkProviding {
    func requestData()
}

struct NetworkProvider: NetworkProviding {
    func requestData() {
        print("Data requested using the 'NetworkProvider'")
    }
}

struct MockedNetworkProvider: NetworkProviding {
    func requestData() {
        print("Data requested using the 'MockedNetworkProvider'")
    }
}

struct DataController {
    @Injected(\.networkProvider) var networkProvider: NetworkProviding

    func performDataRequest() {
        networkProvider.requestData()
    }
}

private struct NetworkProviderKey: InjectionKey {
    static var currentValue: NetworkProviding = NetworkProvider()
}

extension InjectedValues {
    var networkProvider: NetworkProviding {
        get { Self[NetworkProviderKey.self] }
        set { Self[NetworkProviderKey.self] = newValue }
    }
}

/// The article's playground prints the same four lines with this library.
@Suite("The article's playground")
struct ArticlePlaygroundTests {
    @Test("prints the article's four lines")
    func playground() {
        let printed = Transcript.recording {
            withInjectedValues(fresh: true, { _ in }) {
                // The article writes `var`. The wrapper's setter is nonmutating, so `let` is enough, and Swift warns
                // that a `var` is never mutated; that warning is the one difference copied code can see.
                let dataController = DataController()
                print(dataController.networkProvider)  // prints: NetworkProvider()

                InjectedValues[\.networkProvider] = MockedNetworkProvider()
                print(dataController.networkProvider)  // prints: MockedNetworkProvider()

                dataController.networkProvider = NetworkProvider()
                print(dataController.networkProvider)  // prints 'NetworkProvider' as we overwritten the wrapped value

                dataController.performDataRequest()  // prints: Data requested using the 'NetworkProvider'
            }
        }
        #expect(
            printed == [
                "NetworkProvider()",
                "MockedNetworkProvider()",
                "NetworkProvider()",
                "Data requested using the 'NetworkProvider'",
            ]
        )
    }

    @Test("an override made through the store is seen by every DataController, old and new")
    func overrideSeenByOldAndNew() {
        withInjectedValues(fresh: true, { _ in }) {
            let old = DataController()
            InjectedValues[\.networkProvider] = MockedNetworkProvider()
            #expect(old.networkProvider is MockedNetworkProvider)
            #expect(DataController().networkProvider is MockedNetworkProvider)
        }
    }
}

/// Records what the article's code prints, so the test can compare it with the article.
enum Transcript {
    private static let lock = NSLock()
    private static var lines: [String] = []

    static func recording(_ body: () -> Void) -> [String] {
        lock.withLock { lines = [] }
        body()
        return lock.withLock { lines }
    }

    static func append(_ line: String) {
        lock.withLock { lines.append(line) }
    }
}

/// Shadows `Swift.print` for this module, so the article's code records its output instead of writing it.
func print(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    Transcript.append(items.map { "\($0)" }.joined(separator: separator))
}
