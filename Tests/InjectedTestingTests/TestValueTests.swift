import Foundation
import Injected
import InjectedTesting
import Testing

/// Keys that declare a test value start from it in tests, and a strict suite fails a test that reads a key with
/// neither an override nor a test value.
@Suite("Test values and strict suites")
struct TestValueTests {
    @Test("a key's test value is what a test under the trait starts from, once per test when cached", .injectedValues)
    func testValueUnderTheTrait() {
        #expect(InjectedValues[\.mailer].name == "in-memory")
        #expect(InjectedValues[\.mailer] === InjectedValues[\.mailer])
    }

    @Test("each test gets its own cached test value", .injectedValues, arguments: 1...5)
    func testValuePerTest(run: Int) {
        InjectedValues[\.mailer].send("message \(run)")
        #expect(InjectedValues[\.mailer].sent == ["message \(run)"])
    }

    @Test("an override wins over the test value", .injecting(\.mailer, Mailer(name: "override")))
    func overrideWins() {
        #expect(InjectedValues[\.mailer].name == "override")
    }

    @Test("a strict test that reads a key with no override and no test value records an issue that names it")
    func strictRecordsAnIssue() async throws {
        let trait = InjectedValuesTrait.injectedValues(strict: true)
        try await trait.provideScope(for: Test.current!, testCase: nil) {
            withKnownIssue {
                #expect(InjectedValues[\.liveOnly] == "live only")
            } matching: { issue in
                issue.comments.contains { comment in
                    comment.rawValue.contains(
                        "the test read LiveOnlyKey through its accessor liveOnly, which nothing overrides"
                    )
                        && comment.rawValue.contains("extension LiveOnlyKey: TestValueKey")
                }
            }
        }
    }

    @Test("a strict test reports each key once, also from a fresh scope inside it, and goes on with the live value")
    func strictReportsOncePerKey() {
        let reports = Reports()
        withTestInjectedValues(strict: reports.add) { _ in
        } operation: {
            #expect(InjectedValues[\.liveOnly] == "live only")
            #expect(InjectedValues[\.liveOnly] == "live only")
            withInjectedValues(fresh: true) { _ in
            } operation: {
                _ = InjectedValues[\.otherLiveOnly]
                #expect(InjectedValues[\.mailer].name == "in-memory")
            }
        }
        #expect(reports.messages.count == 2)
        #expect(reports.messages.first?.contains("LiveOnlyKey") == true)
        #expect(reports.messages.last?.contains("OtherLiveOnlyKey") == true)
    }

    @Test("a strict test reports a key once even when fresh scopes inside it read the same key again")
    func strictReportsOnceAcrossFreshScopes() {
        let reports = Reports()
        withTestInjectedValues(strict: reports.add) { _ in
        } operation: {
            _ = InjectedValues[\.liveOnly]
            for _ in 0..<3 {
                withInjectedValues(fresh: true) { _ in
                } operation: {
                    _ = InjectedValues[\.liveOnly]
                }
            }
        }
        #expect(reports.messages.count == 1)
    }

    @Test("writing a cached key through its key path in a strict test keeps no live instance and reports nothing")
    func keyPathWriteKeepsNoLiveInstance() {
        let reports = Reports()
        let before = liveClients.value
        withTestInjectedValues(strict: reports.add) { _ in
        } operation: {
            // Swift reads the accessor before writing it: that read gets back the value being written, so no live
            // client is built at all.
            InjectedValues[\.liveClient] = LiveClient(nil)
            #expect(liveClients.value == before)
            #expect(InjectedValues[\.liveClient].isLive == false)
        }
        #expect(reports.messages.isEmpty)
    }

    @Test(
        "a strict test that overrides a key without a test value through .injecting reports nothing",
        .injectedValues(strict: true),
        .injecting(\.liveOnly, "injected")
    )
    func strictInjectingReportsNothing() {
        #expect(InjectedValues[\.liveOnly] == "injected")
    }

    @Test("a key-path write whose live default reads another key reports nothing, in the update closure or the body")
    func keyPathWriteReadingAnotherKeyReportsNothing() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
            // What `.injecting(\.network, …)` does.
            InjectedValues[\.network] = Network(session: "mock")
        } operation: {
            #expect(InjectedValues[\.network].session == "mock")
            withInjectedValues { _ in
            } operation: {
                InjectedValues[\.network] = Network(session: "mock in the body")
                #expect(InjectedValues[\.network].session == "mock in the body")
            }
        }
        #expect(reports.messages.isEmpty, "\(reports.messages)")
    }

    @Test("a key the test reads itself after a key-path write built it is still reported")
    func keyReadAfterAKeyPathWriteIsReported() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
            InjectedValues[\.network] = Network(session: "mock")
        } operation: {
            _ = InjectedValues[\.session]
        }
        #expect(reports.messages.count == 1)
        #expect(reports.messages.first?.contains("SessionKey") == true)
    }

    @Test("a strict test whose update closure writes part of a dependency is told to set the whole of it")
    func partialWriteAdvice() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) {
            $0.factClient.fetch = { "mocked fact" }
        } operation: {
            #expect(InjectedValues[\.factClient].fetch() == "mocked fact")
        }
        #expect(reports.messages.count == 1)
        let message = reports.messages.first ?? ""
        #expect(message.contains("the test's update closure read FactClientKey"))
        #expect(message.contains("Writing part of a dependency"))
        #expect(message.contains("set the whole dependency in the update closure"))
        #expect(!message.contains("override the dependency in the test's update closure"))
    }

    @Test("a strict test reads overrides and test values without a report", .injectedValues(strict: true))
    func strictWithoutReports() {
        InjectedValues[\.liveOnly] = "overridden"
        #expect(InjectedValues[\.liveOnly] == "overridden")
        #expect(InjectedValues[\.mailer].name == "in-memory")
    }

    @Test("a test that is not strict reads such a key silently, with its live value", .injectedValues)
    func lenientIsSilent() {
        #expect(InjectedValues[\.liveOnly] == "live only")
    }

    @Test(
        "a suite's overrides stay under a test's own trait, with its test values",
        .injectedValues { $0.liveOnly = "from the suite" },
        .injecting(\.otherLiveOnly, "from the test")
    )
    func nestedTraits() {
        #expect(InjectedValues[\.liveOnly] == "from the suite")
        #expect(InjectedValues[\.otherLiveOnly] == "from the test")
        #expect(InjectedValues[\.mailer].name == "in-memory")
    }

    @Test("200 strict and lenient tests at once each see only their own reports")
    func parallelTests() async {
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let reports = Reports()
                    let strict = index.isMultiple(of: 2)
                    await withTestInjectedValues(strict: strict ? reports.add : nil) { _ in
                    } operation: {
                        await Task.yield()
                        _ = InjectedValues[\.liveOnly]
                        _ = InjectedValues[\.mailer]
                    }
                    return reports.messages.count == (strict ? 1 : 0) ? 0 : 1
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}

