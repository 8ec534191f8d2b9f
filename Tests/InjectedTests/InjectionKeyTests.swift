import Injected
import Testing

/// Every way projects declare keys compiles in Swift 6 mode and reads as its declaration says.
///
/// Keys written with plain `static var`, which only Swift 5 mode accepts, are covered in `InjectedSwift5Tests`.
@Suite("Key declarations")
struct InjectionKeyTests {
    @Test("a stored static marked nonisolated(unsafe) first is one shared instance")
    func storedStaticModifierFirst() {
        inFreshScope {
            let first = InjectedValues[ModifierFirstKey.self]
            #expect(first.label == "modifier first")
            #expect(InjectedValues[ModifierFirstKey.self] === first)
        }
    }

    @Test("a stored static marked nonisolated(unsafe) after static is one shared instance")
    func storedStaticModifierAfter() {
        inFreshScope {
            let first = InjectedValues[ModifierAfterKey.self]
            #expect(first.label == "modifier after")
            #expect(InjectedValues[ModifierAfterKey.self] === first)
        }
    }

    @Test("public keys conform with the access modifier in either order")
    func publicKeys() {
        inFreshScope {
            #expect(InjectedValues[PublicFirstKey.self] == "public first")
            #expect(InjectedValues[PublicAfterKey.self] == "public after")
        }
    }

    @Test("a static let conforms")
    func staticLet() {
        inFreshScope {
            #expect(InjectedValues[StaticLetKey.self] === InjectedValues[StaticLetKey.self])
            #expect(InjectedValues[StaticLetKey.self].label == "let")
        }
    }

    @Test("an optional with no initial value reads nil until something is written")
    func optionalWithoutInitialValue() {
        inFreshScope {
            #expect(InjectedValues[OptionalClientKey.self] == nil)
            let client = Instance("client")
            InjectedValues[OptionalClientKey.self] = client
            #expect(InjectedValues[OptionalClientKey.self] === client)
        }
    }

    @Test("a direct write to Key.currentValue is what the next read returns")
    func directWriteToCurrentValue() {
        inFreshScope {
            let replacement = Instance("written directly")
            DirectlyWrittenKey.currentValue = replacement
            #expect(InjectedValues[DirectlyWrittenKey.self] === replacement)
            #expect(InjectedValues[\.directlyWritten] === replacement)
        }
    }

    @Test("a computed currentValue makes a new instance per read")
    func computedIsAFactory() {
        inFreshScope {
            #expect(InjectedValues[ComputedKey.self] !== InjectedValues[ComputedKey.self])
        }
    }

    @Test("an inferred type conforms")
    func inferredType() {
        inFreshScope {
            let value: Instance = InjectedValues[InferredKey.self]
            #expect(value.label == "inferred")
        }
    }

    @Test("an explicit typealias Value conforms")
    func explicitTypealias() {
        inFreshScope {
            #expect(InjectedValues[TypealiasKey.self] == 42)
        }
    }

    @Test("structs, enums, classes and fileprivate types can be keys")
    func keyKinds() {
        inFreshScope {
            #expect(InjectedValues[StructKey.self] == "struct")
            #expect(InjectedValues[ClassKey.self] == "class")
            #expect(InjectedValues[FilePrivateKey.self] == "fileprivate")
            #expect(InjectedValues[\.nestedInExtension] == "nested")
        }
    }

    @Test("a service type can be its own key")
    func serviceIsItsOwnKey() {
        inFreshScope {
            let store = InjectedValues[\.mediaStore]
            #expect(InjectedValues[\.mediaStore] === store)
            let replacement = MediaStore()
            InjectedValues[\.mediaStore] = replacement
            #expect(InjectedValues[MediaStore.self] === replacement)
        }
    }

