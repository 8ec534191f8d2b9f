import Testing

@testable import Injected
@testable import InjectedTesting

/// A test runner's process is a test process from its first read, whichever tests it runs, so a suite that forgot the
/// trait reads the same values run alone (`swift test --filter`) as in the full run.
@Suite("A test process is known from its first read")
struct TestProcessTests {
    @Test("a read outside every test's scope gets the test value in a test process that has opened no test scope")
    func firstReadInATestProcessGetsTheTestValue() async {
        // In a process of its own, as `swift test --filter ForgotTheTrait` runs a suite without the trait.
        await #expect(processExitsWith: .success) {
            let token = InjectedValues[\.apiToken]
            let mailer = InjectedValues[\.mailer].name
            guard token == "test-token", mailer == "in-memory" else {
                fatalError("a test process read \(token) and \(mailer) before its first test scope")
            }
        }
    }

    @Test("a read gets the same value before and after the process's first test scope")
    func readsAgreeBeforeAndAfterTheFirstTestScope() async {
        await #expect(processExitsWith: .success) {
            let before = InjectedValues[\.apiToken]
            withTestInjectedValues(strict: nil) { _ in
            } operation: {
            }
            let after = InjectedValues[\.apiToken]
            guard before == after else { fatalError("read \(before), then \(after)") }
        }
    }

    @Test(
        "the runners' arguments and environment make a test process, and an app's do not",
        arguments: [
            (["/work/.build/debug/AppPackageTests.xctest", "--testing-library", "swift-testing"], nil, true),
            (["/work/.build/debug/AppPackageTests.xctest"], nil, true),
            (["/Applications/Xcode.app/Contents/Developer/usr/bin/xctest", "AppTests.xctest"], nil, true),
            (["/usr/libexec/swift/pm/swiftpm-testing-helper", "--test-bundle-path", "App"], nil, true),
            (["/Users/me/Library/Developer/App.app/App"], "XCTestConfigurationFilePath", true),
            (["/Users/me/Library/Developer/App.app/App"], nil, false),
            ([".build/debug/InjectedDemo", "--output", "out"], nil, false),
            (["/srv/notes-server", "--testing", "xctest-report"], nil, false),
        ] as [([String], String?, Bool)]
    )
    func runnersAreRecognized(arguments: [String], variable: String?, isTestProcess: Bool) {
        #expect(InjectedValues.Store.runsTests(arguments, { $0 == variable }) == isTestProcess)
    }
}

/// A token that a suite without the trait reads, as in the issue: live in an app, a fixed one in every test process.
enum APITokenKey: TestValueKey {
    static var currentValue: String { "LIVE-TOKEN" }
    static var lifetime: InjectionLifetime { .uncached }
    static var testValue: String { "test-token" }
}

extension InjectedValues {
    var apiToken: String {
        get { Self[APITokenKey.self] }
        set { Self[APITokenKey.self] = newValue }
    }
}
