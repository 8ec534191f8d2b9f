import Foundation
import Injected
import Testing

/// A scope never keeps a value that keeps the scope, whatever route the value took into it.
///
/// So every scope, and what it holds, is released. Each test counts `deinit`s; a cycle shows as releases that never
/// come.
@Suite("What a scope keeps never keeps the scope")
struct ScopeOwnershipTests {
    @Test("1,000 fresh scopes whose cached client captures the scope in its default release every client")
    func captureInACachedDefaultOfAFreshScope() {
        for _ in 0..<1_000 {
            withInjectedValues(fresh: true) { _ in
            } operation: {
                #expect(InjectedValues[\.freshCapturingClient].scope.run { InjectedValues[\.ownedLabel] } == "default")
            }
        }
        #expect(freshCapturingClients.value == 1_000)
    }

    @Test("1,000 test scopes whose cached client captures the scope in its default release every client")
    func captureInACachedDefaultOfATestScope() {
        for _ in 0..<1_000 {
            withTestInjectedValues(strict: nil) {
                $0.ownedLabel = "test"
            } operation: {
                _ = InjectedValues[\.testCapturingClient]
            }
        }
        #expect(testCapturingClients.value == 1_000)
    }

    // Since core v5 a capture made in an update closure remembers the new scope, which it cannot keep alive.
    @Test("a client made in the update closure that captures the scope there is released, and runs in that scope")
    func captureInTheUpdateClosure() {
        let released = Counter()
        do {
            let client = withInjectedValues {
                $0.ownedLabel = "outer"
            } operation: {
                withInjectedValues {
                    $0.ownedLabel = "inner"
                    $0.capturingClient = CapturingClient(released)
                } operation: {
                    InjectedValues[\.capturingClient]
                }
            }
            #expect(client.scope.run { InjectedValues[\.ownedLabel] } == "inner")
        }
        #expect(released.value == 1)
    }

    @Test("an object made in a scope opened inside an update closure does not keep the scope being set up")
    func scopeOpenedInAnUpdateClosure() {
        let released = Counter()
        do {
            let client = withInjectedValues {
                $0.ownedLabel = "outer"
            } operation: {
                withInjectedValues {
                    $0.ownedLabel = "being set up"
                    $0.holdingClient = withInjectedValues { _ in
                    } operation: {
                        HoldingClient(released)
                    }
                } operation: {
                    InjectedValues[\.holdingClient]
                }
            }
            // Since core v5 the client's scope is nested in the one being set up, which it does not keep alive.
            #expect(client.label.wrappedValue == "being set up")
        }
        #expect(released.value == 1)
    }

    @Test("a value a task writes after the operation returned, remembering the scope, is released with the task")
    func lateWriteIsReleased() async {
        let released = Counter()
        let task = withInjectedValues {
            $0.ownedLabel = "configured"
        } operation: {
            Task {
                await Task.yield()
                InjectedValues[\.capturingClient] = CapturingClient(released)
                #expect(InjectedValues[\.capturingClient].scope.run { InjectedValues[\.ownedLabel] } == "configured")
            }
        }
        await task.value
        #expect(released.value == 1)
    }

    @Test(
        "1,000 fresh scopes whose cached service holds a value the operation wrote, remembering the scope, release both"
    )
    func cachedServiceHoldingAWrittenValue() {
        let released = Counter()
        for _ in 0..<1_000 {
            withInjectedValues(fresh: true) { _ in
            } operation: {
                InjectedValues[\.holdingClient] = HoldingClient(released)
                let holder = InjectedValues[\.holdingService]
                #expect(holder.client.label.wrappedValue == "default")
                // A later read is the same instance, while the run lasts.
                #expect(InjectedValues[\.holdingService] === holder)
            }
        }
        #expect(released.value == 1_000)
    }

    @Test("1,000 scopes each writing, during the operation, a value that remembers the scope release every value")
    func operationWritesAreReleased() {
        let released = Counter()
        for _ in 0..<1_000 {
            withInjectedValues { _ in
            } operation: {
                InjectedValues[\.capturingClient] = CapturingClient(released)
                InjectedValues[\.holdingClient] = HoldingClient(released)
            }
        }
        #expect(released.value == 2_000)
    }
}

/// A service that starts a task of its own, such as a token refresher, is released with the scope that keeps it.
@Suite("Tasks started by what a scope keeps")
struct KeptTaskTests {
    @Test("a cached service whose init starts a task, read in 100 test scopes, is released with each")
    func cachedServiceInTestScopes() async {
        let released = Counter()
        for _ in 0..<100 {
            withTestInjectedValues(strict: nil) {
                $0.refresherReleases = released
            } operation: {
                _ = InjectedValues[\.refresher]
            }
        }
        #expect(await eventually { released.value == 100 }, "\(released.value) of 100 released")
    }

