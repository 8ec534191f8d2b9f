// Injected: environment-style dependency injection for Swift, race-free under Swift 6.
//
// This file is the whole library. It imports only the standard library and the platform's C module, so it can be
// copied into an app or a package as it is. It compiles without warnings in Swift 6 language mode with complete
// concurrency checking and in Swift 5 language mode, with a Swift 6.0 or newer compiler, and also in a module whose
// default isolation is the main actor (SE-0466, Swift 6.2).
//
// For that last case, every declaration says `nonisolated`: the library runs on whichever thread reads a dependency,
// and such a module would otherwise isolate each declaration to the main actor. Swift 6.0 cannot mark a type
// `nonisolated`, so the members are marked one by one, and the mutable stored properties that locks guard are
// `nonisolated(unsafe)`, which says only that much: each type's comment says which lock guards them. The one
// exception is `Injected.wrappedValue`, which such a module isolates to the main actor when it compiles this file:
// Swift does not accept a `nonisolated` settable `wrappedValue` there.

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#elseif canImport(Bionic)
import Bionic
#else
#error("Injected needs POSIX threads: mutexes, condition variables and thread-specific data.")
#endif

// MARK: - Keys

#if compiler(>=6.2)
/// A key that names one dependency in ``InjectedValues`` and holds its global value, as in the article that
/// introduced the pattern.
///
/// Declare a key for each dependency, usually as a `private` type, and expose the dependency through a computed
/// accessor in an extension of ``InjectedValues``. The accessor is what code reads and overrides; the key stays
/// hidden, so the module that owns the dependency decides its default.
///
/// ```swift
/// private struct NetworkProviderKey: InjectionKey {
///     nonisolated(unsafe) static var currentValue: any NetworkProviding = NetworkProvider()
/// }
///
/// extension InjectedValues {
///     var networkProvider: any NetworkProviding {
///         get { Self[NetworkProviderKey.self] }
///         set { Self[NetworkProviderKey.self] = newValue }
///     }
/// }
/// ```
///
/// An `InjectionKey`'s `currentValue` is settable, and it *is* the dependency's global value: a write made while no
/// scope is active, `InjectedValues[\.networkProvider] = mock`, assigns `NetworkProviderKey.currentValue`, so that
/// writing the store and writing `NetworkProviderKey.currentValue = mock` directly are one and the same, and the last
/// write wins. ``InjectedValues/reset()`` assigns back what `currentValue` held before the store first wrote it.
/// Writes inside a scope never touch `currentValue`; they stay in the scope.
///
/// > Important: `currentValue` is a global variable, which Swift 6 makes you mark `nonisolated(unsafe)`: reading it
/// > while another thread writes it, directly or through the store, is a data race, as in the article. The store
/// > serializes its own writes with each other and with resets, but holds no lock while a value is read. For a
/// > dependency that may be written while other threads read it, declare a ``ReadOnlyInjectionKey`` instead: the
/// > store then keeps overrides itself, behind its locks, and the compiler proves the key race-free.
///
/// Declare `currentValue` as a stored property. The store assigns it while holding a lock of its own; an observer
/// (`didSet`) runs under that lock, and may read and write dependencies, but should not wait for other threads.
public protocol InjectionKey: ReadOnlyInjectionKey {
    /// The dependency's global value: its default, and what a write made outside any scope assigns.
    ///
    /// Declare it as a stored `static var`; in Swift 6 mode, `nonisolated(unsafe) static var`.
    ///
    /// The requirement is `nonisolated(unsafe)` so that the store can assign it from any thread in a module whose
    /// default isolation is the main actor, whichever isolation the witness has; a plain `nonisolated` would be
    /// copied onto a stored witness, which Swift rejects for a `static var`. It says what the variable is: a global
    /// that nothing isolates, as `nonisolated(unsafe)` on the key's own declaration says too.
    nonisolated(unsafe) static var currentValue: Value { get set }
}
#else
// The same protocol, for compilers before Swift 6.2, which have no default isolation to opt out of.
/// A key whose `currentValue` is settable and is the dependency's global value, as in the article.
public protocol InjectionKey: ReadOnlyInjectionKey {
    static var currentValue: Value { get set }
}
#endif

// `nonisolated`, so that in a module whose default isolation is the main actor the store can read the requirements on
// any thread.
#if compiler(>=6.2)
/// A key whose default cannot be assigned: the store keeps every override itself, and the compiler can prove the key
/// race-free.
///
/// This is the Swift 6 way to declare a dependency. `currentValue` only has to be readable, so a computed property, a
/// `static let`, or a service type that is its own key all conform, and none needs `nonisolated(unsafe)`:
///
/// ```swift
/// private enum ClockKey: ReadOnlyInjectionKey {
///     static var currentValue: any Clock { SystemClock() }
///     static var lifetime: InjectionLifetime { .cached }
/// }
///
/// extension InjectedValues {
///     var clock: any Clock {
///         get { Self[ClockKey.self] }
///         set { Self[ClockKey.self] = newValue }
///     }
/// }
/// ```
///
/// Only the key's default is read-only: the dependency is overridden through the store as usual. A write made outside
/// any scope overrides the key in the global store, without touching `currentValue`, and ``InjectedValues/reset()``
/// drops the override. ``InjectionKey`` refines this protocol with a settable `currentValue`, the article's contract.
///
/// > Important: While nothing overrides the key, what a read returns depends on ``lifetime``. With the default,
/// > ``InjectionLifetime/uncached``, every read asks `currentValue` again, so a computed `currentValue` makes a new
/// > instance per read. See ``InjectionLifetime``.
public nonisolated protocol ReadOnlyInjectionKey {
    /// The type of the dependency this key stands for.
    ///
    /// It is `Sendable`, because a dependency is read from whichever thread needs it: the store's locks protect the
    /// store, not what the values do. A service with mutable state is an `actor`, a `@MainActor` class, a
    /// `final class` that keeps its state behind a lock, or a `Sendable` struct of closures. Swift 5 mode does not
    /// check the requirement, so code written for the article keeps compiling there unchanged.
    associatedtype Value: Sendable

    /// The dependency's default value, used while nothing overrides the key.
    ///
    /// How often it is evaluated depends on ``lifetime``. A default may read other dependencies; when defaults read
    /// each other in a cycle, the process stops with a message that names every key in the cycle.
    static var currentValue: Value { get }

    /// How the store uses ``currentValue`` while nothing overrides the key.
    ///
    /// The default is ``InjectionLifetime/uncached``. Declare `static var lifetime: InjectionLifetime { .cached }`
    /// to build the default once and keep it.
    static var lifetime: InjectionLifetime { get }
}
#else
// The same protocol, for compilers before Swift 6.2, which have no default isolation to opt out of.
/// A key whose default cannot be assigned: the store keeps every override itself.
public protocol ReadOnlyInjectionKey {
    associatedtype Value: Sendable
    static var currentValue: Value { get }
    static var lifetime: InjectionLifetime { get }
}
#endif

extension ReadOnlyInjectionKey {
    /// The default lifetime, ``InjectionLifetime/uncached``: every read asks the key's `currentValue`.
    public static nonisolated var lifetime: InjectionLifetime { .uncached }
}

// `nonisolated`, for the same reason as `ReadOnlyInjectionKey`.
#if compiler(>=6.2)
/// A key that also declares the value tests start from, so that a test that overrides nothing stays off the live
/// service.
///
/// Conform a key to it, usually in the same file as the key, with a harmless or in-memory value:
///
/// ```swift
/// extension NetworkProviderKey: TestValueKey {
///     static var testValue: any NetworkProviding { MockedNetworkProvider() }
/// }
/// ```
///
/// Inside a scope opened for a test, by the `.injectedValues` trait or `InjectedTestCase` of the `InjectedTesting`
/// module (or by ``withTestInjectedValues(strict:_:operation:)``), a read of the key that no scope overrides returns
/// `testValue` in place of `currentValue`, built as the key's ``ReadOnlyInjectionKey/lifetime`` says, once per test
/// for a `.cached` key. Everywhere else the key reads as before: `testValue` is never used outside tests.
public nonisolated protocol TestValueKey: ReadOnlyInjectionKey {
    /// The dependency's default inside tests.
    static var testValue: Value { get }
}
#else
// The same protocol, for compilers before Swift 6.2, which have no default isolation to opt out of.
/// A key that also declares the value tests start from.
public protocol TestValueKey: ReadOnlyInjectionKey {
    static var testValue: Value { get }
}
#endif

/// How often a key's default value is evaluated while nothing overrides the key.
///
/// Choose the lifetime that matches the key's `currentValue`:
///
/// | Declaration | `.uncached` | `.cached` |
/// |---|---|---|
/// | ``InjectionKey``: `static var currentValue = Service()` | one shared instance, made on first read | the same |
/// | ``ReadOnlyInjectionKey``: `static var currentValue: Service { Service() }` | a new instance per read (a factory) | one instance, made on first read |
///
/// `.cached` is the Swift 6 way to have a lazily created singleton: a computed `currentValue` needs no
/// `nonisolated(unsafe)`, and the store builds it exactly once.
public enum InjectionLifetime: Sendable {
    /// Every read asks the key's `currentValue`.
    ///
    /// The key's declaration decides what a read returns: a stored static is one shared instance, a computed property
    /// makes a new instance per read, and whatever an ``InjectionKey``'s `currentValue` was last assigned, directly
    /// or by a global write, is what the next read returns.
    case uncached

    /// The first read evaluates `currentValue`, and every later read returns that same instance until
    /// ``InjectedValues/reset()``, or until a global write assigns an ``InjectionKey``'s `currentValue`.
    ///
    /// The value is built exactly once, even when many threads read it for the first time at the same moment: one
    /// thread builds it while the others wait. It is cached in the global store, or in the fresh scope that is
    /// active (see ``withInjectedValues(fresh:_:operation:)``), and it is built in that store's context, so an
    /// override made by a nested scope never leaks into a shared instance.
    case cached
}

