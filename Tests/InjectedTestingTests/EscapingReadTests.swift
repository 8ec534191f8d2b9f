import Dispatch
import Foundation
import Testing

@testable import Injected
@testable import InjectedTesting

/// Once a process runs tests, work that escapes every test's scope (a Dispatch queue, a `Thread`, a detached task)
/// reads test values, never a live service that has one; strict tests report such reads of keys that have none.
@Suite("Reads outside every test's scope, in a process that runs tests")
struct EscapingReadTests {
    // MARK: Test values everywhere

    @Test("work on a Dispatch queue inside a test reads the key's test value, not its live default", .injectedValues)
    func dispatchQueueReadsTheTestValue() async {
        let name = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: InjectedValues[\.mailer].name) }
        }
        #expect(name == "in-memory")
    }

    @Test("a Thread started inside a test reads the key's test value", .injectedValues)
    func threadReadsTheTestValue() {
        #expect(onThread { InjectedValues[\.mailer].name } == "in-memory")
    }

    @Test("a detached task inside a test reads the key's test value", .injectedValues)
    func detachedTaskReadsTheTestValue() async {
        #expect(await Task.detached { InjectedValues[\.mailer].name }.value == "in-memory")
    }

    @Test("outside every test, a cached test value is built once for the process, apart from the tests' own")
    func cachedTestValueOnceForTheProcess() async {
        // In a process of its own, where no other test resets the global store meanwhile.
        await #expect(processExitsWith: .success) {
            // Running a test makes the process one that runs tests.
            let inATest = withTestInjectedValues(strict: nil) { _ in
            } operation: {
                InjectedValues[\.mailer]
            }
            let first = await Task.detached { InjectedValues[\.mailer] }.value
            let second = onThread { InjectedValues[\.mailer] }
            let fresh = withInjectedValues(fresh: true) { _ in
            } operation: {
                InjectedValues[\.mailer]
            }
            guard first.name == "in-memory", first === second, fresh.name == "in-memory", inATest !== first else {
                fatalError("read \(first.name), \(second.name), \(fresh.name); same: \(first === second)")
            }
        }
    }

    @Test(
        "an override in the test's scope wins inside it, and escaping work still gets the test value",
        .injecting(\.mailer, Mailer(name: "override"))
    )
    func overrideWinsInsideTheScopeOnly() {
        #expect(InjectedValues[\.mailer].name == "override")
        #expect(onThread { InjectedValues[\.mailer].name } == "in-memory")
        let scope = InjectedValues.capture()
        #expect(onThread { scope.run { InjectedValues[\.mailer].name } } == "override")
    }

    @Test("escaping work in a lenient test reads a key with no test value from its live default", .injectedValues)
    func lenientEscapingReadIsLive() {
        #expect(onThread { InjectedValues[\.liveOnly] } == "live only")
    }

    // MARK: Strict tests catch escaping reads

    @Test("while a strict test runs, escaping reads of a key with no test value are reported once, naming the key")
    func strictReportsEscapingReadsOnce() async {
        await #expect(processExitsWith: .success) {
            let reports = Reports(keepingEscapingReads: true)
            await withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
            } operation: {
                #expect(onThread { InjectedValues[\.liveOnly] } == "live only")
                _ = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async { continuation.resume(returning: InjectedValues[\.liveOnly]) }
                }
                _ = await Task.detached { InjectedValues[\.liveOnly] }.value
                // A key with a test value is never reported.
                #expect(onThread { InjectedValues[\.mailer].name } == "in-memory")
            }
            // With no strict test running, an escaping read reports nothing.
            _ = onThread { InjectedValues[\.otherLiveOnly] }
            let messages = reports.messages
            guard
                messages.count == 1,
                messages[0].contains("work outside every test's scope"),
                messages[0].contains("read LiveOnlyKey, which nothing overrides and which has no test value"),
                messages[0].contains("extension LiveOnlyKey: TestValueKey"),
                messages[0].contains("InjectedValues.capture()")
            else {
                fatalError("unexpected reports: \(messages)")
            }
        }
    }

    @Test("a lenient test reports no escaping read")
    func lenientReportsNothing() async {
        await #expect(processExitsWith: .success) {
            let reports = Reports(keepingEscapingReads: true)
            withTestInjectedValues(strict: false, reportingTo: reports.add) { _ in
            } operation: {
                _ = onThread { InjectedValues[\.liveOnly] }
                _ = InjectedValues[\.liveOnly]
            }
            guard reports.messages.isEmpty else { fatalError("unexpected reports: \(reports.messages)") }
        }
    }

    @Test("where Swift Testing knows no running test, the trait's report is a warning on standard error")
    func unattributedReportIsAWarning() async throws {
        let result = try await #require(
            processExitsWith: .success,
            observing: [\.standardErrorContent]
        ) {
            let location = SourceLocation(fileID: "App/File.swift", filePath: "/App/File.swift", line: 1, column: 1)
            withTestInjectedValues(strict: true, reportingTo: { reportIssue($0, of: nil, at: location) }) { _ in
            } operation: {
                _ = onThread { InjectedValues[\.liveOnly] }
            }
        }
        let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(standardError.contains("warning: InjectedValues: work outside every test's scope"))
        #expect(standardError.contains("LiveOnlyKey"))
    }

    @Test("in a test process, a global write to an article-style key with a test value is what reads outside tests get")
    func articleKeyGlobalWriteWins() async {
        await #expect(processExitsWith: .success) {
            withTestInjectedValues(strict: nil) { _ in
            } operation: {
            }
            InjectedValues[\.articleSetting] = "written"
            let here = InjectedValues[\.articleSetting]
            let there = onThread { InjectedValues[\.articleSetting] }
            guard here == "written", there == "written" else { fatalError("read \(here) and \(there)") }
        }
    }

    @Test("a scope opened in a test's update closure stays in the test: its cached test value, and no report")
    func scopeInATestsUpdateClosureStaysInTheTest() {
        let reports = Reports(keepingEscapingReads: true)
        var made: Mailer?
        let same = withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
            made = withInjectedValues { _ in
            } operation: {
                InjectedValues[\.mailer]
            }
        } operation: {
            made === InjectedValues[\.mailer]
        }
        #expect(same)
        #expect(made?.name == "in-memory")
        #expect(reports.messages.allSatisfy { !$0.contains("Mailer") })
    }

    // MARK: The processes that run no tests

    @Test("an app's process, which is no test runner's and never opens a test's scope, reads live defaults everywhere")
    func appProcessReadsLiveDefaults() async {
        await #expect(processExitsWith: .success) {
            // Since issue 37, a test runner's process is a test process from its first read; this child of one is
            // made an app's process, as `runsTests` judges a process launched without a runner's arguments.
            InjectedValues.Store.tests.withLock { $0.process = nil }
            let names = [
                InjectedValues[\.mailer].name,
                onThread { InjectedValues[\.mailer].name },
                await Task.detached { InjectedValues[\.mailer].name }.value,
                withInjectedValues(fresh: true) { _ in
                } operation: {
                    InjectedValues[\.mailer].name
                },
            ]
            guard names == ["live", "live", "live", "live"] else { fatalError("read \(names)") }
        }
    }

    // MARK: from: with no scope

    @Test("from: with a property made outside every scope is reported in a test, strict or not, naming the type")
    func emptyFromIsReported() {
        let model = MailerModel()
        for strict in [false, true] {
            let reports = Reports()
            withTestInjectedValues(strict: strict, reportingTo: reports.add) { _ in
            } operation: {
                withInjectedValues(from: model.$mailer) { _ in
                } operation: {
                }
            }
            #expect(reports.messages.count == 1)
            #expect(reports.messages.first?.contains("withInjectedValues(from:) at InjectedTestingTests/") == true)
            #expect(reports.messages.first?.contains("an @Injected property of type Mailer") == true)
        }
    }

    @Test("from: with a property made in the test is not reported")
    func fromWithAScopeIsQuiet() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            let model = withInjectedValues {
                $0.mailer = Mailer(name: "model's")
            } operation: {
                MailerModel()
            }
            let name = withInjectedValues(from: model.$mailer) { _ in
            } operation: {
                InjectedValues[\.mailer].name
            }
            #expect(name == "model's")
        }
        #expect(reports.messages.isEmpty)
    }
}

/// An article-style key that also declares a test value.
enum ArticleSettingKey: InjectionKey, TestValueKey {
    nonisolated(unsafe) static var currentValue = "live"
    static var testValue: String { "test" }
}

extension InjectedValues {
    var articleSetting: String {
        get { Self[ArticleSettingKey.self] }
        set { Self[ArticleSettingKey.self] = newValue }
    }
}

/// An object with a dependency.
final class MailerModel {
    @Injected(\.mailer) var mailer: Mailer
}

/// Runs `body` on a new `Thread`, which no task-local reaches, and returns its result.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
    let result = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        result.value = body()
        done.signal()
    }
    thread.start()
    done.wait()
    return result.value!
}

/// The result of work on another thread, handed back after a semaphore.
private final class ResultBox<T>: @unchecked Sendable {
    // `@unchecked Sendable`: written once by the thread before it signals, read after the wait.
    var value: T?
}
