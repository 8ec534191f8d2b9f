import Foundation
import Injected
import Testing

/// Derived, get-only accessors and nested paths read and write through the store.
@Suite("Key paths")
struct KeyPathTests {
    @Test("a derived get-only accessor reads the dependency it is built from")
    func derivedAccessor() {
        inFreshScope {
            #expect(InjectedValues[\.baseURL] == "https://example.com")
            InjectedValues[\.networkConfiguration] = NetworkConfiguration(baseURL: "http://localhost")
            #expect(InjectedValues[\.baseURL] == "http://localhost")
        }
    }

    @Test("a read-only wrapper follows the dependency its path is derived from")
    func readOnlyWrapper() {
        inFreshScope {
            @Injected(\.baseURL) var baseURL
            #expect(baseURL == "https://example.com")
            InjectedValues[\.networkConfiguration] = NetworkConfiguration(baseURL: "http://localhost")
            #expect(baseURL == "http://localhost")
        }
    }

    @Test("a write to a nested path changes only that part of the outer dependency")
    func nestedPathWrite() {
        inFreshScope {
            InjectedValues[\.formatters.duration] = "short"
            #expect(InjectedValues[\.formatters.duration] == "short")
            #expect(InjectedValues[\.formatters.date] == "iso8601")
            #expect(InjectedValues[FormattersKey.self] == Formatters(duration: "short", date: "iso8601"))
        }
    }

    @Test("a nested write in a scope leaves the outer dependency untouched outside it")
    func nestedPathInScope() {
        inFreshScope {
            withInjectedValues {
                $0.formatters.duration = "scoped"
            } operation: {
                #expect(InjectedValues[\.formatters.duration] == "scoped")
            }
            #expect(InjectedValues[\.formatters.duration] == "long")
        }
    }

    @Test("reads that an accessor's setter makes are its own: a cached dependency it logs to is built once and kept")
    func setterReadsAreReadsOfTheirOwn() {
        withInjectedValues(fresh: true) { _ in
        } operation: {
            let before = AuditLog.builds.value
            InjectedValues[\.auditedTitle] = "one"
            InjectedValues[\.auditedTitle] = "two"
            let log = InjectedValues[\.auditLog]
            #expect(AuditLog.builds.value - before == 1)
            #expect(log.entries == ["title = one", "title = two"])
            #expect(InjectedValues[\.auditedTitle] == "two")
        }
    }

    // Since issue 37 a write through a derived accessor is reported: its getter built a live default, which a strict
    // test says once, naming the write, and which is built once.
    @Test("a write through a derived accessor reports once each live default its getter built, which is built once")
    func derivedAccessorWriteIsReported() {
        let messages = Messages()
        let before = TripleC.builds.value
        withTestInjectedValues(strict: true, reportingTo: messages.append) { _ in
        } operation: {
            InjectedValues[\.triple] = Triple(a: 3, b: 4, c: 0)
            #expect(InjectedValues[TripleAKey.self] == 3)
            #expect(InjectedValues[TripleBKey.self] == 4)
            // The getter read TripleCKey, which the setter does not write: reported once, and cached.
            #expect(InjectedValues[TripleCKey.self].value == 5)
        }
        #expect(TripleC.builds.value - before == 1)
        // One report for each key the getter built, A, B and C, none when the test reads them later.
        #expect(messages.all.count == 3)
        #expect(messages.all.allSatisfy { $0.contains("the test's write through") })
        #expect(messages.all.last?.contains("TripleCKey") == true)
        #expect(messages.all.last?.contains("static var testValue: TripleC {") == true)
    }

    // Since a write through a key path reads back the value it writes (design note W6), the write builds no live
    // default: only the warm-up's read may, once.
    @Test("a launch override racing a warm-up's first read builds the live default at most once, 300 times")
    func launchOverrideRacingAWarmUp() async {
        // In a process of its own that runs no test's scope, as an app is.
        await #expect(processExitsWith: .success) {
            let threads = RaceThreads(2)
            for round in 0..<300 {
                InjectedValues.reset()
                let before = PDFRenderer.liveBuilds.value
                let finished = threads.round(timeout: 20) { index in
                    if index == 0 {
                        InjectedValues[\.launchRenderer] = PDFRenderer(live: false)
                    } else {
                        _ = InjectedValues[\.launchRenderer]
                    }
                }
                let built = PDFRenderer.liveBuilds.value - before
                guard finished, built <= 1 else {
                    fatalError("round \(round): the live default was built \(built) times")
                }
                guard !InjectedValues[\.launchRenderer].isLive else {
                    fatalError("round \(round): the override was lost")
                }
            }
            threads.stop()
        }
    }

    @Test("a wrapper through a nested path reads and writes that part")
    func nestedPathWrapper() {
        inFreshScope {
            @Injected(\.formatters.duration) var duration
            #expect(duration == "long")
            duration = "wrapped"
            #expect(InjectedValues[\.formatters] == Formatters(duration: "wrapped", date: "iso8601"))
        }
    }
}