// A module whose default isolation is the main actor would isolate a synthesized conformance, and its witnesses, to
// the main actor, and the store compares lifetimes on every thread: so the witnesses are written out, and Swift 6.2
// says that the conformance is not isolated.
extension InjectionLifetime {
    /// Whether two lifetimes are the same.
    ///
    /// - Parameters:
    ///   - lhs: A lifetime.
    ///   - rhs: Another lifetime.
    /// - Returns: Whether `lhs` and `rhs` are the same lifetime.
    nonisolated public static func == (lhs: InjectionLifetime, rhs: InjectionLifetime) -> Bool {
        switch (lhs, rhs) {
        case (.uncached, .uncached), (.cached, .cached): true
        case (.uncached, .cached), (.cached, .uncached): false
        }
    }

    /// Hashes the lifetime.
    ///
    /// - Parameter hasher: The hasher to feed.
    nonisolated public func hash(into hasher: inout Hasher) {
        switch self {
        case .uncached: hasher.combine(0)
        case .cached: hasher.combine(1)
        }
    }
}

#if compiler(>=6.2)
extension InjectionLifetime: nonisolated Hashable {}
#else
extension InjectionLifetime: Hashable {}
#endif

// MARK: - Values

/// The store of dependencies: read, override and reset them through its static subscripts.
///
/// Each dependency is an accessor declared in an extension of `InjectedValues`, backed by an ``InjectionKey`` or a
/// ``ReadOnlyInjectionKey``.
/// Code reads a dependency with the ``Injected`` property wrapper or the static subscript, and replaces it by
/// writing through the same subscript:
///
/// ```swift
/// let provider = InjectedValues[\.networkProvider]
/// InjectedValues[\.networkProvider] = MockedNetworkProvider()
/// ```
///
/// ## Where reads and writes go
///
/// Overrides live in the global store and in scopes opened with ``withInjectedValues(fresh:_:operation:)``.
///
/// - A **read** returns the first override it finds in the innermost active scope, then the scopes around it,
///   then the global store. Where nothing overrides the key, it returns the key's default according to its
///   ``ReadOnlyInjectionKey/lifetime``. A fresh scope ends the search at itself.
/// - A **write** overrides the key in the innermost active scope, or in the global store when no scope is active
///   (for an ``InjectionKey``, by assigning its `currentValue`; see below). Every later read in that scope sees it,
///   including reads through objects created before the write.
///
/// An accessor may be written with the static subscript, `Self[Key.self]`, as in the article that introduced the
/// pattern, or with the instance subscript, `self[Key.self]`, as in SwiftUI. Both behave identically.
///
/// What a write made outside any scope does depends on how the key is declared. For an ``InjectionKey``, whose
/// `currentValue` is settable as in the article, it assigns `Key.currentValue`, so the store and the key's variable
/// are one value and the last write wins, whichever way it was spelled. For a ``ReadOnlyInjectionKey`` it overrides
/// the key in the global store and leaves the default alone. Either way, ``reset()`` undoes it.
public struct InjectedValues: Sendable {
    /// Creates a handle on the store.
    ///
    /// Instances carry no state: every instance reads and writes the innermost active scope, which is why user code
    /// never needs to create one.
    nonisolated init() {}

    /// Reads or overrides the dependency a key stands for.
    ///
    /// Use it in the accessors that expose keys:
    ///
    /// ```swift
    /// extension InjectedValues {
    ///     var networkProvider: any NetworkProviding {
    ///         get { Self[NetworkProviderKey.self] }
    ///         set { Self[NetworkProviderKey.self] = newValue }
    ///     }
    /// }
    /// ```
    ///
    /// A read returns the innermost override, or the key's default per its lifetime. A write overrides the key in
    /// the innermost active scope; when no scope is active, it assigns an ``InjectionKey``'s `currentValue`, and
    /// overrides any other key in the global store.
    ///
    /// - Parameter key: The key of the dependency.
    public static nonisolated subscript<K: ReadOnlyInjectionKey>(key: K.Type) -> K.Value {
        get { InjectionStore.value(for: key) }
        set { InjectionStore.override(key, with: newValue) }
    }

    /// Reads or overrides a dependency through its accessor's key path.
    ///
    /// ```swift
    /// InjectedValues[\.networkProvider] = MockedNetworkProvider()
    /// InjectedValues[\.formatters.duration] = DurationFormatter(style: .short)
    /// ```
    ///
    /// A write to a nested path reads the outer dependency, changes the part, and overrides the outer dependency
    /// with the result. That read and write are two steps, not one: two threads writing parts of one dependency at
    /// once, or incrementing it with `+=`, can lose one of the writes. Keep state that changes inside the dependency,
    /// in an actor or behind a lock.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of `InjectedValues`.
    public static nonisolated subscript<T>(_ keyPath: WritableKeyPath<InjectedValues, T>) -> T {
        get { InjectedValues()[keyPath: keyPath] }
        set {
            var values = InjectedValues()
            // Swift writes a key path through an accessor by reading the accessor first. Outside any scope, that read
            // may be of an `InjectionKey`'s variable, which global writes assign, so it is made the way they are; in a
            // strict test, it is not a read the test made, so it reports nothing.
            ThreadState.current.writingThroughKeyPath { values[keyPath: keyPath] = newValue }
        }
    }

    /// Reads a dependency, or a value derived from dependencies, through a read-only key path.
    ///
    /// Derived accessors need no key of their own:
    ///
    /// ```swift
    /// extension InjectedValues {
    ///     var baseURL: String { networkConfiguration.baseURL }
    /// }
    /// let url = InjectedValues[\.baseURL]
    /// ```
    ///
    /// - Parameter keyPath: A key path to an accessor or a derived property of `InjectedValues`.
    public static nonisolated subscript<T>(_ keyPath: KeyPath<InjectedValues, T>) -> T {
        InjectedValues()[keyPath: keyPath]
    }

    /// Reads or overrides the dependency a key stands for, for accessors written in SwiftUI's style.
    ///
    /// ```swift
    /// extension InjectedValues {
    ///     var clock: any Clock {
    ///         get { self[ClockKey.self] }
    ///         set { self[ClockKey.self] = newValue }
    ///     }
    /// }
    /// ```
    ///
    /// It behaves exactly like the static subscript `InjectedValues[Key.self]`: an instance carries no state of its own.
    ///
    /// - Parameter key: The key of the dependency.
    public nonisolated subscript<K: ReadOnlyInjectionKey>(key: K.Type) -> K.Value {
        get { Self[key] }
        nonmutating set { Self[key] = newValue }
    }

    /// Drops every override and cached value of the innermost active scope, or of the global store when no scope is
    /// active.
    ///
    /// After a reset, reads in that scope fall through to the scopes around it, and a ``InjectionLifetime/cached``
    /// key is built again on its next read. A scope that is not fresh keeps no cache of its own, so resetting it
    /// drops only its overrides.
    ///
    /// A reset of the global store also assigns back what global writes replaced in ``InjectionKey``s'
    /// `currentValue`: each gets what it held before the first such write since the last reset. A direct assignment
    /// to `Key.currentValue` is not the store's to undo.
    ///
    /// ```swift
    /// InjectedValues[\.networkProvider] = MockedNetworkProvider()
    /// InjectedValues.reset()   // reads return the key's default again
    /// ```
    public static nonisolated func reset() {
        InjectionStore.reset()
    }
}

// MARK: - Property wrapper

/// A property that reads a dependency from ``InjectedValues`` every time it is accessed.
///
/// ```swift
/// struct DataController {
///     @Injected(\.networkProvider) var networkProvider: any NetworkProviding
///
///     func performDataRequest() {
///         networkProvider.requestData()
///     }
/// }
/// ```
///
/// The property stores no value: each read resolves the key path again, so an override made after the object was
/// created is seen at once. Assigning to the property overrides the dependency in the innermost active scope, like
/// `InjectedValues[\.networkProvider] = …`, so every other reader in that scope sees it too.
///
/// The wrapper works on stored properties of structs, classes and actors, on local variables, and on static
/// properties (in Swift 6 mode, of a global-actor-isolated type), with or without a type annotation.
///
/// Swift stores any wrapped property in a `var`, which a `final class` that conforms to `Sendable` may not have.
/// In such a class, keep the wrapper in a `let` and read its ``wrappedValue``: `let clock = Injected(\.clock)`. It
/// resolves and remembers its scope exactly as the attribute form does.
///
/// ## The scope a property remembers
///
/// A property made while a scope is active remembers that scope for its whole life, so an object made with some
/// dependencies overridden keeps using them: after the scope's operation has returned, on any thread, in a detached
/// task or a callback. A read through the property looks, in order:
///
/// 1. in the reader's own active scopes, innermost first, down to the one the remembered scope was opened in, so an
///    override made where the object is used wins;
/// 2. in the remembered scope, then the scopes it was nested in;
/// 3. in the global store, and last at the key's default.
///
/// A fresh scope is a world of its own: the remembered scope is consulted only when the reader has no active scope,
/// or when the reader's scopes and the remembered one are nested in the same fresh scope (or neither is in one).
/// Otherwise the property resolves in the reader's scopes alone.
/// A property made outside any scope remembers nothing and resolves wherever it is read.
///
/// While the remembered scope's operation runs, the property sees every write made in it. Once the operation has
/// returned, the scope keeps what its update closure set, and the writes made during the operation end with it.
/// Assigning to the property from outside any scope overrides the key in the remembered scope, whether its operation
/// still runs or not, for every object made in it.
///
/// A property made in the update closure of ``withInjectedValues(fresh:_:operation:)``, or in the default of a
/// ``InjectionLifetime/cached`` key, remembers the scope around it instead, so that no scope remembers itself.
@propertyWrapper
public struct Injected<Value> {
    // `nonisolated(unsafe)`: a key path is immutable once formed; see the `Sendable` conformance below.
    private nonisolated(unsafe) let keyPath: KeyPath<InjectedValues, Value>
    /// The scope active at creation, kept for the property's whole life; `nil` outside any scope.
    private nonisolated let scope: InjectionScope?
    /// Where a read-only property was declared, for the message when code writes to it; `nil` for writable ones.
    private nonisolated let readOnlyDeclaration: ReadOnlyDeclaration?