    @Test("an article-style service first read inside a request remembers no request")
    func articleServiceMadeInARequestRemembersNone() async {
        let first = withInjectedValues {
            $0.requestID = "r1"
            $0.user = "alice"
        } operation: {
            InjectedValues[\.auditTrail].record()
        }
        let anonymous = withInjectedValues {
            $0.requestID = "r2"
        } operation: {
            InjectedValues[\.auditTrail].record()
        }
        let background = await Task.detached { InjectedValues[\.auditTrail].record() }.value
        #expect(first == "r1 alice")
        #expect(anonymous == "r2 nobody")
        #expect(background == "no request nobody")
    }

    @Test("a read-only key is cached unless it says otherwise, and an article-style key reads its variable")
    func defaultLifetimes() {
        #expect(StaticLetKey.lifetime == .cached)
        #expect(ComputedKey.lifetime == .uncached)
        #expect(ModifierFirstKey.lifetime == .uncached)
        #expect(MediaStore.lifetime == .cached)
    }
}

/// An audit trail with dependencies of its own, kept in an article-style key's stored variable.
private final class AuditTrail: Sendable {
    private let requestID = Injected(\.requestID)
    private let user = Injected(\.user)

    func record() -> String { "\(requestID.wrappedValue) \(user.wrappedValue)" }
}

private struct AuditTrailKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = AuditTrail()
}

private enum RequestIDKey: ReadOnlyInjectionKey {
    static let currentValue = "no request"
}

private enum UserKey: ReadOnlyInjectionKey {
    static let currentValue = "nobody"
}

private enum ModifierFirstKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: Instance = Instance("modifier first")
}

private enum ModifierAfterKey: InjectionKey {
    static nonisolated(unsafe) var currentValue: Instance = Instance("modifier after")
}

/// A public key whose `public` comes before `nonisolated(unsafe)`.
public enum PublicFirstKey: InjectionKey {
    /// The key's default.
    public nonisolated(unsafe) static var currentValue: String = "public first"
}

/// A public key whose `public` comes after `static`.
public enum PublicAfterKey: InjectionKey {
    /// The key's default.
    nonisolated(unsafe) static public var currentValue: String = "public after"
}

private enum StaticLetKey: ReadOnlyInjectionKey {
    static let currentValue = Instance("let")
}

private enum OptionalClientKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: Instance?
}

private enum DirectlyWrittenKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = Instance("initial")
}

private enum ComputedKey: ReadOnlyInjectionKey {
    static var currentValue: Instance { Instance("computed") }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum InferredKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = Instance("inferred")
}

private enum TypealiasKey: ReadOnlyInjectionKey {
    typealias Value = Int
    static var currentValue: Int { 42 }
}

private struct StructKey: ReadOnlyInjectionKey {
    static let currentValue = "struct"
}

private final class ClassKey: ReadOnlyInjectionKey {
    static let currentValue = "class"
}

private enum FilePrivateKey: ReadOnlyInjectionKey {
    static let currentValue = "fileprivate"
}

private final class MediaStore: Sendable {}

extension MediaStore: ReadOnlyInjectionKey {
    static var currentValue: MediaStore { MediaStore() }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    private enum NestedKey: ReadOnlyInjectionKey {
        static let currentValue = "nested"
    }

    fileprivate var nestedInExtension: String {
        get { self[NestedKey.self] }
        set { self[NestedKey.self] = newValue }
    }

    fileprivate var auditTrail: AuditTrail {
        get { Self[AuditTrailKey.self] }
        set { Self[AuditTrailKey.self] = newValue }
    }

    fileprivate var requestID: String {
        get { Self[RequestIDKey.self] }
        set { Self[RequestIDKey.self] = newValue }
    }

    fileprivate var user: String {
        get { Self[UserKey.self] }
        set { Self[UserKey.self] = newValue }
    }

    fileprivate var directlyWritten: Instance {
        get { Self[DirectlyWrittenKey.self] }
        set { Self[DirectlyWrittenKey.self] = newValue }
    }

    fileprivate var mediaStore: MediaStore {
        get { Self[MediaStore.self] }
        set { Self[MediaStore.self] = newValue }
    }
}
