// InjectedTesting: a Swift Testing trait and an XCTest base class that give each test a fresh dependency scope.
//
// This file is the whole test support but for the clocks, which TestClocks.swift beside it declares. Like the library's
// file, it can be copied into a test target: it then needs one line more, below, importing the module that
// `Injected.swift` was copied into (`@testable import MyApp`), since Swift makes each file name the modules it uses.
// Its declarations say `nonisolated`, so that it compiles in a test target whose default isolation is the main actor.

#if canImport(Injected)
import Injected
#endif

#if canImport(Testing)
import Testing

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reports a problem that the library found in `test`: as an issue of the test, or, for a read made outside every
/// test's scope that Swift Testing cannot attribute to `test` (work on another thread, a detached task, or another
/// test that runs without the trait), as a warning on standard error.
@Sendable nonisolated func reportIssue(_ message: String, of test: Test.ID?, at location: SourceLocation) {
    let outsideTheTest = message.hasPrefix("InjectedValues: work outside every test's scope")
    if outsideTheTest, test == nil || Test.current?.id != test {
        warn(message)
    } else {
        Issue.record(Comment(rawValue: message), sourceLocation: location)
    }
}

/// Writes `message` to standard error as a runtime warning.
nonisolated func warn(_ message: String) {
    let line = "warning: \(message)\n"
    _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
}

/// A trait that runs each test, and each case of a parameterized test, in its own fresh dependency scope.
///
/// Swift Testing runs tests in parallel, so tests that override dependencies the way the article does,
/// `InjectedValues[\.networkProvider] = MockedNetworkProvider()`, would otherwise overwrite each other's mocks. Add
/// the trait to a suite or a test and every such write stays inside the test that made it:
///
/// ```swift
/// @Suite(.injectedValues)
/// struct CheckoutTests {
///     @Test func paysWithTheMockedGateway() async throws {
///         InjectedValues[\.paymentGateway] = MockGateway()   // this test only
///         try await Checkout().pay(100)
///     }
/// }
/// ```
///
/// Inside the scope a test:
/// - starts from the keys' own defaults, and sees no global override made elsewhere (an article-style
///   `InjectionKey`'s default is its `currentValue` variable, so a direct assignment to it is seen);
/// - has its own instances of `.cached` keys;
/// - keeps every write it makes (`InjectedValues[…] = …`, an `@Injected` property's setter,
///   `InjectedValues.reset()`) to itself.
///
/// On a suite, the trait applies to every test in it, including tests in nested suites. A test's own trait inside
/// a suite's adds its overrides on top of the suite's.
///
/// Keys that declare a `testValue` (a `TestValueKey`) start from it in every test. A strict suite,
/// `@Suite(.injectedValues(strict: true))`, also fails any test that reads a key with neither an override nor a test
/// value, with a message that names the key; the test goes on with the live value, so that one missing override
/// shows every other failure too. Strict is not the default, so that a suite written for the article's file can adopt
/// the trait before its keys have test values.
///
/// A scope reaches the tasks a test starts with `async let`, task groups and `Task {}`, but not `Task.detached`, a
/// Dispatch queue or a `Thread`. Work there that reads `InjectedValues[…]` directly still never reaches a live
/// service that has a test value: once a test has run in the trait, the whole process reads test values wherever no
/// test's scope applies. While a strict test runs, such a read of a key with no test value is reported too, once per
/// key: as an issue when Swift Testing knows which test is running on that thread, and otherwise as a warning on
/// standard error. Objects created inside the test with `@Injected` properties remember the test's scope and resolve
/// there wherever they are read. The Injected documentation's "Testing with Injected" article has the details.
public nonisolated struct InjectedValuesTrait: TestTrait, SuiteTrait, TestScoping {
    private let update: @Sendable (inout InjectedValues) throws -> Void
    private let strict: Bool

    init(strict: Bool = false, update: @escaping @Sendable (inout InjectedValues) throws -> Void) {
        self.strict = strict
        self.update = update
    }

    /// Whether the trait applies to the tests in nested suites too; always `true`.
    public var isRecursive: Bool { true }

    /// Runs the test, or one case of it, in a fresh scope with this trait's overrides applied first.
    ///
    /// - Parameters:
    ///   - test: The test being run.
    ///   - testCase: The case being run.
    ///   - function: The test's body.
    /// - Throws: What the trait's update closure or the test throws.
    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let (id, location) = (test.id, test.sourceLocation)
        try await withTestInjectedValues(strict: strict, reportingTo: { reportIssue($0, of: id, at: location) }, update)
        {
            try await function()
        }
    }
}

