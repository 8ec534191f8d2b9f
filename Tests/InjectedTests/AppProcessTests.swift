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

    @Test("a derived default first read in a scope that overrides its input warns, once, that it was built live")
    func firstBuildFromTheLiveInputWarns() async {
        let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
            InjectedValues.Store.tests.withLock { $0.process = nil }
            let inPreview = withInjectedValues {
                $0.appFolder = "/sandbox"
            } operation: {
                InjectedValues[\.appFolderStore]
            }
            let inAnother = withInjectedValues {
                $0.appFolder = "/other"
            } operation: {
                InjectedValues[\.appFolderStore]
            }
            guard inPreview == "/sandbox/store", inAnother == "/other/store" else {
                fatalError("read \(inPreview), then \(inAnother)")
            }
        }
        let output = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        let warning = "the store built its own AppFolderStoreKey from the live default of AppFolderKey"
        #expect(output.contains(warning), "\(output)")
        #expect(output.components(separatedBy: warning).count == 2, "warned more than once: \(output)")
    }
}

private enum AppFolderKey: ReadOnlyInjectionKey {
    static var currentValue: String { "/live" }
}

/// A store kept in the folder: a `.cached` default derived from another key.
private enum AppFolderStoreKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.appFolder] + "/store" }
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

    fileprivate var appFolder: String {
        get { Self[AppFolderKey.self] }
        set { Self[AppFolderKey.self] = newValue }
    }

    fileprivate var appFolderStore: String { Self[AppFolderStoreKey.self] }
}