    /// Creates a property that reads and writes the dependency at a key path.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of ``InjectedValues``.
    public nonisolated init(_ keyPath: WritableKeyPath<InjectedValues, Value>) {
        self.keyPath = keyPath
        self.scope = InjectionScope.forNewProperty
        self.readOnlyDeclaration = nil
    }

    /// Creates a read-only property for a dependency or a value derived from dependencies.
    ///
    /// Assigning to the property stops the process with a message that names the key path and where the property is
    /// declared, because there is nothing to write the value to.
    ///
    /// - Parameters:
    ///   - keyPath: A key path to an accessor or a derived property of ``InjectedValues``.
    ///   - file: The file of the declaration, for the message. Leave the default.
    ///   - line: The line of the declaration, for the message. Leave the default.
    public nonisolated init(_ keyPath: KeyPath<InjectedValues, Value>, file: StaticString = #fileID, line: UInt = #line)
    {
        self.keyPath = keyPath
        self.scope = InjectionScope.forNewProperty
        self.readOnlyDeclaration = ReadOnlyDeclaration(file: file, line: line)
    }

    /// The dependency, resolved on every access.
    ///
    /// Setting it overrides the dependency in the innermost active scope, or, from outside any scope, in the scope the
    /// property remembers, exactly like writing `InjectedValues[keyPath] = newValue` there.
    public var wrappedValue: Value {
        get {
            guard scope != nil else { return InjectedValues[keyPath] }
            // Rather than pass the remembered scope down through the key path's accessors, the property lends it to
            // the reads they make, on this thread, for the length of this read.
            return lentScope.setting(scope) { InjectedValues[keyPath] }
        }
        nonmutating set {
            guard let writable = keyPath as? WritableKeyPath<InjectedValues, Value> else {
                fatalError(readOnlyWriteMessage())
            }
            // A write goes to the active scope, which the store takes from the task-local binding alone, so from
            // outside any scope the property binds its remembered scope itself.
            guard let scope, InjectionScope.current == nil else {
                InjectedValues[writable] = newValue
                return
            }
            InjectionScope.binding.withValue(.init(scope: scope)) { InjectedValues[writable] = newValue }
        }
    }

    private nonisolated func readOnlyWriteMessage() -> String {
        var declaration = ""
        if let readOnlyDeclaration {
            declaration = ", declared at \(readOnlyDeclaration.file):\(readOnlyDeclaration.line)"
        }
        return """
            Injected: cannot assign to a read-only @Injected property (key path \(keyPath), of type \(Value.self)\
            \(declaration)). Its key path has no setter, so there is nothing to write to. To fix it, give the \
            accessor in the InjectedValues extension a setter, or override the dependency it is derived from, \
            for example with withInjectedValues { $0.… = … } operation: { … }.
            """
    }
}

// The stored key path is immutable once formed. `KeyPath` is not declared `Sendable` only because a path can capture
// the arguments of subscripts it goes through; paths into `InjectedValues` go through accessor properties, which
// capture nothing. The other stored properties are immutable references to `Sendable` classes.
extension Injected: @unchecked Sendable where Value: Sendable {}

/// The declaration site of a read-only ``Injected`` property, allocated only for read-only properties so that the
/// common, writable wrapper stays small.
final class ReadOnlyDeclaration: Sendable {
    nonisolated let file: StaticString
    nonisolated let line: UInt

    nonisolated init(file: StaticString, line: UInt) {
        self.file = file
        self.line = line
    }
}

// MARK: - Scopes

/// Runs an operation with some dependencies overridden, for the operation and every task it starts.
///
/// The update closure runs first, inside the new scope, and its writes override dependencies in that scope only:
///
/// ```swift
/// let report = withInjectedValues {
///     $0.networkProvider = MockedNetworkProvider()
/// } operation: {
///     ReportService().makeReport()
/// }
/// ```
///
/// While the operation runs, reads look in this scope first, then in the scopes around it, then in the global
/// store. Writes made inside the operation (`InjectedValues[\.x] = …`, an ``Injected`` property's setter, or
/// ``InjectedValues/reset()``) stay in this scope and end with it.
///
/// The scope is task-local: it reaches `async let`, task groups and `Task {}` started inside the operation, but not
/// `Task.detached` or other threads. An ``Injected`` property made inside the operation remembers the scope for the
/// rest of its life, wherever it is read: an object made here keeps these overrides after the operation returns.
///
/// ```swift
/// let model = withInjectedValues { $0.networkProvider = MockedNetworkProvider() } operation: { FeedModel() }
/// model.load()   // later, anywhere: still the mock
/// ```
///
/// Once the operation has returned, the scope keeps only what the update closure set. Objects made in the update
/// closure itself are made in the scope around this one, so that a value stored in the scope does not remember it.
///
/// - Parameters:
///   - fresh: Whether the scope starts from nothing. A fresh scope ignores the global store and every scope around
///     it, so reads start from the keys' defaults, and it has its own cache of ``InjectionLifetime/cached`` values.
///     Tests use fresh scopes to be independent of each other. The default is `false`.
///   - update: A closure that overrides dependencies in the new scope. Reads in it see the new scope; objects made in
///     it remember the scope around it.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withInjectedValues<R>(
    fresh: Bool = false,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    let enclosing = InjectionScope.current
    return try InjectionScope.makeNested(fresh: fresh, in: enclosing).run(madeIn: enclosing, update, operation)
}

/// Runs an asynchronous operation with some dependencies overridden, for the operation and every task it starts.
///
/// ```swift
/// let report = await withInjectedValues {
///     $0.networkProvider = MockedNetworkProvider()
/// } operation: {
///     await ReportService().makeReport()
/// }
/// ```
///
/// This behaves like the synchronous ``withInjectedValues(fresh:_:operation:)``, and the operation runs on the
/// caller's actor.
///
/// - Parameters:
///   - fresh: Whether the scope starts from nothing, ignoring the global store and every scope around it, with its
///     own cache of ``InjectionLifetime/cached`` values. The default is `false`.
///   - update: A closure that overrides dependencies in the new scope. Reads in it see the new scope; objects made in
///     it remember the scope around it.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
public func withInjectedValues<R>(
    fresh: Bool = false,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    let enclosing = InjectionScope.current
    return try await InjectionScope.makeNested(fresh: fresh, in: enclosing).run(madeIn: enclosing, update, operation)
}

// MARK: - Carrying scopes into later and escaping work

/// Runs an operation in a new scope based on the scope that another object remembers, with some dependencies
/// overridden on top.
///
/// A model made in a scope keeps it, but a model it makes later, in a method run from a button tap, a delegate or a
/// callback, is made outside any scope. Make it from the parent instead, so that it keeps the parent's dependencies:
///
/// ```swift
/// final class FeedModel {
///     @Injected(\.networkProvider) var networkProvider
///
///     func openDetail() -> DetailModel {
///         withInjectedValues(from: self) { _ in } operation: { DetailModel() }
///     }
/// }
/// ```
///
/// The new scope is nested in the scope that `parent` remembers: the one that the first of its ``Injected``
/// properties, or of its superclasses' (in declaration order), that remembers a scope was made in. Reads in the new
/// scope, and through objects made in it, look in its own overrides, then in the scopes active where this is called
/// (down to the one they share with the parent's), then in the parent's scope and the scopes around it, as reads
/// through the parent itself do.
///
/// When `parent` remembers no scope, because it was made outside any or has no `@Injected` property, or when it
/// remembers a scope in another fresh scope's world than the caller's, the new scope is nested in the active scope,
/// exactly as ``withInjectedValues(fresh:_:operation:)`` nests it. Nothing is registered anywhere: the parent's scope
/// is found by reflecting on its stored properties, and is kept only by the objects made in the new scope.
///
/// - Parameters:
///   - parent: The object whose scope to build on, usually `self`.
///   - update: A closure that overrides dependencies in the new scope. Objects made in it remember the scope active
///     where this is called.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withInjectedValues<R>(
    from parent: Any,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    let reader = InjectionScope.current
    let scope = InjectionScope.makeNested(basedOn: rememberedScope(of: parent), in: reader)
    return try scope.run(madeIn: reader, update, operation)
}

/// Runs an asynchronous operation in a new scope based on the scope that another object remembers, with some
/// dependencies overridden on top.
///
/// This behaves like the synchronous ``withInjectedValues(from:_:operation:)``, and the operation runs on the
/// caller's actor.
///
/// - Parameters:
///   - parent: The object whose scope to build on, usually `self`.
///   - update: A closure that overrides dependencies in the new scope. Objects made in it remember the scope active
///     where this is called.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
public func withInjectedValues<R>(
    from parent: Any,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    let reader = InjectionScope.current
    let scope = InjectionScope.makeNested(basedOn: rememberedScope(of: parent), in: reader)
    return try await scope.run(madeIn: reader, update, operation)
}

