#if canImport(XCTest)
import Injected
import InjectedTesting
import Dispatch
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
        withTestInjectedValues(strict: nil, { _ in }) { super.invokeTest() }
    }

    func testFirstWriteStaysInItsTest() {
        XCTAssertEqual(InjectedValues[\.provider].id, 0)
        InjectedValues[\.provider] = Provider(id: 1)
    }

    func testSecondWriteStaysInItsTest() {
        XCTAssertEqual(InjectedValues[\.provider].id, 0)
        XCTAssertEqual(InjectedValues[\.mailer].name, "in-memory")
        InjectedValues[\.provider] = Provider(id: 2)
    }
}
/// A strict class fails a test method that reads a key with neither an override nor a test value, naming the key.
final class StrictInjectedTestCaseTests: InjectedTestCase {
    override var strictInjectedValues: Bool { true }

    /// The failures this class's strictness recorded in the current test, kept instead of failing it.
    private let reports = Reports(keepingEscapingReads: true)

    #if canImport(ObjectiveC)
    override func record(_ issue: XCTIssue) {
        guard issue.compactDescription.contains("InjectedValues: ") else { return super.record(issue) }
        reports.add(issue.compactDescription)
    }
    #else
    override func recordFailure(
        withDescription description: String,
        inFile file: String,
        atLine line: Int,
        expected: Bool
    ) {
        guard description.contains("InjectedValues: ") else {
            return super.recordFailure(withDescription: description, inFile: file, atLine: line, expected: expected)
        }
        reports.add(description)
    }
    #endif

    func testReadingAKeyWithoutTestValueFailsTheTest() {
        XCTAssertEqual(InjectedValues[\.liveOnly], "live only")
        XCTAssertEqual(reports.messages.count, 1)
        XCTAssertTrue(
            reports.messages.first?.contains(
                "the test read LiveOnlyKey through its accessor liveOnly, which nothing overrides"
            ) == true
        )
    }

    func testAThreadReadingAKeyWithoutTestValueFailsTheTest() {
        XCTAssertEqual(onThread { InjectedValues[\.xcTestOnly] }, "live")
        XCTAssertEqual(reports.messages.count, 1)
        XCTAssertTrue(reports.messages.first?.contains("work outside every test's scope") == true)
        XCTAssertTrue(reports.messages.first?.contains("read XCTestOnlyKey, which nothing overrides") == true)
    }

    func testEscapingReadsOfTestValuesReportNothing() async {
        XCTAssertEqual(onThread { InjectedValues[\.mailer].name }, "in-memory")
        let name = await Task.detached { InjectedValues[\.mailer].name }.value
        XCTAssertEqual(name, "in-memory")
        XCTAssertEqual(reports.messages, [])
    }

    func testTestValuesAndOverridesReportNothing() {
        InjectedValues[\.liveOnly] = "overridden"
        XCTAssertEqual(InjectedValues[\.liveOnly], "overridden")
        XCTAssertEqual(InjectedValues[\.mailer].name, "in-memory")
        XCTAssertEqual(reports.messages, [])
    }
}

/// A class that is not strict reads such a key with its live value and no failure.
final class LenientInjectedTestCaseTests: InjectedTestCase {
    func testReadingAKeyWithoutTestValuePasses() {
        XCTAssertEqual(InjectedValues[\.liveOnly], "live only")
        XCTAssertEqual(InjectedValues[\.mailer].name, "in-memory")
    }

    func testADispatchQueueCallbackReadsTheTestValue() {
        let done = expectation(description: "callback")
        let name = ResultHolder()
        DispatchQueue.global().async {
            name.value = InjectedValues[\.mailer].name
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(name.value, "in-memory")
    }

    func testAThreadReadsTheTestValue() {
        XCTAssertEqual(onThread { InjectedValues[\.mailer].name }, "in-memory")
    }

    func testADetachedTaskReadsTheTestValue() async {
        let name = await Task.detached { InjectedValues[\.mailer].name }.value
        XCTAssertEqual(name, "in-memory")
    }

    func testEscapingReadsOfAKeyWithoutTestValueAreLiveAndSilent() {
        XCTAssertEqual(onThread { InjectedValues[\.liveOnly] }, "live only")
    }
}

/// What a Dispatch callback read, handed back after an expectation.
private final class ResultHolder: @unchecked Sendable {
    // `@unchecked Sendable`: written once before the expectation is fulfilled, read after the wait.
    var value: String?
}

/// A key that only the strict XCTest class reads from another thread, so that its one report is that test's.
enum XCTestOnlyKey: ReadOnlyInjectionKey {
    static var currentValue: String { "live" }
}

extension InjectedValues {
    var xcTestOnly: String { Self[XCTestOnlyKey.self] }
}
#endif