    @Test("a cached service whose init starts a task, read in 100 fresh scopes, is released with each")
    func cachedServiceInFreshScopes() async {
        let released = Counter()
        for _ in 0..<100 {
            withInjectedValues(fresh: true) {
                $0.refresherReleases = released
            } operation: {
                _ = InjectedValues[\.refresher]
            }
        }
        #expect(await eventually { released.value == 100 }, "\(released.value) of 100 released")
    }

    @Test("a service whose init starts a task, set in 100 test update closures, is released with each")
    func serviceSetInUpdateClosures() async {
        let released = Counter()
        for _ in 0..<100 {
            withTestInjectedValues(strict: nil) {
                $0.refresher = TokenRefresher(released)
            } operation: {
                _ = InjectedValues[\.refresher]
            }
        }
        #expect(await eventually { released.value == 100 }, "\(released.value) of 100 released")
    }

    @Test("the same service made outside any scope is released, as a control")
    func serviceOutsideAnyScope() async {
        let released = Counter()
        for _ in 0..<100 { _ = TokenRefresher(released) }
        #expect(await eventually { released.value == 100 }, "\(released.value) of 100 released")
    }
}

/// Whether `condition` holds within five seconds, checked every millisecond.
private func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<5_000 {
        if condition() { return true }
        try? await Task.sleep(nanoseconds: 1_000_000)
    }
    return condition()
}

/// A service that refreshes a token in a task of its own for as long as it lives, as clients of web APIs do.
private final class TokenRefresher: Sendable {
    private let released: Counter

    init(_ released: Counter) {
        self.released = released
        Task { [weak self] in
            while self != nil {
                try? await Task.sleep(nanoseconds: 1_000_000)
            }
        }
    }

    deinit { released.increment() }
}

/// A client that keeps the scope it was made in, as a client that schedules work later does.
private final class CapturingClient: Sendable {
    let scope = InjectedValues.capture()
    private let released: Counter

    init(_ released: Counter) {
        self.released = released
    }

    deinit { released.increment() }
}

/// A client that keeps its scope through an `@Injected` property.
private final class HoldingClient: Sendable {
    let label = Injected(\.ownedLabel)
    private let released: Counter

    init(_ released: Counter) {
        self.released = released
    }

    deinit { released.increment() }
}

/// A cached service that keeps the client it found, as a service built from its dependencies does.
private final class HoldingService: Sendable {
    let client = InjectedValues[\.holdingClient]
}

/// Releases of the clients the two cached keys build; each key is read by one test only.
private let freshCapturingClients = Counter()
private let testCapturingClients = Counter()

private enum RefresherReleasesKey: ReadOnlyInjectionKey {
    static var currentValue: Counter { Counter() }
}

private enum RefresherKey: ReadOnlyInjectionKey {
    static var currentValue: TokenRefresher { TokenRefresher(InjectedValues[\.refresherReleases]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum OwnedLabelKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum CapturingClientKey: ReadOnlyInjectionKey {
    static var currentValue: CapturingClient { CapturingClient(Counter()) }
}

private enum HoldingClientKey: ReadOnlyInjectionKey {
    static var currentValue: HoldingClient { HoldingClient(Counter()) }
}

private enum HoldingServiceKey: ReadOnlyInjectionKey {
    static var currentValue: HoldingService { HoldingService() }
    static var lifetime: InjectionLifetime { .cached }
}

private enum FreshCapturingClientKey: ReadOnlyInjectionKey {
    static var currentValue: CapturingClient { CapturingClient(freshCapturingClients) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum TestCapturingClientKey: ReadOnlyInjectionKey {
    static var currentValue: CapturingClient { CapturingClient(testCapturingClients) }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var refresherReleases: Counter {
        get { Self[RefresherReleasesKey.self] }
        set { Self[RefresherReleasesKey.self] = newValue }
    }

    fileprivate var refresher: TokenRefresher {
        get { Self[RefresherKey.self] }
        set { Self[RefresherKey.self] = newValue }
    }

    fileprivate var ownedLabel: String {
        get { Self[OwnedLabelKey.self] }
        set { Self[OwnedLabelKey.self] = newValue }
    }

    fileprivate var capturingClient: CapturingClient {
        get { Self[CapturingClientKey.self] }
        set { Self[CapturingClientKey.self] = newValue }
    }

    fileprivate var holdingClient: HoldingClient {
        get { Self[HoldingClientKey.self] }
        set { Self[HoldingClientKey.self] = newValue }
    }

    fileprivate var holdingService: HoldingService {
        get { Self[HoldingServiceKey.self] }
        set { Self[HoldingServiceKey.self] = newValue }
    }

    fileprivate var freshCapturingClient: CapturingClient {
        get { Self[FreshCapturingClientKey.self] }
        set { Self[FreshCapturingClientKey.self] = newValue }
    }

    fileprivate var testCapturingClient: CapturingClient {
        get { Self[TestCapturingClientKey.self] }
        set { Self[TestCapturingClientKey.self] = newValue }
    }
}
