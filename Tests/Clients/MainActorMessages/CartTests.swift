// The XCTest classes of "XCTest in a main-actor app" in Docs/Injected.docc/TestingWithInjected.md, with the app code
// they test, in one module whose default isolation is the main actor. `messages.sh` compiles it as it is, which must
// succeed, and then without one `@MainActor` or `nonisolated`, checking that Swift says what the article quotes.

import Injected
import InjectedTesting
import XCTest

nonisolated protocol Pricing: Sendable {
    func price(of item: String) -> Int
}

struct FixedPricing: Pricing {
    let cents: Int
    func price(of item: String) -> Int { cents }
}

nonisolated private enum PricingKey: ReadOnlyInjectionKey {
    static var currentValue: any Pricing { FixedPricing(cents: 100) }
}

extension InjectedValues {
    nonisolated var pricing: any Pricing {
        get { Self[PricingKey.self] }
        set { Self[PricingKey.self] = newValue }
    }
}

final class CartModel {
    @Injected(\.pricing) private var pricing
    private(set) var total = 0

    func add(_ item: String) {
        total += pricing.price(of: item)
    }
}

final class CartModelTests: InjectedTestCase {
    @MainActor
    func testAddsThePrice() async {
        let cart = CartModel()
        cart.add("tea")
        XCTAssertEqual(cart.total, 100)
    }
}

nonisolated final class CartModelOnAnotherBaseTests: XCTestCase {
    override func invokeTest() {
        withTestInjectedValues(strict: nil, { $0.pricing = FixedPricing(cents: 5) }) { super.invokeTest() }
    }
}
