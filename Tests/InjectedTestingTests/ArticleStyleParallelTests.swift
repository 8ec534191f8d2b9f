import Foundation
import Injected
import InjectedTesting
import Testing

/// Tests written in the article's style, with global-looking writes, pass in parallel under `.injectedValues`.
@Suite("Article-style tests in parallel", .injectedValues)
struct ArticleStyleParallelTests {
    @Test("a case's global-looking writes are its own", arguments: 1...300)
    func articleStyleCase(id: Int) async throws {
        // Other cases are writing at the same time; none of their writes may be visible here.
        #expect(InjectedValues[\.provider].id == 0)
        let controller = Controller()

        InjectedValues[\.provider] = Provider(id: id)
        try await Task.sleep(for: .microseconds(id % 7 * 100))
        #expect(controller.provider.id == id)

        controller.provider = Provider(id: -id)
        await Task.yield()
        #expect(controller.provider.id == -id)
        #expect(InjectedValues[\.provider].id == -id)
    }

    @Test("each case gets its own instance of a cached, stateful service", arguments: 1...100)
    func freshCachedInstance(id: Int) async {
        #expect(InjectedValues[\.cart].items.isEmpty)
        InjectedValues[\.cart].add("item \(id)")
        await Task.yield()
        #expect(InjectedValues[\.cart].items == ["item \(id)"])
    }

    @Test("reset in a test resets only that test's scope")
    func resetStaysInTest() {
        InjectedValues[\.provider] = Provider(id: 7)
        InjectedValues.reset()
        #expect(InjectedValues[\.provider].id == 0)
    }

    @Suite("A nested suite")
    struct Nested {
        @Test("inherits the trait", arguments: 1...20)
        func nestedCase(id: Int) async {
            #expect(InjectedValues[\.provider].id == 0)
            InjectedValues[\.provider] = Provider(id: id)
            await Task.yield()
            #expect(InjectedValues[\.provider].id == id)
        }
    }
}

struct Provider: Sendable {
    let id: Int
}

struct Controller {
    @Injected(\.provider) var provider
}

/// A stateful service, cached per scope, whose state sits behind a lock, the Swift 6 way.
final class Cart: @unchecked Sendable {
    // `@unchecked Sendable`: `storedItems` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var storedItems: [String] = []

    var items: [String] { lock.withLock { storedItems } }

    func add(_ item: String) {
        lock.withLock { storedItems.append(item) }
    }
}

private enum ProviderKey: ReadOnlyInjectionKey {
    static var currentValue: Provider { Provider(id: 0) }
}

private enum CartKey: ReadOnlyInjectionKey {
    static var currentValue: Cart { Cart() }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    var provider: Provider {
        get { Self[ProviderKey.self] }
        set { Self[ProviderKey.self] = newValue }
    }

    var cart: Cart {
        get { Self[CartKey.self] }
        set { Self[CartKey.self] = newValue }
    }
}