extension InjectedValues {
    /// Captures the active scope, so that code handed to a queue, a completion handler or a thread can run in it.
    ///
    /// A scope reaches the tasks started inside it, but not work that other code runs later or elsewhere. Capture the
    /// scope where the closure is made, and run the closure's body in it where it runs:
    ///
    /// ```swift
    /// func refresh(completion: @escaping @Sendable (String) -> Void) {
    ///     let scope = InjectedValues.capture()
    ///     DispatchQueue.global().async {
    ///         scope.run { completion(InjectedValues[\.networkProvider].requestData()) }
    ///     }
    /// }
    /// ```
    ///
    /// - Returns: The captured scope, which keeps the scope alive for as long as it lives.
    public static nonisolated func capture() -> CapturedScope {
        CapturedScope(scope: InjectionScope.current)
    }

    /// A scope captured by ``InjectedValues/capture()``, to run code in it later, on any thread.
    ///
    /// It holds the scope for as long as it lives, and nothing once it is gone. Each ``run(_:)`` opens a new scope
    /// nested in the captured one, so that writes made in the body end with it, and reads look in the body's own
    /// writes, then in the scopes active where it runs (down to the one they share with the captured scope), then in
    /// the captured scope and the scopes around it. Where the scopes active at the run are in another fresh scope's
    /// world, they alone count. A capture made outside any scope runs its body where it is run.
    public struct CapturedScope: Sendable {
        private nonisolated let scope: InjectionScope?

        nonisolated init(scope: InjectionScope?) {
            self.scope = scope
        }

        /// Runs `body` in the captured scope.
        ///
        /// - Parameter body: The code to run.
        /// - Returns: The value `body` returns.
        @discardableResult
        public nonisolated func run<R>(_ body: () throws -> R) rethrows -> R {
            let reader = InjectionScope.current
            return try InjectionScope.makeNested(basedOn: scope, in: reader).run(madeIn: reader, { _ in }, body)
        }

        /// Runs an asynchronous `body` in the captured scope, on the caller's actor.
        ///
        /// - Parameters:
        ///   - isolation: The actor `body` runs on. Leave the default, the caller's.
        ///   - body: The code to run.
        /// - Returns: The value `body` returns.
        @discardableResult
        public func run<R>(
            isolation: isolated (any Actor)? = #isolation,
            _ body: () async throws -> R
        ) async rethrows -> R {
            let reader = InjectionScope.current
            return try await InjectionScope.makeNested(basedOn: scope, in: reader).run(madeIn: reader, { _ in }, body)
        }
    }
}

// MARK: - Test scopes

/// Runs an operation in a fresh scope for a test, in which keys that declare a test value start from it.
///
/// Test support builds on this: the `.injectedValues` trait and `InjectedTestCase` of the `InjectedTesting` module
/// call it for each test, with a `report` that records a test failure. Call it directly to give another test
/// framework the same isolation.
///
/// Inside the scope, a read of a key that no scope overrides returns the key's ``TestValueKey/testValue`` when it
/// declares one, and its `currentValue` otherwise. With `strict` set, reading such a key that has no test value also
/// calls `strict` once per key in the test, with a message that names the key and says how to fix it; the read still
/// returns the live default. Fresh scopes opened inside the test keep its test values and its `strict`.
///
/// Opened inside another test's scope, as a test's trait is inside its suite's, it is nested in that scope instead
/// of starting afresh: the outer overrides stay, this one's go on top, and the outer scope's `strict` applies.
///
/// - Parameters:
///   - strict: What to call when the test reads a key that has neither an override nor a test value, or `nil` to
///     let such reads use the live default silently.
///   - update: A closure that overrides dependencies in the test's scope.
///   - operation: The test.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withTestInjectedValues<R>(
    strict: (@Sendable (_ message: String) -> Void)?,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    let enclosing = InjectionScope.current
    let scope = InjectionScope.makeTestScope(TestPolicy(report: strict), in: enclosing)
    return try scope.run(madeIn: enclosing, update, operation)
}

/// Runs an asynchronous operation in a fresh scope for a test, in which keys that declare a test value start from it.
///
/// This behaves like the synchronous ``withTestInjectedValues(strict:_:operation:)``, and the operation runs on the
/// caller's actor.
///
/// - Parameters:
///   - strict: What to call when the test reads a key that has neither an override nor a test value, or `nil` to
///     let such reads use the live default silently.
///   - update: A closure that overrides dependencies in the test's scope.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The test.
/// - Returns: The value the operation returns.
@discardableResult
public func withTestInjectedValues<R>(
    strict: (@Sendable (_ message: String) -> Void)?,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    let enclosing = InjectionScope.current
    let scope = InjectionScope.makeTestScope(TestPolicy(report: strict), in: enclosing)
    return try await scope.run(madeIn: enclosing, update, operation)
}

/// What a scope opened for a test does with keys that nothing overrides.
struct TestPolicy: Sendable {
    /// Called the first time in the test that a key with neither an override nor a test value is read; `nil` when
    /// the test is not strict.
    nonisolated let report: (@Sendable (String) -> Void)?

    nonisolated init(report: (@Sendable (String) -> Void)?) {
        self.report = report
    }
}

/// The scope that the first `@Injected` property of `value`, or of its superclasses, remembers.
nonisolated func rememberedScope(of value: Any) -> InjectionScope? {
    var mirror: Mirror? = Mirror(reflecting: value)
    while let current = mirror {
        for child in current.children {
            if let property = child.value as? any RemembersScope, let scope = property.rememberedScope {
                return scope
            }
        }
        mirror = current.superclassMirror
    }
    return nil
}

/// What `rememberedScope(of:)` finds among an object's stored properties.
protocol RemembersScope {
    nonisolated var rememberedScope: InjectionScope? { get }
}

extension Injected: RemembersScope {
    nonisolated var rememberedScope: InjectionScope? { scope }
}

// MARK: - Storage
//
// The machinery in one page (the guarantees article says the same at more length):
//
// - Every scope, the global store included, keeps its overrides behind its own `Lock`, and a root (the global store
//   or a fresh scope) keeps its cache of `.cached` values behind the same lock. Scopes are independent: entering,
//   writing to, reading from and leaving one takes only its own lock, and the locks of the scopes it reads through,
//   one at a time.
// - The global store is read on every thread, so each thread keeps a view of it: the entries it has looked up,
//   behind a lock of its own, which readers take alone. An entry is added only by its own thread, while it holds the
//   global store's lock; a global write or reset removes the entries it makes wrong, from every thread's view, while
//   it holds the global store's lock. So a view never disagrees with the global store for longer than a write that is
//   still in progress, and this is the one cost that grows with the number of threads: a global write or reset
//   takes each thread's view lock in turn.
// - A `.cached` value is built outside every lock, by the first thread to find it missing, which records a
//   `BuildTicket` in the root's cache; others wait on the root's condition. Who waits for whom is recorded under
//   `InjectionStore.waits`, which is how a cycle across threads is found (see `ThreadState.cycle(waitingFor:)`).
// - Locks are taken in one order: a scope's lock, then a thread's view lock, then `waits`; never two scopes' locks
//   at once. No user code (a default, a closure, a `deinit`) runs while any of them is held: defaults are evaluated
//   after unlocking, and every value a lock's holder removes is handed back and released after it unlocks.
// - An `@Injected` property made in a scope holds the scope, taken from the task-local binding without a lock. When
//   the operation returns, the scope goes back to what its update closure set, values made in the scope around it;
//   a root's cache holds values whose properties remember no scope. So what a scope keeps never keeps it alive.
// - An `InjectionKey`'s `currentValue` is a variable of the user's. Global writes assign it, and resets assign it
//   back, while holding `InjectionStore.assignments`, which comes before every other lock and which its holder may
//   take again; the read half of a global write through a key path is made under it too. Other reads of the
//   variable take no lock, as with any `nonisolated(unsafe)` global.

/// One level of overrides: the global store, or a scope opened by `withInjectedValues`.
///
/// A scope that is not fresh has a parent: the scope that was active when it was opened, or the global store. The
/// global store and fresh scopes have none; they are the roots, and each keeps the cache of `.cached` values for the
/// scopes below it.
final class InjectionScope: @unchecked Sendable {
    // `@unchecked Sendable` and `nonisolated(unsafe)`: `configuration`, `overrides`, `cache`, `threads` and `reported`
    // are read and written only while holding `lock`, and the other stored properties never change.

    /// The innermost active scope of the current task, or `nil` when only the global store is active.
    static nonisolated var current: InjectionScope? { binding.get().scope }

    /// The task-local binding behind `current`.
    ///
    /// It holds `nil` rather than the global store, because reading a bound object retains it: on the common path,
    /// with no scope, every read on every thread would then write to the global store's reference count. It is a
    /// struct rather than an optional because copying a task-local optional out looks up the optional's type metadata,
    /// on every read. It is declared without the `@TaskLocal` macro, whose generated storage a module whose default
    /// isolation is the main actor would isolate to it.
    static nonisolated let binding = TaskLocal(wrappedValue: Binding(scope: nil))

    /// What `binding` holds.
    struct Binding: Sendable {
        nonisolated let scope: InjectionScope?

        nonisolated init(scope: InjectionScope?) {
            self.scope = scope
        }
    }

    /// The innermost active scope, or the global store.
    static nonisolated var active: InjectionScope { current ?? InjectionStore.global }

    /// The scope that an `@Injected` property made now remembers: the active one, unless `propertyOrigin` says
    /// otherwise.
    static nonisolated var forNewProperty: InjectionScope? {
        guard let origin = propertyOrigin.current else { return current }
        return origin === InjectionStore.global ? nil : origin
    }

