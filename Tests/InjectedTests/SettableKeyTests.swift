import Foundation
import Injected
import Testing

extension ProcessGlobalStateTests {
    /// The article's keys have a settable `currentValue`, and projects write them both ways, through the store and
    /// directly; both must be one store, in which the last write wins.
    ///
    /// The sequences are those of a real project's test classes, run in one process with no reset between them, with
    /// service types of the same shape.
    @Suite("Writing an article-style key both ways")
    struct SettableKeyTests {
        @Test("a direct write to currentValue after a write through the store is what every reader sees")
        func directWriteAfterStoreWrite() async {
            defer { InjectedValues.reset() }
            // One test class writes its mock through the store and leaves it in the background.
            let leftOver = MockAppStateAdapter()
            InjectedValues[\.applicationStateAdapter] = leftOver
            leftOver.state = .background

            // The next one installs its stub with a direct write only.
            let stub = MockAppStateAdapter()
            AppStateProviderKey.currentValue = stub
            let policy = AudioSessionPolicy()
            #expect(policy.category == "playAndRecord")
            #expect(policy.adapter === stub)
            #expect(InjectedValues[\.applicationStateAdapter] === stub)
            let stubID = ObjectIdentifier(stub)
            #expect(await Task.detached { ObjectIdentifier(AudioSessionPolicy().adapter) }.value == stubID)
        }

        @Test("a write through the store after a direct write is what every reader sees")
        func storeWriteAfterDirectWrite() async {
            defer { InjectedValues.reset() }
            let policy = AudioSessionPolicy()
            AppStateProviderKey.currentValue = MockAppStateAdapter()
            let mock = MockAppStateAdapter()
            mock.state = .background
            InjectedValues[\.applicationStateAdapter] = mock
            #expect(AppStateProviderKey.currentValue === mock)
            #expect(policy.category == "ambient")
            let mockID = ObjectIdentifier(mock)
            #expect(await Task.detached { ObjectIdentifier(AudioSessionPolicy().adapter) }.value == mockID)
        }

        @Test("changing the instance currentValue holds, after a write through the store, changes what readers see")
        func mutationAfterStoreWrite() {
            defer { InjectedValues.reset() }
            // One test class ends by writing a simulator device through the store.
            InjectedValues[\.currentDevice] = CurrentDevice(.simulator)

            // The next one's setUp changes the device that the key holds.
            CurrentDeviceKey.currentValue.didUpdate(.phone)
            let manager = ProximityManager()
            #expect(manager.isEnabled)
            #expect(InjectedValues[\.currentDevice].deviceType == .phone)
        }

        @Test("a write through the store after changing the instance currentValue holds is what readers see")
        func storeWriteAfterMutation() {
            defer {
                InjectedValues.reset()
                CurrentDeviceKey.currentValue.didUpdate(.unspecified)
            }
            CurrentDeviceKey.currentValue.didUpdate(.phone)
            let simulator = CurrentDevice(.simulator)
            InjectedValues[\.currentDevice] = simulator
            #expect(CurrentDeviceKey.currentValue === simulator)
            #expect(!ProximityManager().isEnabled)
        }

        @Test("a helper that writes both ways, as a project's makeShared() does, leaves one value")
        func bothWaysAtOnce() {
            defer { InjectedValues.reset() }
            let shared = MockAppStateAdapter.makeShared()
            #expect(AppStateProviderKey.currentValue === shared)
            #expect(AudioSessionPolicy().adapter === shared)
        }

        @Test("reset assigns back what currentValue held before the first write through the store")
        func resetRestoresTheOriginal() {
            let original = CurrentDeviceKey.currentValue
            InjectedValues[\.currentDevice] = CurrentDevice(.simulator)
            InjectedValues[\.currentDevice] = CurrentDevice(.pad)
            InjectedValues.reset()
            #expect(CurrentDeviceKey.currentValue === original)
            #expect(InjectedValues[\.currentDevice] === original)
            // With nothing written since, a reset leaves a direct write alone: it is not the store's to undo.
            let direct = CurrentDevice(.pad)
            CurrentDeviceKey.currentValue = direct
            InjectedValues.reset()
            #expect(CurrentDeviceKey.currentValue === direct)
            CurrentDeviceKey.currentValue = original
        }

        @Test("a write inside a scope stays in the scope and leaves currentValue alone")
        func scopedWriteLeavesCurrentValue() {
            let original = CurrentDeviceKey.currentValue
            let scoped = CurrentDevice(.simulator)
            withInjectedValues {
                $0.currentDevice = scoped
            } operation: {
                #expect(InjectedValues[\.currentDevice] === scoped)
                InjectedValues[\.currentDevice] = CurrentDevice(.pad)
                #expect(InjectedValues[\.currentDevice].deviceType == .pad)
            }
            #expect(CurrentDeviceKey.currentValue === original)
            #expect(InjectedValues[\.currentDevice] === original)
        }