nonisolated extension Trait where Self == InjectedValuesTrait {
    /// Runs each test, and each case of a parameterized test, in its own fresh dependency scope.
    ///
    /// ```swift
    /// @Suite(.injectedValues)
    /// struct ReportTests { … }
    /// ```
    public static var injectedValues: Self {
        InjectedValuesTrait { _ in }
    }

    /// Runs each test in its own fresh dependency scope, with some dependencies overridden first.
    ///
    /// The closure runs once per test, and once per case of a parameterized test, so a mock created in it is a new
    /// instance for every test:
    ///
    /// ```swift
    /// @Test(.injectedValues { $0.networkProvider = MockedNetworkProvider() })
    /// func loadsTheReport() async throws { … }
    /// ```
    ///
    /// - Parameters:
    ///   - strict: Whether a test fails when it reads a key with neither an override nor a test value. The default is
    ///     `false`.
    ///   - update: A closure that overrides dependencies in the test's scope. If it throws, the test fails with that
    ///     error and its body does not run.
    /// - Returns: A trait to add to a `@Test` or `@Suite`.
    public static func injectedValues(
        strict: Bool = false,
        _ update: @escaping @Sendable (inout InjectedValues) throws -> Void
    ) -> Self {
        InjectedValuesTrait(strict: strict, update: update)
    }

    /// Runs each test in its own fresh dependency scope, failing a test that reads a key with neither an override nor
    /// a test value when `strict` is `true`.
    ///
    /// ```swift
    /// @Suite(.injectedValues(strict: true))
    /// struct ReportTests { … }
    /// ```
    ///
    /// - Parameter strict: Whether a test fails when it reads a key with neither an override nor a test value.
    /// - Returns: A trait to add to a `@Test` or `@Suite`.
    public static func injectedValues(strict: Bool) -> Self {
        InjectedValuesTrait(strict: strict) { _ in }
    }

    /// Runs each test in its own fresh dependency scope, with one dependency overridden first.
    ///
    /// The value is evaluated once per test, and once per case of a parameterized test, so each test gets a new
    /// instance:
    ///
    /// ```swift
    /// @Test(.injecting(\.networkProvider, MockedNetworkProvider()))
    /// func loadsTheReport() async throws { … }
    /// ```
    ///
    /// Swift writes through a key path by calling the accessor's getter first (a `WritableKeyPath` has no operation
    /// that calls only the setter). The trait writes through the store's key-path subscript, which runs the getter
    /// alone first: where the path is one plain accessor that reads one key of the value's type, the getter gets the
    /// value being written back, so no live default is built. A nested path (`\.network.timeout`) or a derived
    /// accessor still reads the real values, and a strict suite reports each live default that builds, naming the
    /// write. To set a dependency without its getter running at all, assign it in the update closure,
    /// `.injectedValues { $0.networkProvider = MockedNetworkProvider() }`.
    ///
    /// - Parameters:
    ///   - keyPath: The dependency's accessor.
    ///   - value: The value the dependency has in each test.
    /// - Returns: A trait to add to a `@Test` or `@Suite`.
    public static func injecting<Value>(
        _ keyPath: WritableKeyPath<InjectedValues, Value> & Sendable,
        _ value: @autoclosure @escaping @Sendable () -> Value
    ) -> Self {
        // The update closure runs with the test's scope active, so the store's subscript writes there.
        InjectedValuesTrait { _ in InjectedValues[keyPath] = value() }
    }
}
#endif

#if canImport(XCTest)
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
nonisolated open class InjectedTestCase: XCTestCase {
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
@Sendable private nonisolated func reportMissingTestValue(_ message: String) {
    XCTFail(message)
}
#endif