    nonisolated let parent: InjectionScope?
    nonisolated let lock: Lock
    /// What the update closure set, which the scope goes back to when its operation returns.
    private nonisolated(unsafe) var configuration = Overrides()
    /// Overridden values, each a `Box` of its key's value type.
    nonisolated(unsafe) var overrides = Overrides()
    /// The `.cached` values of a root, built or being built.
    nonisolated(unsafe) var cache: [ObjectIdentifier: CacheEntry] = [:]
    /// For the global store, the threads that have a view of it, which its writes and resets update.
    nonisolated(unsafe) var threads: [ObjectIdentifier: ThreadState] = [:]

    /// For a scope based on another object's or a captured scope, the scopes active where it was opened, whose
    /// overrides come before `parent`'s.
    nonisolated let overlay: Overlay?

    /// The scopes whose overrides a scope based on another object's or a captured scope reads first: from `reader`
    /// outwards, short of `shared`, the innermost scope around the reader that `parent`'s lookup reaches anyway.
    struct Overlay: Sendable {
        nonisolated let reader: InjectionScope
        nonisolated let shared: InjectionScope

        nonisolated init(reader: InjectionScope, shared: InjectionScope) {
            self.reader = reader
            self.shared = shared
        }
    }
    /// For a root opened for a test, or a fresh scope opened inside one, what it does with keys nothing overrides.
    nonisolated let testPolicy: TestPolicy?
    /// For a strict test's root, the keys it has reported.
    nonisolated(unsafe) var reported: Set<ObjectIdentifier> = []

    private nonisolated init(parent: InjectionScope?, overlay: Overlay? = nil, testPolicy: TestPolicy? = nil) {
        self.parent = parent
        self.overlay = overlay
        self.testPolicy = testPolicy
        // Only a root caches, so only a root has threads waiting for a build.
        lock = Lock(withCondition: parent == nil)
    }

    /// The global store.
    static nonisolated func makeGlobal() -> InjectionScope {
        InjectionScope(parent: nil)
    }

    /// A scope for `withInjectedValues`, nested in `enclosing`, the innermost active one, unless it is fresh.
    static nonisolated func makeNested(fresh: Bool, in enclosing: InjectionScope?) -> InjectionScope {
        guard fresh else { return InjectionScope(parent: enclosing ?? InjectionStore.global) }
        // A fresh scope inside a test is still in the test.
        return InjectionScope(parent: nil, testPolicy: enclosing?.root.testPolicy)
    }

    /// A test's scope: a fresh root with `policy`, or, inside another test's scope, a scope nested in it.
    static nonisolated func makeTestScope(_ policy: TestPolicy, in enclosing: InjectionScope?) -> InjectionScope {
        if let enclosing, enclosing.root.testPolicy != nil { return makeNested(fresh: false, in: enclosing) }
        return InjectionScope(parent: nil, testPolicy: policy)
    }

    /// The scope this one is nested in, at any depth, that has no parent: the global store or a fresh scope.
    ///
    /// Parents never change, so the walk needs no lock.
    nonisolated var root: InjectionScope {
        var scope = self
        while let parent = scope.parent { scope = parent }
        return scope
    }

    /// A scope nested in `base`, a scope that an object remembers or that was captured.
    ///
    /// It is opened where `reader` is the innermost active scope: reads in it see the reader's overrides first, as reads
    /// through an object made in `base` would. With no `base`, or a `base` in another fresh scope's world than the
    /// reader's, it is nested in the reader.
    static nonisolated func makeNested(basedOn base: InjectionScope?, in reader: InjectionScope?) -> InjectionScope {
        guard let base else { return makeNested(fresh: false, in: reader) }
        guard let reader else { return InjectionScope(parent: base) }
        // When `base` is the reader's scope or one around it, the reader's own lookup already ends in it.
        guard let shared = InjectionStore.innermostShared(reader, base), shared !== base else {
            return makeNested(fresh: false, in: reader)
        }
        return InjectionScope(parent: base, overlay: Overlay(reader: reader, shared: shared))
    }

    /// Runs the update closure of `withInjectedValues`, in which properties remember `enclosing` rather than this
    /// scope, then records what it set as the scope's configuration.
    nonisolated func configure(madeIn enclosing: InjectionScope?, _ update: () throws -> Void) rethrows {
        try propertyOrigin.setting(enclosing ?? InjectionStore.global, update)
        lock.withLock { configuration = overrides }
    }

    /// Runs the update closure and then the operation of a new scope, with the scope bound, and ends it.
    nonisolated func run<R>(
        madeIn enclosing: InjectionScope?,
        _ update: (inout InjectedValues) throws -> Void,
        _ operation: () throws -> R
    ) rethrows -> R {
        defer { end() }
        return try InjectionScope.binding.withValue(.init(scope: self)) {
            try configure(madeIn: enclosing) {
                var values = InjectedValues()
                try update(&values)
            }
            // Inside a `.cached` default or another scope's update closure, properties made by the operation remember
            // this scope, not the one that code chose.
            return try propertyOrigin.setting(nil, operation)
        }
    }

    /// Runs the update closure and then the asynchronous operation of a new scope, with the scope bound, and ends it.
    func run<R>(
        madeIn enclosing: InjectionScope?,
        _ update: (inout InjectedValues) throws -> Void,
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> R
    ) async rethrows -> R {
        defer { end() }
        return try await InjectionScope.binding.withValue(.init(scope: self)) {
            try configure(madeIn: enclosing) {
                var values = InjectedValues()
                try update(&values)
            }
            // Synchronous code sets `propertyOrigin` only for its own length, so an asynchronous operation starts with
            // none set.
            return try await operation()
        }
    }

    /// Ends the scope's operation: the writes made during it end with it, and the scope goes back to what its update
    /// closure set, which is what objects made in it see from then on.
    ///
    /// A value written during the operation may have been made in it, with properties that remember this scope; were
    /// the scope to keep it, the two would keep each other alive. Values set by the update closure were made in the
    /// scope around this one, and the cache's values in no scope, so what the scope keeps never remembers it.
    nonisolated func end() {
        let dropped: Overrides = lock.withLock {
            defer { overrides = configuration }
            return overrides
        }
        // Released here, outside the lock, because a value's deinit is user code.
        withExtendedLifetime(dropped) {}
    }

    /// The box of a key's override, if the scope overrides it.
    ///
    /// Called holding `lock`. It returns the box rather than the value because an optional of a generic value type
    /// would cost every read a lookup of that optional's type metadata.
    @inline(__always)
    nonisolated func overrideBox(for id: ObjectIdentifier) -> AnyObject? {
        overrides[id]
    }

    /// Removes a key's entry from every thread's view after a global write, and returns what was removed.
    ///
    /// `overridden` says whether the write made an override, after which reading an `.uncached` key must look for one.
    /// Called holding `lock`, of the global store.
    nonisolated func forgetInViews(_ id: ObjectIdentifier, overridden: Bool) -> [AnyObject] {
        threads.values.compactMap { $0.removeViewEntry(for: id, overridden: overridden) }
    }

    /// Drops a root's cached value of a key, built or being built, and every view's copy of it, and returns what was
    /// removed.
    ///
    /// Called holding `lock`. A build in progress is dropped as by a reset: its builder does not store what it builds.
    nonisolated func forgetCached(_ id: ObjectIdentifier) -> [AnyObject] {
        var dropped = self === InjectionStore.global ? forgetInViews(id, overridden: false) : []
        if case .ready(let box)? = cache.removeValue(forKey: id) { dropped.append(box) }
        lock.broadcast()
        return dropped
    }

    /// Empties every thread's view after a global reset, and returns what was removed.
    ///
    /// Called holding `lock`, of the global store.
    nonisolated func forgetAllInViews() -> [AnyObject] {
        threads.values.flatMap { $0.removeViewEntries() }
    }

    /// Removes every override and cached value, and returns them, to be released once the lock is given up.
    ///
    /// Called holding `lock`.
    /// Builds in progress are dropped too: their builders still return what they build to their callers, but do not
    /// store it, so the next read after a reset builds again.
    nonisolated func takeAll() -> [AnyObject] {
        var taken = overrides.boxes
        for case .ready(let box) in cache.values { taken.append(box) }
        overrides = Overrides()
        cache = [:]
        return taken
    }
}

/// A scope's overrides, each a `Box` of its key's value type.
///
/// Most scopes override a few keys, so they are kept in a short list, searched in order, which costs a read less than
/// hashing its key would; past `listLimit` of them they move to a dictionary.
struct Overrides {
    // `nonisolated(unsafe)`: only so that a module whose default isolation is the main actor leaves these alone; the
    // scope that holds the value reads and writes them while holding its lock.
    private nonisolated(unsafe) var few: [(id: ObjectIdentifier, box: AnyObject)] = []
    private nonisolated(unsafe) var many: [ObjectIdentifier: AnyObject] = [:]
    private static nonisolated let listLimit = 8

    nonisolated init() {}

    nonisolated var isEmpty: Bool { few.isEmpty && many.isEmpty }

    /// Every box, for a reset.
    nonisolated var boxes: [AnyObject] { few.map(\.box) + many.values }

    @inline(__always)
    nonisolated subscript(id: ObjectIdentifier) -> AnyObject? {
        guard many.isEmpty else { return many[id] }
        for index in few.indices where few[index].id == id {
            return few[index].box
        }
        return nil
    }

    /// Sets a key's box, and returns the one it replaces.
    mutating nonisolated func updateValue(_ box: AnyObject, forKey id: ObjectIdentifier) -> AnyObject? {
        guard many.isEmpty else { return many.updateValue(box, forKey: id) }
        if let index = few.firstIndex(where: { $0.id == id }) {
            defer { few[index].box = box }
            return few[index].box
        }
        if few.count < Self.listLimit {
            few.append((id, box))
        } else {
            many = Dictionary(uniqueKeysWithValues: few.map { ($0.id, $0.box) })
            many[id] = box
            few = []
        }
        return nil
    }
}

