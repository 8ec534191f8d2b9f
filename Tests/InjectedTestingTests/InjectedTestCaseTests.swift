#if canImport(XCTest)
import Injected
import InjectedTesting
import XCTest

/// Each test method of an `InjectedTestCase` runs in its own fresh scope with the class's overrides.
///
/// Both tests start by checking they see only the class's override, then write their own: whichever runs second
/// would fail if the first one's write escaped its test.
final class InjectedTestCaseTests: InjectedTestCase {
    override func setUpInjectedValues(_ values: inout InjectedValues) {
        values.provider = Provider(id: 42)
    }

    override func setUp() {
        super.setUp()
        XCTAssertEqual(InjectedValues[\.provider].id, 42, "setUp runs inside the test's scope")
    }

    func testFirstWriteStaysInItsTest() {
        XCTAssertEqual(InjectedValues[\.provider].id, 42)
        let controller = Controller()
        InjectedValues[\.provider] = Provider(id: 1)
        XCTAssertEqual(controller.provider.id, 1)
    }

    func testSecondWriteStaysInItsTest() {
        XCTAssertEqual(InjectedValues[\.provider].id, 42)
        InjectedValues[\.provider] = Provider(id: 2)
        XCTAssertEqual(InjectedValues[\.provider].id, 2)
    }

    func testAsyncMethodRunsInTheScope() async {
        await Task.yield()
        XCTAssertEqual(InjectedValues[\.provider].id, 42)
        InjectedValues[\.provider] = Provider(id: 3)
        XCTAssertEqual(InjectedValues[\.provider].id, 3)
    }

    func testModelMadeWithOverridesKeepsThem() async {
        let controller = withInjectedValues {
            $0.provider = Provider(id: 5)
        } operation: {
            Controller()
        }
        XCTAssertEqual(controller.provider.id, 5)
        async let child = controller.provider.id
        let fromChild = await child
        XCTAssertEqual(fromChild, 5)
        let fromDetached = await Task.detached { controller.provider.id }.value
        XCTAssertEqual(fromDetached, 5)
        XCTAssertEqual(InjectedValues[\.provider].id, 42)
    }

    func testCachedServicesAreFreshPerTest() {
        XCTAssertEqual(InjectedValues[\.cart].items, [])
        InjectedValues[\.cart].add("xctest")
        XCTAssertEqual(InjectedValues[\.cart].items, ["xctest"])
    }

    func testCachedServicesAreFreshPerTestAgain() {
        XCTAssertEqual(InjectedValues[\.cart].items, [])
        InjectedValues[\.cart].add("xctest again")
        XCTAssertEqual(InjectedValues[\.cart].items, ["xctest again"])
    }
}

/// The three-line `invokeTest()` override gives a class with its own base class the same isolation.
final class InvokeTestOverrideTests: XCTestCase {
    override func invokeTest() {
        withInjectedValues(fresh: true, { _ in }) { super.invokeTest() }
    }

    func testFirstWriteStaysInItsTest() {
        XCTAssertEqual(InjectedValues[\.provider].id, 0)
        InjectedValues[\.provider] = Provider(id: 1)
    }

    func testSecondWriteStaysInItsTest() {
        XCTAssertEqual(InjectedValues[\.provider].id, 0)
        InjectedValues[\.provider] = Provider(id: 2)
    }
}
#endif
