import Injected
import Testing

/// What a strict test reports says what read the key and gives a fix whose types are the real ones (issue 37).
@Suite("The messages a strict test reports")
struct ReportMessageTests {
    @Test("a report on a key read without a test value names the key's value type in its fix")
    func reportNamesTheValueType() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            _ = InjectedValues[\.reportedTimeout]
        }
        #expect(reports.messages.count == 1)
        let message = reports.messages.first ?? ""
        #expect(message.contains("the test read ReportedTimeoutKey"))
        #expect(message.contains("extension ReportedTimeoutKey: TestValueKey { static var testValue: Int {"))
        #expect(!message.contains("$0.…"), "\(message)")
    }

    @Test("a report names the accessor the test read through, in fixes that compile as printed")
    func reportNamesTheAccessor() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            _ = InjectedValues[\.reportedTimeout]
        }
        let message = reports.messages.first ?? ""
        #expect(message.contains("ReportedTimeoutKey through its accessor reportedTimeout"), "\(message)")
        #expect(message.contains(".injectedValues { $0.reportedTimeout = mock }"), "\(message)")
        #expect(message.contains(".injecting(\\.reportedTimeout, mock)"), "\(message)")
    }

    @Test("a report on a key a default reads names that key's own accessor, not the one the test read")
    func nestedReportNamesItsOwnAccessor() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            _ = InjectedValues[\.reportedClient]
        }
        let inner = reports.messages.first { $0.contains("read ReportedTimeoutKey") } ?? ""
        #expect(inner.contains("through its accessor reportedTimeout"), "\(reports.messages)")
        #expect(!inner.contains("reportedClient"), "\(inner)")
    }

    @Test("a report on a key the test reads by its type names no accessor")
    func keyReadByTypeNamesNoAccessor() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            _ = InjectedValues[ReportedTimeoutKey.self]
        }
        let message = reports.messages.first ?? ""
        #expect(message.contains("the test read ReportedTimeoutKey, which"), "\(message)")
        #expect(message.contains("override the accessor that reads it"), "\(message)")
    }

    @Test("a report on a part of a dependency written in the update closure names the whole dependency's accessor")
    func updateClosureReportNamesTheAccessor() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) {
            $0.reportedSettings.timeout = 5
        } operation: {
        }
        let message = reports.messages.first ?? ""
        #expect(message.contains("update closure read ReportedSettingsKey through its accessor reportedSettings"))
        #expect(message.contains("as $0.reportedSettings = mock"), "\(message)")
    }

    @Test("a write through a nested key path in a strict test reports the live default it built, naming the write")
    func nestedKeyPathWriteIsReported() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            InjectedValues[\.reportedSettings.timeout] = 5
            #expect(InjectedValues[\.reportedSettings].timeout == 5)
        }
        #expect(reports.messages.count == 1)
        let message = reports.messages.first ?? ""
        #expect(message.contains("the test's write through"), "\(message)")
        #expect(message.contains("ReportedSettingsKey"))
        #expect(message.contains("static var testValue: ReportedSettings {"))
    }

    @Test("a write through a plain accessor in a strict test builds nothing live and reports nothing")
    func plainKeyPathWriteReportsNothing() {
        let reports = Reports()
        withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
        } operation: {
            InjectedValues[\.reportedSettings] = ReportedSettings(timeout: 1)
            #expect(InjectedValues[\.reportedSettings].timeout == 1)
        }
        #expect(reports.messages.isEmpty, "\(reports.messages)")
    }
}

/// Settings whose part a test may write through a nested key path.
struct ReportedSettings: Sendable {
    var timeout: Int
}

enum ReportedSettingsKey: ReadOnlyInjectionKey {
    static var currentValue: ReportedSettings { ReportedSettings(timeout: 30) }
}

enum ReportedTimeoutKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 30 }
}

/// A client whose default reads the timeout.
enum ReportedClientKey: ReadOnlyInjectionKey {
    static var currentValue: String { "client with timeout \(InjectedValues[\.reportedTimeout])" }
}

extension InjectedValues {
    var reportedSettings: ReportedSettings {
        get { Self[ReportedSettingsKey.self] }
        set { Self[ReportedSettingsKey.self] = newValue }
    }

    var reportedClient: String { Self[ReportedClientKey.self] }

    var reportedTimeout: Int {
        get { Self[ReportedTimeoutKey.self] }
        set { Self[ReportedTimeoutKey.self] = newValue }
    }
}