/// A value in the store, boxed so that one dictionary can hold values of every type.
final class Box<Value: Sendable>: Sendable {
    nonisolated let value: Value

    nonisolated init(_ value: Value) {
        self.value = value
    }
}

/// The value in a box that the store made for a key whose value type is `Value`.
///
/// The store files every box under its key's `ObjectIdentifier` and makes it from a value of that key's `Value` type,
/// so the box found under a key is always a `Box<Value>`; `unsafeDowncast` skips the check that `as!` would make.
private nonisolated func unbox<Value: Sendable>(_ box: AnyObject, as type: Value.Type) -> Value {
    unsafeDowncast(box, to: Box<Value>.self).value
}

/// The state of a `.cached` key in a root's cache.
enum CacheEntry {
    /// A thread is evaluating the key's `currentValue`; readers wait for it.
    case building(BuildTicket)
    /// The value, a `Box` of the key's value type.
    case ready(AnyObject)
}

/// The global store and the operations on every scope.
enum InjectionStore {
    /// Overrides made while no scope is active, and the process-wide cache of `.cached` values.
    static nonisolated let global = InjectionScope.makeGlobal()

    /// The lock of the wait graph.
    ///
    /// It guards every `BuildTicket`'s `finished`, and every `ThreadState`'s `waitingFor` and `waitingKeys`. Taken
    /// last, after a root's lock.
    static nonisolated let waits = Lock(withCondition: false)

    static nonisolated func value<K: ReadOnlyInjectionKey>(for key: K.Type) -> K.Value {
        if let reader = InjectionScope.current {
            // Compared as a pointer first, so that the common case, no scope lent or the reader's own, retains nothing.
            if let lent = lentScope.pointer, lent != Unmanaged.passUnretained(reader).toOpaque() {
                return value(for: key, readIn: reader, remembered: ScopeSlot.scope(at: lent))
            }
            return value(for: key, from: reader)
        }
        if let remembered = lentScope.current {
            return value(for: key, from: remembered)
        }
        return globalValue(for: key, on: ThreadState.current)
    }

    /// Reads a key from a scope: its override, or else the override of the scope around it, and so on, up to the root.
    ///
    /// It looks up the thread's state only once it reaches the root, so that an override costs no more than its lookup,
    /// and it moves outwards by calling itself, so that no scope is retained on the way.
    private static nonisolated func value<K: ReadOnlyInjectionKey>(
        for key: K.Type,
        from scope: InjectionScope
    ) -> K.Value {
        if scope === global {
            return globalValue(for: key, on: ThreadState.current)
        }
        scope.lock.lock()
        if let box = scope.overrideBox(for: ObjectIdentifier(key)) {
            let value = unbox(box, as: K.Value.self)
            scope.lock.unlock()
            return value
        }
        scope.lock.unlock()
        if let overlay = scope.overlay, let parent = scope.parent {
            return value(for: key, readIn: overlay.reader, downTo: overlay.shared, remembered: parent)
        }
        guard let parent = scope.parent else { return rootValue(for: key, in: scope, on: ThreadState.current) }
        return value(for: key, from: parent)
    }

    /// Reads a key for an `@Injected` property that remembers a scope and is read inside another one.
    ///
    /// The reader's scopes come first, innermost first, up to the first of them that the remembered scope is nested in
    /// (or is); then the remembered scope's own lookup, which goes on through that shared scope. When the two share no
    /// scope, not even the global store, the remembered scope lies in another fresh scope's world, and the reader's own
    /// lookup is all there is. Kept out of line, so that the common path stays small.
    @inline(never)
    private static nonisolated func value<K: ReadOnlyInjectionKey>(
        for key: K.Type,
        readIn reader: InjectionScope,
        remembered: InjectionScope
    ) -> K.Value {
        guard let shared = innermostShared(reader, remembered) else { return value(for: key, from: reader) }
        return value(for: key, readIn: reader, downTo: shared, remembered: remembered)
    }

    /// Reads a key from `reader` and the scopes around it, short of `shared`, and then from `remembered`.
    private static nonisolated func value<K: ReadOnlyInjectionKey>(
        for key: K.Type,
        readIn reader: InjectionScope,
        downTo shared: InjectionScope,
        remembered: InjectionScope
    ) -> K.Value {
        let id = ObjectIdentifier(key)
        var next: InjectionScope? = reader
        while let scope = next, scope !== shared {
            scope.lock.lock()
            if let box = scope.overrideBox(for: id) {
                let value = unbox(box, as: K.Value.self)
                scope.lock.unlock()
                return value
            }
            scope.lock.unlock()
            next = scope.parent
        }
        return value(for: key, from: remembered)
    }

    /// The innermost of `reader` and the scopes around it that `remembered` is, or is nested in.
    ///
    /// It is `nil` when the two end in different roots. Parents never change, so the walk needs no lock.
    static nonisolated func innermostShared(_ reader: InjectionScope, _ remembered: InjectionScope) -> InjectionScope? {
        var next: InjectionScope? = reader
        while let scope = next {
            var candidate: InjectionScope? = remembered
            while let around = candidate {
                if around === scope { return scope }
                candidate = around.parent
            }
            next = scope.parent
        }
        return nil
    }

    /// Reads a key from the global store, through the thread's view of it.
    private static nonisolated func globalValue<K: ReadOnlyInjectionKey>(
        for key: K.Type,
        on thread: ThreadState
    ) -> K.Value {
        switch thread.viewEntry(for: ObjectIdentifier(key), lifetime: K.lifetime) {
        case .value(let box)?: unbox(box, as: K.Value.self)
        case .evaluate?: thread.evaluate(key)
        case nil: rootValue(for: key, in: global, on: thread)
        }
    }

    /// Reads a key from a root: its override, or else its default per its lifetime.
    ///
    /// It builds a `.cached` value if no thread has, or waits for the thread that is. In the global store, it also
    /// records what it found in the thread's view.
    private static nonisolated func rootValue<K: ReadOnlyInjectionKey>(
        for key: K.Type,
        in root: InjectionScope,
        on thread: ThreadState
    ) -> K.Value {
        let id = ObjectIdentifier(key)
        let isGlobal = root === global
        root.lock.lock()
        while true {
            if let box = root.overrideBox(for: id) {
                let value = unbox(box, as: K.Value.self)
                if isGlobal { thread.addViewEntry(.value(Box(value)), for: id) }
                root.lock.unlock()
                return value
            }
            if K.lifetime == .uncached {
                if isGlobal { thread.addViewEntry(.evaluate, for: id) }
                root.lock.unlock()
                return defaultValue(for: key, in: root, on: thread)
            }
            switch root.cache[id] {
            case .ready(let box)?:
                let value = unbox(box, as: K.Value.self)
                if isGlobal { thread.addViewEntry(.value(Box(value)), for: id) }
                root.lock.unlock()
                return value
            case .building(let ticket)?:
                waits.lock()
                if let cycle = thread.cycle(waitingFor: ticket) {
                    waits.unlock()
                    root.lock.unlock()
                    dependencyCycle(cycle)
                }
                thread.beginWaiting(for: ticket)
                waits.unlock()
                root.lock.wait()
                waits.withLock { thread.endWaiting() }
            case nil:
                let ticket = BuildTicket(key: key, builder: thread)
                root.cache[id] = .building(ticket)
                root.lock.unlock()
                let value = build(key, in: root, on: thread)
                root.lock.lock()
                waits.withLock { ticket.finished = true }
                root.lock.broadcast()
                guard case .building(let current)? = root.cache[id], current === ticket else {
                    // A reset dropped the build while it ran. The caller still gets the value it asked for, but the
                    // cache stays as the reset left it.
                    root.lock.unlock()
                    return value
                }
                root.cache[id] = .ready(Box(value))
            // The next turn finds the value ready (or an override written meanwhile) and returns it.
            }
        }
    }

    /// Evaluates a `.cached` key's default in the context of the root that caches it, so that an override made in a
    /// nested scope is not baked into an instance every scope shares.
    private static nonisolated func build<K: ReadOnlyInjectionKey>(
        _ key: K.Type,
        in root: InjectionScope,
        on thread: ThreadState
    ) -> K.Value {
        let context = root === global ? nil : root
        // Properties made by the default remember no scope: the value is shared by every scope of the root, and a
        // value in a root's cache that remembered the root would keep it alive.
        return propertyOrigin.setting(global) {
            lentScope.setting(nil) {
                if InjectionScope.current === context { return defaultValue(for: key, in: root, on: thread) }
                return InjectionScope.binding.withValue(.init(scope: context)) {
                    defaultValue(for: key, in: root, on: thread)
                }
            }
        }
    }

    /// Evaluates a key's default: its `currentValue`, or in a test's root its test value, if it declares one.
    ///
    /// A strict test's root reports, once per key, a key that has none.
    private static nonisolated func defaultValue<K: ReadOnlyInjectionKey>(
        for key: K.Type,
        in root: InjectionScope,
        on thread: ThreadState
    ) -> K.Value {
        guard let policy = root.testPolicy else { return thread.evaluate(key) }
        if let testKey = key as? any TestValueKey.Type {
            // The opened key is `K` itself, so its test value is a `K.Value`.
            return thread.evaluateTestValue(of: testKey) as! K.Value
        }
        if let report = policy.report, !thread.isWritingThroughKeyPath {
            let isFirst = root.lock.withLock { root.reported.insert(ObjectIdentifier(key)).inserted }
            if isFirst { report(missingTestValueMessage(for: key)) }
        }
        return thread.evaluate(key)
    }

