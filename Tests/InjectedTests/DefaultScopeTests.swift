import Foundation
import Injected
import Testing

/// A scope that a `.cached` default opens reads where the default is built: in a test's or a fresh scope's world, not
/// the global store.
///
/// Each test also writes the global store, so it runs in a child process (an exit test).
@Suite("Scopes opened by a cached default")
struct DefaultScopeTests {
    @Test("a scope a default opens while built for a test or a fresh scope reads that world, not the global store")
    func scopeInADefaultReadsItsWorld() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.defaultScopeX] = 99
            withTestInjectedValues(strict: false, reportingTo: { _ in }) {
                $0.defaultScopeX = 10
            } operation: {
                let service = InjectedValues[\.scopeOpeningService]
                precondition(service.plain == 10, "the default read \(service.plain) outside its scope")
                precondition(service.inScope == 10, "the default's scope read \(service.inScope)")
                precondition(
                    service.madeInScope.x.wrappedValue == 10,
                    "an object made in the default's scope read another world"
                )
            }
            withInjectedValues(fresh: true) {
                $0.defaultScopeX = 20
            } operation: {
                let service = InjectedValues[\.scopeOpeningService]
                precondition((service.plain, service.inScope) == (20, 20), "a fresh scope's default read another world")
            }
        }
    }

    @Test("a fresh scope a default opens in a strict test is in the test, and reports to it as the test's own read")
    func freshScopeInADefaultIsInTheTest() async {
        await #expect(processExitsWith: .success) {
            let reports = ReportList()
            withTestInjectedValues(strict: true, reportingTo: reports.add) { _ in
            } operation: {
                _ = InjectedValues[\.freshOpeningService]
            }
            let messages = reports.all
            precondition(messages.count == 1, "reports: \(messages)")
            precondition(messages[0].contains("the test read DefaultScopeXKey"), "reported as: \(messages[0])")
        }
    }
}

/// A cached service whose initializer reads a dependency, outside and inside a scope of its own.
private final class ScopeOpeningService: Sendable {
    let plain: Int
    let inScope: Int
    let madeInScope: DefaultScopeModel

    init() {
        plain = InjectedValues[\.defaultScopeX]
        (inScope, madeInScope) = withInjectedValues { _ in
        } operation: {
            (InjectedValues[\.defaultScopeX], DefaultScopeModel())
        }
    }
}

/// A cached service whose initializer opens a fresh scope and reads a dependency with no test value in it.
private final class FreshOpeningService: Sendable {
    let value: Int

    init() {
        value = withInjectedValues(fresh: true) { _ in
        } operation: {
            InjectedValues[\.defaultScopeX]
        }
    }
}

private final class DefaultScopeModel: Sendable {
    let x = Injected(\.defaultScopeX)
}

/// Messages a test reported, in order.
private final class ReportList: @unchecked Sendable {
    // `@unchecked Sendable`: `list` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var list: [String] = []

    var all: [String] { lock.withLock { list } }

    @Sendable func add(_ message: String) {
        lock.withLock { list.append(message) }
    }
}

private enum DefaultScopeXKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}

private enum ScopeOpeningServiceKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: ScopeOpeningService { ScopeOpeningService() }
    static var testValue: ScopeOpeningService { ScopeOpeningService() }
}

private enum FreshOpeningServiceKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: FreshOpeningService { FreshOpeningService() }
    static var testValue: FreshOpeningService { FreshOpeningService() }
}

extension InjectedValues {
    fileprivate var defaultScopeX: Int {
        get { Self[DefaultScopeXKey.self] }
        set { Self[DefaultScopeXKey.self] = newValue }
    }

    fileprivate var scopeOpeningService: ScopeOpeningService {
        get { Self[ScopeOpeningServiceKey.self] }
        set { Self[ScopeOpeningServiceKey.self] = newValue }
    }

    fileprivate var freshOpeningService: FreshOpeningService {
        get { Self[FreshOpeningServiceKey.self] }
        set { Self[FreshOpeningServiceKey.self] = newValue }
    }
}