/// Messages a strict test reported.
///
/// Unless told to keep them, it ignores reads made outside every test's scope: while a strict test runs, the library
/// reports those to the strict test that began last, which in a parallel run may be any of them.
final class Reports: @unchecked Sendable {
    // `@unchecked Sendable`: `stored` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var stored: [String] = []
    private let keepingEscapingReads: Bool

    init(keepingEscapingReads: Bool = false) {
        self.keepingEscapingReads = keepingEscapingReads
    }

    var messages: [String] { lock.withLock { stored } }

    @Sendable func add(_ message: String) {
        if !keepingEscapingReads, message.hasPrefix("InjectedValues: work outside every test's scope") { return }
        lock.withLock { stored.append(message) }
    }
}

// MARK: - Keys

/// A service with state, kept behind a lock.
final class Mailer: @unchecked Sendable {
    // `@unchecked Sendable`: `outbox` is only read and written while holding `lock`.
    let name: String
    private let lock = NSLock()
    private var outbox: [String] = []

    init(name: String) {
        self.name = name
    }

    var sent: [String] { lock.withLock { outbox } }

    func send(_ message: String) {
        lock.withLock { outbox.append(message) }
    }
}

enum MailerKey: ReadOnlyInjectionKey {
    static var currentValue: Mailer { Mailer(name: "live") }
    static var lifetime: InjectionLifetime { .cached }
}

extension MailerKey: TestValueKey {
    static var testValue: Mailer { Mailer(name: "in-memory") }
}

/// Releases of live clients that `LiveClientKey` builds; only `keyPathWriteKeepsNoLiveInstance` reads the key.
let liveClients = Counter()

/// A client that counts the releases of live instances.
final class LiveClient: Sendable {
    private let released: Counter?

    init(_ released: Counter?) {
        self.released = released
    }

    var isLive: Bool { released != nil }

    deinit { released?.increment() }
}

enum LiveClientKey: ReadOnlyInjectionKey {
    static var currentValue: LiveClient { LiveClient(liveClients) }
    static var lifetime: InjectionLifetime { .cached }
}

/// A client made of closures, as swift-dependencies' clients are.
struct FactClient: Sendable {
    var fetch: @Sendable () -> String
}

enum FactClientKey: ReadOnlyInjectionKey {
    static var currentValue: FactClient { FactClient(fetch: { "a live fact" }) }
}

/// A network client whose live default reads the session, a key with no test value.
struct Network: Sendable {
    let session: String
}

enum NetworkKey: ReadOnlyInjectionKey {
    static var currentValue: Network { Network(session: InjectedValues[\.session]) }
}

enum SessionKey: ReadOnlyInjectionKey {
    static var currentValue: String { "live session" }
    static var lifetime: InjectionLifetime { .cached }
}

enum LiveOnlyKey: ReadOnlyInjectionKey {
    static let currentValue = "live only"
}

enum OtherLiveOnlyKey: ReadOnlyInjectionKey {
    static let currentValue = "other live only"
}

extension InjectedValues {
    var factClient: FactClient {
        get { Self[FactClientKey.self] }
        set { Self[FactClientKey.self] = newValue }
    }

    var network: Network {
        get { Self[NetworkKey.self] }
        set { Self[NetworkKey.self] = newValue }
    }

    var session: String {
        get { Self[SessionKey.self] }
        set { Self[SessionKey.self] = newValue }
    }

    var liveClient: LiveClient {
        get { Self[LiveClientKey.self] }
        set { Self[LiveClientKey.self] = newValue }
    }

    var mailer: Mailer {
        get { Self[MailerKey.self] }
        set { Self[MailerKey.self] = newValue }
    }

    var liveOnly: String {
        get { Self[LiveOnlyKey.self] }
        set { Self[LiveOnlyKey.self] = newValue }
    }

    var otherLiveOnly: String {
        get { Self[OtherLiveOnlyKey.self] }
        set { Self[OtherLiveOnlyKey.self] = newValue }
    }
}

/// A count that threads increment.
final class Counter: @unchecked Sendable {
    // `@unchecked Sendable`: `count` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var count = 0

    var value: Int { lock.withLock { count } }

    func increment() {
        lock.withLock { count += 1 }
    }
}
