import Injected
import Testing

/// An accessor written `Self[Key.self]` (the article's spelling) and one written `self[Key.self]` (SwiftUI's)
/// behave identically in every operation.
@Suite("Accessor spellings")
struct AccessorSpellingTests {
    @Test("a read with nothing overridden returns the key's default", arguments: Spelling.allCases)
    func readsDefault(spelling: Spelling) {
        inFreshScope {
            #expect(InjectedValues[spelling.keyPath] == "default")
            #expect(spelling.readThroughKey() == "default")
        }
    }

    @Test("a write through the key path is seen through the key and by an older wrapper", arguments: Spelling.allCases)
    func writeThroughKeyPath(spelling: Spelling) {
        inFreshScope {
            let wrapper = Injected(spelling.keyPath)
            InjectedValues[spelling.keyPath] = "key path"
            #expect(spelling.readThroughKey() == "key path")
            #expect(wrapper.wrappedValue == "key path")
        }
    }

    @Test("a write through the key type is seen through the key path", arguments: Spelling.allCases)
    func writeThroughKey(spelling: Spelling) {
        inFreshScope {
            spelling.writeThroughKey("key type")
            #expect(InjectedValues[spelling.keyPath] == "key type")
        }
    }

    @Test("a write through the wrapper's setter is seen everywhere in the scope", arguments: Spelling.allCases)
    func writeThroughWrapper(spelling: Spelling) {
        inFreshScope {
            let writer = Injected(spelling.keyPath)
            let reader = Injected(spelling.keyPath)
            writer.wrappedValue = "wrapper"
            #expect(reader.wrappedValue == "wrapper")
            #expect(spelling.readThroughKey() == "wrapper")
        }
    }

    @Test("the update closure writes into the new scope, which ends with it", arguments: Spelling.allCases)
    func updateClosure(spelling: Spelling) {
        inFreshScope {
            withInjectedValues {
                $0[keyPath: spelling.keyPath] = "scoped"
                #expect($0[keyPath: spelling.keyPath] == "scoped")
            } operation: {
                #expect(InjectedValues[spelling.keyPath] == "scoped")
                #expect(spelling.readThroughKey() == "scoped")
            }
            #expect(InjectedValues[spelling.keyPath] == "default")
        }
    }

    @Test("a write inside an operation stays in its scope", arguments: Spelling.allCases)
    func writeInsideOperation(spelling: Spelling) {
        inFreshScope {
            InjectedValues[spelling.keyPath] = "outer"
            withInjectedValues { _ in
            } operation: {
                InjectedValues[spelling.keyPath] = "inner"
                #expect(spelling.readThroughKey() == "inner")
            }
            #expect(InjectedValues[spelling.keyPath] == "outer")
        }
    }

    @Test("reset drops the override", arguments: Spelling.allCases)
    func reset(spelling: Spelling) {
        inFreshScope {
            spelling.writeThroughKey("override")
            InjectedValues.reset()
            #expect(InjectedValues[spelling.keyPath] == "default")
        }
    }

    @Test("a wrapper made in a scope resolves there from a detached task", arguments: Spelling.allCases)
    func capturedScope(spelling: Spelling) async {
        await inFreshScope {
            InjectedValues[spelling.keyPath] = "captured"
            let wrapper = Injected(spelling.keyPath)
            let value = await Task.detached { wrapper.wrappedValue }.value
            #expect(value == "captured")
        }
    }
}

/// The two ways to write an accessor.
enum Spelling: CaseIterable, Sendable {
    case staticSubscript
    case instanceSubscript

    var keyPath: WritableKeyPath<InjectedValues, String> & Sendable {
        switch self {
        case .staticSubscript: \.staticSpelled
        case .instanceSubscript: \.instanceSpelled
        }
    }

    func readThroughKey() -> String {
        switch self {
        case .staticSubscript: InjectedValues[StaticSpelledKey.self]
        case .instanceSubscript: InjectedValues[InstanceSpelledKey.self]
        }
    }

    func writeThroughKey(_ value: String) {
        switch self {
        case .staticSubscript: InjectedValues[StaticSpelledKey.self] = value
        case .instanceSubscript: InjectedValues[InstanceSpelledKey.self] = value
        }
    }
}

private enum StaticSpelledKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum InstanceSpelledKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

extension InjectedValues {
    fileprivate var staticSpelled: String {
        get { Self[StaticSpelledKey.self] }
        set { Self[StaticSpelledKey.self] = newValue }
    }

    fileprivate var instanceSpelled: String {
        get { self[InstanceSpelledKey.self] }
        set { self[InstanceSpelledKey.self] = newValue }
    }
}