    /// Overrides a key in the active scope; in the global store, a settable key's `currentValue` is assigned instead.
    static nonisolated func override<K: ReadOnlyInjectionKey>(_ key: K.Type, with value: K.Value) {
        let id = ObjectIdentifier(key)
        let scope = InjectionScope.active
        if scope === global, let settable = key as? any InjectionKey.Type {
            return assign(value, to: settable)
        }
        let box = Box(value)
        let replaced: [AnyObject] = scope.lock.withLock {
            let previous = scope.overrides.updateValue(box, forKey: id)
            var replaced = scope === global ? scope.forgetInViews(id, overridden: true) : []
            if let previous { replaced.append(previous) }
            return replaced
        }
        // Released here, outside the lock, because a value's deinit is user code.
        withExtendedLifetime(replaced) {}
    }

    /// The record of what global writes assigned to settable keys' `currentValue`, to undo them on reset.
    static nonisolated let assignments = Assignments()

    /// Assigns a settable key's `currentValue`, for a write made outside any scope, so that the store and the key's
    /// own variable stay one value, as in the article.
    ///
    /// `value` is of the key's `Value` type; it comes in as `V` because the key's type was found at run time.
    @inline(never)
    private static nonisolated func assign<K: InjectionKey, V>(_ value: V, to key: K.Type) {
        let value = value as! K.Value
        let id = ObjectIdentifier(key)
        let replaced: K.Value = assignments.holding {
            // This read is the variable's first access if nothing read it before, which runs its initializer: it is
            // evaluated as a default is, so that an initializer that reads its own key stops with a cycle.
            let replaced = ThreadState.current.evaluate(key)
            if assignments.originals[id] == nil {
                // What the variable held before the store first wrote it, for `reset()` to assign back.
                assignments.originals[id] = {
                    let current = K.currentValue
                    K.currentValue = replaced
                    return current
                }
            }
            K.currentValue = value
            return replaced
        }
        if K.lifetime == .cached {
            // The cached value was built from the default this write replaced.
            let dropped: [AnyObject] = global.lock.withLock { global.forgetCached(id) }
            withExtendedLifetime(dropped) {}
        }
        // Released here, outside the locks, because a value's deinit is user code.
        withExtendedLifetime(replaced) {}
    }

    static nonisolated func reset() {
        let scope = InjectionScope.active
        // A global reset first assigns back what global writes replaced in settable keys' `currentValue`.
        let restored = scope === global ? assignments.restoreAll() : []
        withExtendedLifetime(restored) {}
        let dropped: [AnyObject] = scope.lock.withLock {
            var dropped = scope.takeAll()
            if scope === global { dropped += scope.forgetAllInViews() }
            // Threads waiting for a build that the reset dropped build it again.
            if scope.parent == nil { scope.lock.broadcast() }
            return dropped
        }
        // Released here, outside the lock, because a value's deinit is user code.
        withExtendedLifetime(dropped) {}
    }
}

// MARK: - Threads and cycle tracking

/// What a thread's view of the global store holds for a key.
enum ViewEntry {
    /// The key's global override or cached value, in a `Box` of this thread's own, so that reading it writes to no
    /// reference count another thread's reads also write to.
    case value(AnyObject)
    /// Nothing overrides the key globally and its lifetime is `.uncached`: evaluate its default.
    case evaluate
}

/// What the library keeps for each thread that uses it: its view of the global store, the keys whose defaults it is
/// evaluating, and the build it waits for.
///
/// A key's `currentValue` is synchronous, so a chain of defaults reading each other runs on one thread, and a key
/// that appears twice in `stack` is a cycle. A cycle that crosses threads shows up as threads waiting for each other's
/// `.cached` builds; `waitingFor` records those waits so that the last thread to join the cycle can see it.
final class ThreadState: @unchecked Sendable {
    // `@unchecked Sendable` and `nonisolated(unsafe)`: other threads touch only `view`, while holding `lock`, and the wait record, while holding
    // `InjectionStore.waits`; `own` is read and written only by the thread that owns this state, whose thread-specific
    // data it is.
    // `@exclusivity(unchecked)`: those same rules make every access to `view` and `own` exclusive, and no access
    // spans a call that could reach them again, so the runtime's check, a large part of a read's cost, is skipped.

    private nonisolated let lock = Lock(withCondition: false)
    /// What this thread knows of the global store, written while holding both the global store's lock and `lock`, so
    /// that readers need only `lock`.
    @exclusivity(unchecked) private nonisolated(unsafe) var view = View()
    @exclusivity(unchecked) private nonisolated(unsafe) var own = Own()
    /// The build this thread waits for, and its stack when it began waiting.
    private nonisolated(unsafe) var waitingFor: BuildTicket?
    private nonisolated(unsafe) var waitingKeys: [Any.Type] = []

    /// A thread's view of the global store.
    ///
    /// `nonisolated(unsafe)`, here and in `Own`: only so that a module whose default isolation is the main actor leaves
    /// the fields alone; they are read and written under the rules of `view` and `own` above.
    private struct View {
        /// Whether the global store's `threads` holds this state, so that writers keep the view up to date.
        nonisolated(unsafe) var registered = false
        /// Whether the global store overrides any key, so that a read of an `.uncached` key needs no lookup when
        /// it does not.
        nonisolated(unsafe) var globalOverrides = false
        /// Entries of the global store this thread has looked up: added by this thread only, removed by writers.
        nonisolated(unsafe) var entries: [ObjectIdentifier: ViewEntry] = [:]

        nonisolated init() {}
    }

    /// What only the thread that owns this state reads and writes.
    private struct Own {
        /// The keys whose defaults this thread is evaluating, outermost first.
        nonisolated(unsafe) var stack: [Any.Type] = []
        /// Whether this thread holds `InjectionStore.assignments`'s lock.
        nonisolated(unsafe) var assigning = false
        /// Whether this thread is making a write through a key path.
        nonisolated(unsafe) var writingThroughKeyPath = false

        nonisolated init() {}
    }

    nonisolated init() {}

    /// Whether this thread holds `InjectionStore.assignments`'s lock; read and written by this thread only.
    nonisolated var isAssigning: Bool {
        get { own.assigning }
        set { own.assigning = newValue }
    }

