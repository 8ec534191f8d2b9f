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

extension InjectedValues {
    var reportedSettings: ReportedSettings {
        get { Self[ReportedSettingsKey.self] }
        set { Self[ReportedSettingsKey.self] = newValue }
    }

    var reportedTimeout: Int {
        get { Self[ReportedTimeoutKey.self] }
        set { Self[ReportedTimeoutKey.self] = newValue }
    }
}
