import Injected
import Testing

/// Defaults that read other keys' defaults, many levels deep: the per-thread stack of keys being evaluated starts with
/// room for 16 and grows.
@Suite("Deep chains of defaults")
struct DefaultChainTests {
    @Test("a chain of 36 defaults, each reading the next, resolves without a false cycle")
    func deepChain() {
        inFreshScope {
            #expect(InjectedValues[Plus16<Plus16<Plus4<Zero>>>.self] == 36)
            #expect(InjectedValues[Plus4<Zero>.self] == 4)
        }
    }

    @Test("an override deep in the chain is seen from its top")
    func overrideDeepInChain() {
        inFreshScope {
            InjectedValues[Plus4<Zero>.self] = 100
            #expect(InjectedValues[Plus16<Plus16<Plus4<Zero>>>.self] == 132)
        }
    }

    @Test("a cycle that closes 22 keys deep stops the process and names every key")
    func deepCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = InjectedValues[LoopKey.self]
        }
        let message = standardError(of: result)
        let inner = String(repeating: "Plus1<", count: 20) + "LoopBackKey" + String(repeating: ">", count: 20)
        #expect(message.contains("dependency cycle: LoopKey → \(inner) → "))
        #expect(message.contains(" → LoopBackKey → LoopKey."))
        #expect(message.components(separatedBy: " → ").count == 23)
    }
}

// MARK: - Keys

/// A key that stands for how many links lie below it.
private protocol CountingKey: ReadOnlyInjectionKey where Value == Int {}

private enum Zero: CountingKey {
    static var currentValue: Int { 0 }
}

/// One more than `Inner`, evaluated on every read.
private enum Plus1<Inner: CountingKey>: CountingKey {
    static var currentValue: Int { InjectedValues[Inner.self] + 1 }
}

private typealias Plus4<Inner: CountingKey> = Plus1<Plus1<Plus1<Plus1<Inner>>>>
private typealias Plus16<Inner: CountingKey> = Plus4<Plus4<Plus4<Plus4<Inner>>>>

/// The top of a cycle: its default reads 20 links down to `LoopBackKey`, which reads it again.
private enum LoopKey: CountingKey {
    static var currentValue: Int { InjectedValues[Plus16<Plus4<LoopBackKey>>.self] }
}

private enum LoopBackKey: CountingKey {
    static var currentValue: Int { InjectedValues[LoopKey.self] }
}