    /// This thread's state, made on first use and released when the thread exits.
    static nonisolated var current: ThreadState {
        if let pointer = pthread_getspecific(threadKey) {
            // The slot holds the reference passed to it below until the thread exits, so the state is alive.
            return Unmanaged<ThreadState>.fromOpaque(pointer).takeUnretainedValue()
        }
        let state = ThreadState()
        // The slot owns one reference, which the key's destructor takes back when the thread exits.
        pthread_setspecific(threadKey, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    /// What the global store holds for a key, as far as this thread knows; `nil` when the thread must look.
    nonisolated func viewEntry(for id: ObjectIdentifier, lifetime: InjectionLifetime) -> ViewEntry? {
        lock.withLock {
            if lifetime == .uncached, view.registered, !view.globalOverrides { return .evaluate }
            return view.entries[id]
        }
    }

    /// Records what the global store holds for a key, registering the thread with its writers first if need be.
    ///
    /// Called holding the global store's lock, by this thread, for a key its view has no entry for, so nothing is
    /// replaced.
    nonisolated func addViewEntry(_ entry: ViewEntry, for id: ObjectIdentifier) {
        let global = InjectionStore.global
        if !view.registered {
            global.threads[ObjectIdentifier(self)] = self
        }
        lock.withLock {
            if !view.registered {
                view.registered = true
                view.globalOverrides = !global.overrides.isEmpty
            }
            view.entries[id] = entry
        }
    }

    /// Removes a key's entry after a global write, and returns the value removed, if any, to be released after
    /// unlocking.
    ///
    /// Called holding the global store's lock.
    nonisolated func removeViewEntry(for id: ObjectIdentifier, overridden: Bool) -> AnyObject? {
        let removed = lock.withLock {
            if overridden { view.globalOverrides = true }
            return view.entries.removeValue(forKey: id)
        }
        guard case .value(let box)? = removed else { return nil }
        return box
    }

    /// Empties the view after a global reset, and returns the values removed, to be released after unlocking.
    ///
    /// Called holding the global store's lock.
    nonisolated func removeViewEntries() -> [AnyObject] {
        let removed = lock.withLock {
            defer {
                view.entries = [:]
                view.globalOverrides = false
            }
            return view.entries
        }
        return removed.values.compactMap { entry in
            guard case .value(let box) = entry else { return nil }
            return box
        }
    }

    /// Called when the thread exits.
    nonisolated func unregister() {
        InjectionStore.global.lock.withLock {
            if view.registered { InjectionStore.global.threads[ObjectIdentifier(self)] = nil }
        }
    }

    /// Evaluates a key's `currentValue` with the key on the stack, stopping the process if the key is already being
    /// evaluated on this thread.
    nonisolated func evaluate<K: ReadOnlyInjectionKey>(_ key: K.Type) -> K.Value {
        evaluating(key) {
            if own.writingThroughKeyPath, let settable = key as? any InjectionKey.Type {
                // The read half of a write through a key path: it takes turns with the store's assignments.
                return InjectionStore.assignments.holding { readVariable(of: settable) } as! K.Value
            }
            return K.currentValue
        }
    }

    /// Evaluates a key's test value, with the key on the stack as `evaluate(_:)` puts it.
    ///
    /// It returns `Any`, because its caller knows the key only at run time.
    nonisolated func evaluateTestValue<K: TestValueKey>(of key: K.Type) -> Any {
        evaluating(key) { K.testValue }
    }

    /// Runs `body`, which evaluates one of `key`'s defaults, with the key on the stack, stopping the process if the key
    /// is already being evaluated on this thread.
    @inline(__always)
    private nonisolated func evaluating<T>(_ key: Any.Type, _ body: () -> T) -> T {
        if let index = own.stack.firstIndex(where: { $0 == key }) {
            dependencyCycle(Array(own.stack[index...]) + [key])
        }
        own.stack.append(key)
        defer { own.stack.removeLast() }
        return body()
    }

    /// Whether this thread is making a write through a key path; read by this thread only.
    nonisolated var isWritingThroughKeyPath: Bool { own.writingThroughKeyPath }

    /// Runs `body`, a write through a key path, noting that the reads it makes belong to the write.
    nonisolated func writingThroughKeyPath(_ body: () -> Void) {
        let outer = own.writingThroughKeyPath
        own.writingThroughKeyPath = true
        defer { own.writingThroughKeyPath = outer }
        body()
    }

    /// The cycle that waiting for `ticket` would close, or `nil` when waiting is safe.
    ///
    /// Called holding `InjectionStore.waits`.
    ///
    /// A ticket that is not finished has a builder that is still evaluating the ticket's key. Following builders that
    /// wait for unfinished tickets, every step is a real read: each key on a builder's stack read the next one, and the
    /// innermost key of a waiting thread read the key of the ticket it waits for. If the chain comes back to this
    /// thread, those reads form a cycle; a finished ticket, or a builder that is not waiting, ends the chain.
    ///
    /// The walk ends: every thread waits for one ticket at most, and no chain of waits loops without this thread,
    /// because each thread checked, under this same lock, that it closed no loop when it began waiting.
    nonisolated func cycle(waitingFor ticket: BuildTicket) -> [Any.Type]? {
        var chain: [Any.Type] = []
        var next = ticket
        while next.builder !== self {
            guard let blocker = next.builder.waitingFor, !blocker.finished else { return nil }
            chain += next.builder.waitingKeys.drop(while: { $0 != next.key })
            next = blocker
        }
        return Array(own.stack.drop(while: { $0 != next.key })) + chain + [next.key]
    }

    /// Records that this thread waits for another thread's build.
    ///
    /// Called holding `InjectionStore.waits`.
    nonisolated func beginWaiting(for ticket: BuildTicket) {
        waitingFor = ticket
        waitingKeys = own.stack
    }

    /// Records that this thread no longer waits.
    ///
    /// Called holding `InjectionStore.waits`.
    nonisolated func endWaiting() {
        waitingFor = nil
        waitingKeys = []
    }
}

/// What global writes assigned to settable keys' `currentValue`, and how to undo it.
///
/// Its lock is taken first: no other lock is held when it is taken. A key's `currentValue` is read and assigned while
/// holding it, so that writes, resets and the reads that writes through key paths make take turns. For a stored
/// property that runs no user code, except its initializer on the first access and any observer, which may read and
/// write dependencies: the lock's holder may take it again, and the other locks come after it.
final class Assignments: @unchecked Sendable {
    // `@unchecked Sendable` and `nonisolated(unsafe)`: `originals` is read and written only while holding `lock`.
    private nonisolated let lock = Lock(withCondition: false)
    /// For each settable key that global writes assigned since the last reset, a closure that assigns back what its
    /// `currentValue` held before the first of them, and returns what it replaces.
    nonisolated(unsafe) var originals: [ObjectIdentifier: () -> Any] = [:]

    /// Runs `body` holding the lock, which a thread may take again while it holds it: an initializer, a setter or an
    /// observer of a key's `currentValue` that the store runs under the lock may read and write dependencies.
    nonisolated func holding<R>(_ body: () -> R) -> R {
        let thread = ThreadState.current
        if thread.isAssigning { return body() }
        return lock.withLock {
            thread.isAssigning = true
            defer { thread.isAssigning = false }
            return body()
        }
    }

    /// Assigns back every original, and returns the values replaced, to be released after unlocking.
    nonisolated func restoreAll() -> [Any] {
        holding {
            defer { originals = [:] }
            return originals.values.map { $0() }
        }
    }
}

/// A settable key's variable, read for `ThreadState.evaluate(_:)`, whose caller knows the key only at run time.
private nonisolated func readVariable<K: InjectionKey>(of key: K.Type) -> Any {
    K.currentValue
}

/// One thread's build of one `.cached` key in one root.
final class BuildTicket: @unchecked Sendable {
    // `@unchecked Sendable` and `nonisolated(unsafe)`: `finished` is read and written only while holding
    // `InjectionStore.waits`; the other properties never change.
    nonisolated let key: Any.Type
    nonisolated let builder: ThreadState
    /// Set, once, when the builder has its value; from then on nobody waits for this ticket.
    nonisolated(unsafe) var finished = false

    nonisolated init(key: Any.Type, builder: ThreadState) {
        self.key = key
        self.builder = builder
    }
}

/// A thread-specific slot that holds a scope as a plain pointer, set for the length of a synchronous call.
///
/// Setting a scope in it costs no reference count: a scope is shared by every property made in it, so counting
/// references to it from several threads would make them contend. Whoever sets a scope holds it until the slot is
/// restored.
struct ScopeSlot: Sendable {
    /// The thread-specific data key; the slot owns nothing, so it needs no destructor.
    private nonisolated let key: pthread_key_t

    nonisolated init() {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "InjectedValues: pthread_key_create failed with \(status)")
        self.key = key
    }

    /// The address of the scope set on this thread, if any.
    nonisolated var pointer: UnsafeMutableRawPointer? {
        pthread_getspecific(key)
    }

    /// The scope set on this thread, if any.
    nonisolated var current: InjectionScope? {
        pointer.map(Self.scope(at:))
    }

    /// The scope at an address that `pointer` returned while the code that set it runs.
    static nonisolated func scope(at pointer: UnsafeMutableRawPointer) -> InjectionScope {
        // The pointer was stored by `setting(_:_:)` below, whose caller holds the scope until it restores the slot.
        Unmanaged<InjectionScope>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Runs `body` with `scope` set, or with none when it is `nil`, then restores what was set before.
    nonisolated func setting<T>(_ scope: InjectionScope?, _ body: () throws -> T) rethrows -> T {
        let outer = pthread_getspecific(key)
        guard outer != nil || scope != nil else { return try body() }
        // Unretained: `scope` is held by the caller for the whole of `body`, after which the slot is restored.
        pthread_setspecific(key, scope.map { Unmanaged.passUnretained($0).toOpaque() })
        defer { pthread_setspecific(key, outer) }
        return try body()
    }
}

/// The scope that the `@Injected` property being read on this thread remembers, lent to the reads its key path makes.
nonisolated let lentScope = ScopeSlot()

/// The scope that `@Injected` properties made on this thread remember, where it is not the active one: in an update
/// closure, the scope around the new one; in a `.cached` default, none, marked by the global store.
///
/// Both are synchronous, so a slot set for their length reaches exactly the properties they make.
nonisolated let propertyOrigin = ScopeSlot()

/// The thread-specific data key under which each thread keeps its `ThreadState`.
private nonisolated let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
        #if !canImport(Darwin)
        guard let pointer else { return }
        #endif
        // Takes back the reference that `ThreadState.current` gave the slot; the state is released after this line.
        Unmanaged<ThreadState>.fromOpaque(pointer).takeRetainedValue().unregister()
    }
    precondition(status == 0, "InjectedValues: pthread_key_create failed with \(status)")
    return key
}()

/// What a strict test reports about a key read with neither an override nor a test value.
private nonisolated func missingTestValueMessage(for key: Any.Type) -> String {
    """
    InjectedValues: the test read \(key), which nothing overrides and which has no test value, so it used the live \
    default. To fix it, override the dependency in the test (with the trait's update closure, .injecting, or \
    InjectedValues[\\.…] = …), or give the key a value for every test: \
    extension \(key): TestValueKey { static var testValue: … { … } }.
    """
}

/// Stops the process because defaults read each other in a cycle.
private nonisolated func dependencyCycle(_ keys: [Any.Type]) -> Never {
    let chain = keys.map { String(describing: $0) }.joined(separator: " → ")
    fatalError(
        """
        InjectedValues: dependency cycle: \(chain). Each key's default reads the next one, so none of them can be \
        built. To fix it, break the cycle: let one of these types receive the other as a parameter or a \
        property set after creation, or resolve it lazily, when first used, instead of in currentValue.
        """
    )
}

// MARK: - Lock

/// A POSIX mutex, and for a root's builds a condition variable.
final class Lock: @unchecked Sendable {
    // `@unchecked Sendable` and `nonisolated(unsafe)`: a POSIX mutex and condition variable are made to be used from
    // many threads. They live in
    // memory allocated here, so their addresses never change, and they are destroyed only in `deinit`, when no thread
    // can be holding or waiting on them.
    private nonisolated(unsafe) let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private nonisolated(unsafe) let condition: UnsafeMutablePointer<pthread_cond_t>?

    nonisolated init(withCondition: Bool) {
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "InjectedValues: pthread_mutex_init failed with \(status)")
        condition = withCondition ? .allocate(capacity: 1) : nil
        if let condition {
            condition.initialize(to: pthread_cond_t())
            let status = pthread_cond_init(condition, nil)
            precondition(status == 0, "InjectedValues: pthread_cond_init failed with \(status)")
        }
    }

    deinit {
        if let condition {
            pthread_cond_destroy(condition)
            condition.deallocate()
        }
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    nonisolated func lock() {
        pthread_mutex_lock(mutex)
    }

    nonisolated func unlock() {
        pthread_mutex_unlock(mutex)
    }

    nonisolated func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Gives up the lock until another thread calls `broadcast()`, then takes it again.
    ///
    /// Callers check their condition again afterwards, as a wake-up may be spurious.
    nonisolated func wait() {
        pthread_cond_wait(condition!, mutex)
    }

    /// Wakes every thread waiting in `wait()`.
    ///
    /// Called holding the lock.
    nonisolated func broadcast() {
        pthread_cond_broadcast(condition!)
    }
}
