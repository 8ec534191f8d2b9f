import Testing

@testable import Injected

/// Reads in an app's process, which no test runner started: the global store's per-thread views.
@Suite("Reads in an app's process")
struct AppProcessTests {
    @Test("an uncached default read outside every scope, while the global store overrides another key, is its own")
    func uncachedReadBesideAGlobalOverride() async {
        await #expect(processExitsWith: .success) {
            // An app's process: no runner started it, so reads outside every scope evaluate live defaults.
            InjectedValues.Store.tests.withLock { $0.process = nil }
            InjectedValues[\.appLaunchSetting] = "set at launch"
            let reads = (0..<3).map { _ in InjectedValues[\.appUncachedGreeting] }
            guard reads == ["hello", "hello", "hello"] else { fatalError("read \(reads)") }
        }
    }
}

private enum AppLaunchSettingKey: ReadOnlyInjectionKey {
    static var currentValue: String { "default" }
}

private enum AppUncachedGreetingKey: ReadOnlyInjectionKey {
    static var currentValue: String { "hello" }
    static var lifetime: InjectionLifetime { .uncached }
}

extension InjectedValues {
    fileprivate var appLaunchSetting: String {
        get { Self[AppLaunchSettingKey.self] }
        set { Self[AppLaunchSettingKey.self] = newValue }
    }

    fileprivate var appUncachedGreeting: String { Self[AppUncachedGreetingKey.self] }
}
