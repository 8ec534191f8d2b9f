// Types that the articles' examples use without declaring them. Docs/build.sh compiles each article's code blocks
// together with this file, so the examples cannot drift from the library.
import Injected

protocol NetworkProviding: Sendable {
    func requestData() -> String
}

struct NetworkProvider: NetworkProviding {
    func requestData() -> String { "live data" }
}

struct MockedNetworkProvider: NetworkProviding {
    func requestData() -> String { "mocked data" }
}

protocol AppClock: Sendable {
    var hour: Int { get }
}

struct SystemClock: AppClock {
    var hour: Int { 12 }
}

struct FixedClock: AppClock {
    let hour: Int
}

protocol PaymentGateway: Sendable {
    func charge(_ amount: Int) -> Bool
}

struct LiveGateway: PaymentGateway {
    func charge(_ amount: Int) -> Bool { true }
}

struct MockGateway: PaymentGateway {
    let approves: Bool
    func charge(_ amount: Int) -> Bool { approves }
}