struct NetworkConfiguration: Sendable, Equatable {
    var baseURL: String
}

struct Formatters: Sendable, Equatable {
    var duration: String
    var date: String
}

/// A log that an accessor's setter appends to; it counts how many are built.
final class AuditLog: Sendable {
    static let builds = Counter()
    private let lock = NSLock()
    nonisolated(unsafe) private var stored: [String] = []

    init() { Self.builds.increment() }

    var entries: [String] { lock.withLock { stored } }

    func append(_ entry: String) { lock.withLock { stored.append(entry) } }
}

/// A renderer whose live instance takes a while to make, as a service that loads fonts does.
private final class PDFRenderer: Sendable {
    static let liveBuilds = Counter()
    let isLive: Bool

    init(live: Bool) {
        isLive = live
        if live {
            usleep(2_000)
            Self.liveBuilds.increment()
        }
    }
}

private enum LaunchRendererKey: ReadOnlyInjectionKey {
    static var currentValue: PDFRenderer { PDFRenderer(live: true) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum AuditLogKey: ReadOnlyInjectionKey {
    static var currentValue: AuditLog { AuditLog() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum AuditedTitleKey: ReadOnlyInjectionKey {
    static let currentValue = "untitled"
}

private enum NetworkConfigurationKey: ReadOnlyInjectionKey {
    static let currentValue = NetworkConfiguration(baseURL: "https://example.com")
}

private enum FormattersKey: ReadOnlyInjectionKey {
    static let currentValue = Formatters(duration: "long", date: "iso8601")
}

extension InjectedValues {
    fileprivate var networkConfiguration: NetworkConfiguration {
        get { Self[NetworkConfigurationKey.self] }
        set { Self[NetworkConfigurationKey.self] = newValue }
    }

    fileprivate var baseURL: String { networkConfiguration.baseURL }

    fileprivate var auditLog: AuditLog { Self[AuditLogKey.self] }

    fileprivate var launchRenderer: PDFRenderer {
        get { Self[LaunchRendererKey.self] }
        set { Self[LaunchRendererKey.self] = newValue }
    }

    /// A title whose every change is logged, by a setter that reads another dependency.
    fileprivate var auditedTitle: String {
        get { Self[AuditedTitleKey.self] }
        set {
            self[AuditLogKey.self].append("title = \(newValue)")
            Self[AuditedTitleKey.self] = newValue
        }
    }

    fileprivate var formatters: Formatters {
        get { self[FormattersKey.self] }
        set { self[FormattersKey.self] = newValue }
    }
}

/// Three dependencies that one accessor reads together and writes two of.
struct Triple: Sendable, Equatable {
    var a: Int
    var b: Int
    var c: Int
}

/// A cached dependency that counts its builds.
final class TripleC: Sendable {
    static let builds = Counter()
    let value = 5

    init() {
        Self.builds.increment()
    }
}

private enum TripleAKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 1 }
}

private enum TripleBKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 2 }
}

private enum TripleCKey: ReadOnlyInjectionKey {
    static var currentValue: TripleC { TripleC() }
}

extension InjectedValues {
    fileprivate var triple: Triple {
        get { Triple(a: Self[TripleAKey.self], b: Self[TripleBKey.self], c: Self[TripleCKey.self].value) }
        set {
            Self[TripleAKey.self] = newValue.a
            Self[TripleBKey.self] = newValue.b
        }
    }
}

/// What a strict test reported about its own reads, in order.
///
/// It ignores reads made outside every test's scope, which, while a strict test runs, are reported to the strict test
/// that began last: in a parallel run, other tests' work.
private final class Messages: @unchecked Sendable {
    // `@unchecked Sendable`: `list` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var list: [String] = []

    var all: [String] { lock.withLock { list } }

    @Sendable func append(_ message: String) {
        if message.hasPrefix("InjectedValues: work outside every test's scope") { return }
        lock.withLock { list.append(message) }
    }
}
