#if canImport(XCTest)
import Injected
import XCTest

/// An `XCTestCase` that runs each test method in its own fresh dependency scope.
///
/// Subclass it instead of `XCTestCase`, and writes a test makes in the article's style,
/// `InjectedValues[\.networkProvider] = MockedNetworkProvider()`, stay inside that test, as do its own instances
/// of `.cached` keys. Override ``setUpInjectedValues(_:)`` to give every test in the class
/// the same overrides:
///
/// ```swift
/// final class ReportTests: InjectedTestCase {
///     override func setUpInjectedValues(_ values: inout InjectedValues) {
///         values.networkProvider = MockedNetworkProvider()
///     }
///
///     func testLoadsTheReport() throws { … }
/// }
/// ```
///
/// The scope covers `setUp()`, the test method and `tearDown()`, because it wraps `invokeTest()`. A class that
/// already has a base class of its own can do the same in three lines:
///
/// ```swift
/// override func invokeTest() {
///     withTestInjectedValues(strict: nil, { _ in }) { super.invokeTest() }
/// }
/// ```
///
/// Keys that declare a `testValue` (a `TestValueKey`) start from it in every test method. Override
/// ``strictInjectedValues`` to return `true`, and a test method that reads a key with neither an override nor a test
/// value fails, with a message that names the key; it goes on with the live value.
open class InjectedTestCase: XCTestCase {
    /// Whether a test method fails when it reads a key with neither an override nor a test value.
    ///
    /// The default is `false`, so that a class written for the article's file can adopt this base class before its
    /// keys have test values.
    open var strictInjectedValues: Bool { false }

    /// Overrides dependencies for every test method of the class, before `setUp()` runs.
    ///
    /// The default implementation overrides nothing.
    ///
    /// - Parameter values: The test's dependencies; assign to their accessors.
    open func setUpInjectedValues(_ values: inout InjectedValues) {}

    /// Runs the test method, with its set-up and tear-down, in a fresh dependency scope.
    open override func invokeTest() {
        withTestInjectedValues(
            strict: strictInjectedValues,
            reportingTo: reportMissingTestValue,
            {
                setUpInjectedValues(&$0)
            }
        ) {
            super.invokeTest()
        }
    }
}

/// Records a strict test's report as a failure of the test that is running.
@Sendable private func reportMissingTestValue(_ message: String) {
    XCTFail(message)
}
#endif