        @Test("a fresh scope starts from currentValue as the last global write left it")
        func freshScopeStartsFromCurrentValue() {
            defer { InjectedValues.reset() }
            let simulator = CurrentDevice(.simulator)
            InjectedValues[\.currentDevice] = simulator
            withInjectedValues(fresh: true) { _ in
            } operation: {
                #expect(InjectedValues[\.currentDevice] === simulator)
            }
        }

        @Test("a cached settable key is built again from what a global write assigned")
        func cachedSettableKey() {
            defer { InjectedValues.reset() }
            #expect(InjectedValues[\.greetingBanner] == "Banner: hello")
            InjectedValues[CachedGreetingKey.self] = "welcome"
            #expect(CachedGreetingKey.currentValue == "welcome")
            #expect(InjectedValues[\.greetingBanner] == "Banner: welcome")
            InjectedValues.reset()
            #expect(InjectedValues[\.greetingBanner] == "Banner: hello")
        }

        @Test("an observer of currentValue may write another dependency during a global write")
        func observerWritesDuringAssignment() {
            defer { InjectedValues.reset() }
            let finished = runOnThreads(1) { _ in InjectedValues[ObservedKey.self] = 7 }
            #expect(finished)
            #expect(EchoKey.currentValue == 7)
            #expect(InjectedValues[EchoKey.self] == 7)
        }

        @Test("global writes from many threads at once take turns, and a reset restores the original")
        func concurrentWritesTakeTurns() {
            let original = CurrentDeviceKey.currentValue
            let finished = runOnThreads(8) { _ in
                for _ in 0..<1_000 {
                    InjectedValues[\.currentDevice] = CurrentDevice(.pad)
                }
            }
            #expect(finished)
            #expect(CurrentDeviceKey.currentValue.deviceType == .pad)
            InjectedValues.reset()
            #expect(CurrentDeviceKey.currentValue === original)
        }
    }
}

// MARK: - Services in the shape of the project's

private enum AppState {
    case foreground, background
}

private protocol AppStateProviding: AnyObject, Sendable {
    var state: AppState { get }
}

private final class LiveAppStateAdapter: AppStateProviding {
    var state: AppState { .foreground }
}

/// A mock with a settable state, kept behind a lock as Swift 6 asks of a service shared between threads.
private final class MockAppStateAdapter: AppStateProviding, @unchecked Sendable {
    // `@unchecked Sendable`: `storedState` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var storedState = AppState.foreground

    var state: AppState {
        get { lock.withLock { storedState } }
        set { lock.withLock { storedState = newValue } }
    }

    /// Installs a new mock both ways, as the project's helper does.
    static func makeShared() -> MockAppStateAdapter {
        let mock = MockAppStateAdapter()
        AppStateProviderKey.currentValue = mock
        InjectedValues[\.applicationStateAdapter] = mock
        return mock
    }
}

/// Chooses the audio category from the app's state.
private final class AudioSessionPolicy {
    @Injected(\.applicationStateAdapter) var adapter

    var category: String { adapter.state == .foreground ? "playAndRecord" : "ambient" }
}

private enum DeviceType {
    case unspecified, phone, pad, simulator
}

private final class CurrentDevice: @unchecked Sendable {
    // `@unchecked Sendable`: `storedType` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var storedType: DeviceType

    init(_ deviceType: DeviceType = .unspecified) {
        storedType = deviceType
    }

    var deviceType: DeviceType { lock.withLock { storedType } }

    func didUpdate(_ deviceType: DeviceType) {
        lock.withLock { storedType = deviceType }
    }
}

/// Turns the proximity sensor on for phones.
private struct ProximityManager {
    @Injected(\.currentDevice) var device

    var isEnabled: Bool { device.deviceType == .phone }
}

// The article's key declarations, in Swift 6 mode.

private enum AppStateProviderKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: any AppStateProviding = LiveAppStateAdapter()
}

private enum CurrentDeviceKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = CurrentDevice()
}

private enum CachedGreetingKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = "hello"
    static var lifetime: InjectionLifetime { .cached }
}

/// A settable key whose observer writes another one, which the store runs while it assigns this one.
private enum ObservedKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = 0 {
        didSet { InjectedValues[EchoKey.self] = currentValue }
    }
}

private enum EchoKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = 0
}

private enum GreetingBannerKey: ReadOnlyInjectionKey {
    static var currentValue: String { "Banner: " + InjectedValues[CachedGreetingKey.self] }
    static var lifetime: InjectionLifetime { .uncached }
}

extension InjectedValues {
    fileprivate var applicationStateAdapter: any AppStateProviding {
        get { Self[AppStateProviderKey.self] }
        set { Self[AppStateProviderKey.self] = newValue }
    }

    fileprivate var currentDevice: CurrentDevice {
        get { Self[CurrentDeviceKey.self] }
        set { Self[CurrentDeviceKey.self] = newValue }
    }

    fileprivate var greetingBanner: String {
        InjectedValues[GreetingBannerKey.self]
    }
}
