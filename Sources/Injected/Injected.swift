// Injected: environment-style dependency injection for Swift, race-free under Swift 6.
//
// This file is the whole library. It imports only the standard library and the platform's C module, so it can be
// copied into an app or a package as it is. It compiles without warnings with a Swift 6.2 or newer compiler, in Swift 6
// language mode with complete concurrency checking, in Swift 5 language mode, and in a module whose default isolation
// is the main actor (SE-0466).
//
// For that last case, every declaration says `nonisolated`: the library runs on whichever thread reads a dependency,
// and such a module would otherwise isolate each declaration to the main actor. The mutable stored properties that
// locks guard are `nonisolated(unsafe)`, which says only that much: each type's comment says which lock guards them.
// The one exception is `Injected.wrappedValue`, which such a module isolates to the main actor when it compiles this
// file: Swift does not accept a `nonisolated` settable `wrappedValue` there.

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

/// A key that names one dependency in ``InjectedValues`` and holds its global value, in a variable: the article's
/// key protocol.
///
/// The protocol is ``InjectedValues/InjectionKey``, which declares everything about it; this name is the one the
/// article's code uses.
public typealias InjectionKey = InjectedValues.InjectionKey

nonisolated extension InjectedValues {
    // The protocol is declared here, inside a `nonisolated` type, rather than as a `nonisolated protocol` at the top
    // level: so it is nonisolated in a module whose default isolation is the main actor, and its requirement is a plain
    // `static var`, so that Swift 6 mode rejects a stored witness that does not say `nonisolated(unsafe)`. Swift copies
    // an explicit `nonisolated` on a protocol onto a stored witness (SE-0449), and then rejects it on a `static var`
    // even in Swift 5 mode, which would break the article's code; an isolation the protocol takes from its enclosing
    // type is not copied.
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
    /// writing the store and writing `NetworkProviderKey.currentValue = mock` directly are one and the same, and the
    /// last write wins. ``InjectedValues/reset()`` assigns back what `currentValue` held before the store first wrote
    /// it. Writes inside a scope never touch `currentValue`; they stay in the scope.
    ///
    /// Reads and writes made through the store take turns: both hold one process-wide lock of the store's variables,
    /// so `InjectedValues[\.networkProvider]` on one thread never races `InjectedValues[\.networkProvider] = mock` on
    /// another.
    ///
    /// > Important: `currentValue` is a global variable that nothing isolates. Swift 6 mode rejects a stored one that
    /// > does not say `nonisolated(unsafe)` ("static property 'currentValue' is not concurrency-safe because it is
    /// > nonisolated global shared mutable state"), and the annotation means what it says: reading or writing the
    /// > variable *directly* (`NetworkProviderKey.currentValue = mock`) while another thread writes it is a data race,
    /// > as in the article. Swift 5 mode checks none of this. For a dependency that code never assigns directly,
    /// > declare a ``ReadOnlyInjectionKey`` instead: the store then keeps overrides itself, and the compiler proves the
    /// > key race-free.
    ///
    /// Declare `currentValue` as a stored property. Its initializer runs on the variable's first read, under no lock of
    /// the store's and outside every scope, as a `.cached` default does: it may read other dependencies, which it reads
    /// in the global store, and a value it makes remembers no scope, so that it does not remember the request that
    /// happened to read it first. Its getter, setter and observers (`didSet`) run holding the lock of the store's
    /// variables: they may read and write dependencies, which take the lock again without waiting; a thread that waits
    /// for another thread's build of a `.cached` default lets go of the lock while it waits.
    public protocol InjectionKey: ReadOnlyInjectionKey {
        /// The dependency's global value: its default, and what a write made outside any scope assigns.
        ///
        /// Declare it as a stored `static var`; in Swift 6 mode, `nonisolated(unsafe) static var`, which Swift 6
        /// requires of a global variable that nothing isolates.
        static var currentValue: Value { get set }
    }
}

// `nonisolated`, so that in a module whose default isolation is the main actor the store can read the requirements on
// any thread.
/// A key whose default cannot be assigned: the store keeps every override itself, and the compiler can prove the key
/// race-free.
///
/// This is the Swift 6 way to declare a dependency. `currentValue` only has to be readable, so a computed property, a
/// `static let`, or a service type that is its own key all conform, and none needs `nonisolated(unsafe)`:
///
/// ```swift
/// private enum ClockKey: ReadOnlyInjectionKey {
///     static var currentValue: any Clock { SystemClock() }
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
/// > ``InjectionLifetime/cached``, the first read builds `currentValue` and every later read gets that one instance,
/// > so a service with state is made once. A key whose `currentValue` is a factory, making a new instance for every
/// > read, declares `static var lifetime: InjectionLifetime { .uncached }`. See ``InjectionLifetime``.
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
    /// The default is ``InjectionLifetime/cached``, which builds the default once and keeps it, for a key whose
    /// `currentValue` cannot be assigned, and ``InjectionLifetime/uncached`` for an ``InjectionKey``, whose variable
    /// every read asks. Declare `static var lifetime: InjectionLifetime { .uncached }` for a factory.
    static var lifetime: InjectionLifetime { get }

    /// Whether ``currentValue`` is a variable that the store assigns, which it then reads under a lock.
    ///
    /// Provided for you, and not to be declared: `true` for every ``InjectionKey``, `false` for any other key. It
    /// lets code that reads a key through a generic `ReadOnlyInjectionKey` parameter take the same turns with the
    /// store's writes as the key's own accessor.
    static var currentValueIsVariable: Bool { get }
}

extension ReadOnlyInjectionKey {
    /// The default lifetime of a key whose default cannot be assigned: ``InjectionLifetime/cached``.
    ///
    /// The first read builds `currentValue`, and every later read gets that instance, as SwiftUI's `defaultValue` and
    /// swift-dependencies' `liveValue` do. A factory declares ``InjectionLifetime/uncached``.
    public static nonisolated var lifetime: InjectionLifetime { .cached }

    /// `false`: the store never assigns a read-only key's `currentValue`.
    public static nonisolated var currentValueIsVariable: Bool { false }
}

extension InjectionKey {
    /// The default lifetime of an article-style key, ``InjectionLifetime/uncached``: every read asks its variable, as
    /// the article's store did, so that a direct assignment to `currentValue` is what the next read returns.
    public static nonisolated var lifetime: InjectionLifetime { .uncached }

    /// `true`: the store assigns an article-style key's `currentValue`, so it reads it under a lock.
    public static nonisolated var currentValueIsVariable: Bool { true }
}

// `nonisolated`, for the same reason as `ReadOnlyInjectionKey`.
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
/// module (or by ``withTestInjectedValues(strict:reportingTo:_:operation:)``), a read of the key that no scope
/// overrides returns `testValue` in place of `currentValue`, built as the key's ``ReadOnlyInjectionKey/lifetime``
/// says, once per test for a `.cached` key. Once a process has opened a test's scope, reads outside every test's
/// scope return it too; in a process that never does, such as an app, `testValue` is never used.
public nonisolated protocol TestValueKey: ReadOnlyInjectionKey {
    /// The dependency's default inside tests.
    static var testValue: Value { get }
}

/// How often a key's default value is evaluated while nothing overrides the key.
///
/// A ``ReadOnlyInjectionKey`` is `.cached` unless it says otherwise, and an ``InjectionKey`` `.uncached`:
///
/// | Declaration | `.cached` | `.uncached` |
/// |---|---|---|
/// | ``ReadOnlyInjectionKey``: `static var currentValue: Service { Service() }` | one instance, made on first read (the default) | a new instance per read: a factory |
/// | ``InjectionKey``: `static var currentValue = Service()` | one shared instance, made on first read | the same, and a direct assignment to `currentValue` is what the next read returns (the default) |
///
/// `.cached` is the Swift 6 way to have a lazily created singleton: a computed `currentValue` needs no
/// `nonisolated(unsafe)`, and the store builds it exactly once.
public nonisolated enum InjectionLifetime: Hashable, Sendable {
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
    /// override made by a nested scope never leaks into a shared instance. What it makes, captures or starts belongs
    /// to that store: in a test, to the test, for as long as the test runs; it keeps the test alive no longer.
    case cached
}

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
public nonisolated struct InjectedValues: Sendable {
    /// Creates a handle on the store.
    ///
    /// Instances carry no state: every instance reads and writes the innermost active scope, which is why user code
    /// never needs to create one.
    init() {}

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
    /// For an ``InjectionKey``, a read of its `currentValue` holds the reading thread's lock, and a write outside any
    /// scope holds every thread's, so that reads and writes made through the store never race, whatever the key's
    /// value type. Reads and writes of `Key.currentValue` made directly are the caller's to synchronize, as for any
    /// global variable.
    ///
    /// - Parameters:
    ///   - key: The key of the dependency.
    ///   - accessor: Where the read is made: Swift passes the name of the accessor that reads it, which a strict test's
    ///     report names. Leave it out.
    public static subscript<K: ReadOnlyInjectionKey>(key: K.Type, accessor: String = #function) -> K.Value {
        get { InjectedValues.Store.value(for: key, through: accessor) }
        // Inlined into the accessor, where the key's type is known, so that the box's type is looked up once, not on
        // every write.
        @inlinable
        set { InjectedValues.Store.override(key, with: newValue, in: InjectedValues.Box(newValue)) }
    }

    /// Reads or overrides a dependency through its accessor's key path.
    ///
    /// ```swift
    /// InjectedValues[\.networkProvider] = MockedNetworkProvider()
    /// InjectedValues[\.formatters.duration] = DurationFormatter(style: .short)
    /// ```
    ///
    /// Swift writes through a key path by calling the accessor's getter first, and a `WritableKeyPath` has no
    /// operation that calls only the setter. So the store first runs the getter alone: where the path is one accessor
    /// whose getter reads exactly one key, of the type being written, as a plain accessor does, the getter's read
    /// during the write gets the value being written, and no live default is built; the setter reads real values. A
    /// nested path such as `\.formatters.duration`, or a derived accessor that reads several keys, reads the real
    /// values, twice, and a strict test reports each live default that builds, naming the write. To override a
    /// dependency without its getter running at all, write it in an update closure: `withInjectedValues { $0.networkProvider = mock } operation: { … }`, or the test trait's
    /// `.injectedValues { $0.networkProvider = mock }`, calls the accessor's setter alone.
    ///
    /// A write to a nested path reads the outer dependency, changes the part, and overrides the outer dependency
    /// with the result. That read and write are two steps, not one: two threads writing parts of one dependency at
    /// once, or incrementing it with `+=`, can lose one of the writes. Keep state that changes inside the dependency,
    /// in an actor or behind a lock.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of `InjectedValues`.
    public static subscript<T>(_ keyPath: WritableKeyPath<InjectedValues, T>) -> T {
        get { InjectedValues()[keyPath: keyPath] }
        set {
            var values = InjectedValues()
            // Swift writes a key path through an accessor by reading the accessor first. That read is not one the
            // caller made: in a test it caches nothing, and it reports nothing.
            InjectedValues.Store.writingThroughKeyPath(newValue, keyPath, probe: { _ = values[keyPath: keyPath] }) {
                values[keyPath: keyPath] = newValue
            }
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
    public static subscript<T>(_ keyPath: KeyPath<InjectedValues, T>) -> T {
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
    /// It behaves exactly like the static subscript `InjectedValues[Key.self]`: an instance carries no state of its
    /// own.
    ///
    /// - Parameters:
    ///   - key: The key of the dependency.
    ///   - accessor: The name of the accessor that reads it, which Swift passes. Leave it out.
    public subscript<K: ReadOnlyInjectionKey>(key: K.Type, accessor: String = #function) -> K.Value {
        get { Self[key, accessor] }
        nonmutating set { Self[key] = newValue }
    }

    /// Drops every override and cached value of the innermost active scope, or of the global store when no scope is
    /// active.
    ///
    /// After a reset, reads in that scope fall through to the scopes around it, and a ``InjectionLifetime/cached``
    /// key is built again on its next read. A scope that is not fresh keeps no cache of its own, so resetting it
    /// drops only its overrides. A `.cached` default built for a fresh or test scope resets that scope; once the
    /// scope has ended, the reset is dropped with a warning on the standard error.
    ///
    /// A reset of the global store also assigns back what global writes replaced in ``InjectionKey``s'
    /// `currentValue`: each gets what it held before the first such write since the last reset. A direct assignment
    /// to `Key.currentValue` is not the store's to undo.
    ///
    /// ```swift
    /// InjectedValues[\.networkProvider] = MockedNetworkProvider()
    /// InjectedValues.reset()   // reads return the key's default again
    /// ```
    public static func reset() {
        InjectedValues.Store.reset()
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
/// A property made while a scope is active remembers that scope, so an object made with some dependencies overridden
/// keeps using them, on any thread, in a detached task or a callback. While the scope runs (its operation, and every
/// task started in it), the property sees it live, later writes included; once it has ended, the property sees it as
/// it was when the property was made. A read through the property looks, in order:
///
/// 1. in the reader's own active scopes, innermost first, down to the first one the property remembers too, so an
///    override made where the object is used wins;
/// 2. in the remembered scopes, innermost first;
/// 3. in the global store, or the fresh scope's root the remembered scopes end in while it runs, and last at the
///    key's default.
///
/// An object made in one test is not read with its test's scopes inside another test: there, the reader's scopes
/// alone count. A property made outside any scope remembers nothing and resolves wherever it is read. What a property
/// remembers never keeps the scope alive: a scope may store the objects made in it.
///
/// Assigning to the property overrides the dependency in the innermost active scope; from outside every scope, in the
/// innermost remembered scope that still runs, or else in the global store (or the fresh scope's root that still
/// runs); a write through a nested path there changes the value it writes at that place. A property made in an update
/// closure remembers the new scope as it was then; one made in the default of a ``InjectionLifetime/cached`` key, the
/// store that keeps the value; one made in a factory default evaluated for a read through another property, that
/// property's scope.
@propertyWrapper
public struct Injected<Value> {
    /// The dependency's key path.
    ///
    /// `nonisolated(unsafe)`: a key path is immutable once formed, and `KeyPath` is not declared `Sendable` only
    /// because a path can capture the arguments of subscripts it goes through; paths into `InjectedValues` go through
    /// accessor properties, which capture nothing. A `var`, never assigned after the initializers, because Swift warns
    /// that the annotation is unnecessary on a constant in an app that declares key paths `Sendable` itself.
    private nonisolated(unsafe) var keyPath: KeyPath<InjectedValues, Value>
    /// What the property remembers of the scope it was made in; `nil` outside any scope.
    private nonisolated let snapshot: InjectedValues.Snapshot?
    /// Where a read-only property was declared, for the message when code writes to it; `nil` for writable ones.
    private nonisolated let readOnlyDeclaration: InjectedValues.ReadOnlyDeclaration?

    /// Creates a property that reads and writes the dependency at a key path.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of ``InjectedValues``.
    public nonisolated init(_ keyPath: WritableKeyPath<InjectedValues, Value>) {
        self.keyPath = keyPath
        self.snapshot = InjectedValues.Store.snapshotToKeep()
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
        self.snapshot = InjectedValues.Store.snapshotToKeep()
        self.readOnlyDeclaration = InjectedValues.ReadOnlyDeclaration(file: file, line: line)
    }

    /// The dependency, resolved on every access.
    ///
    /// Setting it overrides the dependency in the innermost active scope, or, from outside any scope, in the scope the
    /// property remembers, exactly like writing `InjectedValues[keyPath] = newValue` there.
    public var wrappedValue: Value {
        get {
            guard snapshot != nil else { return InjectedValues[keyPath] }
            // Rather than pass the snapshot down through the key path's accessors, the property lends it to the reads
            // they make, in this thread's context, for the length of this read. Unwrapped in place, not bound to a
            // name, which Swift would retain: the objects made in a scope share one snapshot, so that retain would
            // write one reference count from every thread that reads through them.
            return InjectedValues.Store.lending(snapshot!) { InjectedValues[keyPath] }
        }
        nonmutating set {
            guard let writable = keyPath as? WritableKeyPath<InjectedValues, Value> else {
                fatalError(readOnlyWriteMessage(keyPath))
            }
            guard let snapshot else {
                InjectedValues[writable] = newValue
                return
            }
            // From outside any scope, the write goes to the remembered scope; inside one, to the active scope.
            guard let lent = InjectedValues.Store.lentForWrite(snapshot) else {
                InjectedValues[writable] = newValue
                return
            }
            InjectedValues.Store.lending(lent) { InjectedValues[writable] = newValue }
        }
    }

    /// The scope the property remembers, to build on with ``withInjectedValues(from:_:operation:fileID:line:)``.
    ///
    /// An object hands its scope to the objects it makes later through any of its `@Injected` properties:
    ///
    /// ```swift
    /// final class FeedModel {
    ///     @Injected(\.networkProvider) var networkProvider
    ///
    ///     func openDetail() -> DetailModel {
    ///         withInjectedValues(from: $networkProvider) { DetailModel() }
    ///     }
    /// }
    /// ```
    ///
    /// It is what the property remembers, or nothing for a property made outside any scope. Reading it reads nothing
    /// but the property's own immutable field, so it is safe wherever the property itself may be read.
    ///
    /// Like ``wrappedValue``, it is not marked `nonisolated`: Swift copies the mark onto the `$` variable of a wrapped
    /// local variable, where it is not allowed.
    public var projectedValue: InjectedValues.CapturedScope {
        InjectedValues.CapturedScope(snapshot: snapshot, madeFor: Value.self)
    }

    private nonisolated func readOnlyWriteMessage(_ keyPath: KeyPath<InjectedValues, Value>) -> String {
        // Where Swift can name the accessor, its key path reads `\InjectedValues.baseURL`; elsewhere, as on Linux, it
        // reads as an address, which names nothing.
        let path = "\(keyPath)"
        let accessor = path.contains("<computed") ? "" : " (\(path))"
        let declaration = readOnlyDeclaration.map { " declared at \($0.file):\($0.line)" } ?? ""
        return """
            Injected: cannot assign to the read-only @Injected property\(declaration), of type \(Value.self): its \
            accessor in the InjectedValues extension\(accessor) has no setter, so there is nothing to write to. \
            Swift decides whether a property wrapper can be assigned by its type alone, so this is found when the \
            program runs. To fix it, give that accessor a setter, or override the dependency it reads, for example \
            with withInjectedValues { $0.… = … } operation: { … }.
            """
    }
}

extension Injected: Sendable where Value: Sendable {}

nonisolated extension InjectedValues {
    /// The declaration site of a read-only ``Injected`` property, allocated only for read-only properties so that the
    /// common, writable wrapper stays small.
    final class ReadOnlyDeclaration: Sendable {
        let file: StaticString
        let line: UInt

        init(file: StaticString, line: UInt) {
            self.file = file
            self.line = line
        }
    }
}

// MARK: - Scopes

/// Runs an operation with some dependencies overridden, for the operation and every task it starts.
///
/// The update closure runs first, and its writes override dependencies in the new scope only:
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
/// ``InjectedValues/reset()``) stay in this scope.
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
/// The scope *runs* while its operation runs and while any task started in it (or in its update closure, while the
/// scope lasts) does: until then, everything made in the scope sees every write made in it. Once the last of them
/// has finished, the scope has ended, and what was made in it sees it as it was when it was made. Nothing a scope
/// stores keeps it running: what remembers a scope holds only its frames.
///
/// - Parameters:
///   - fresh: Whether the scope starts from nothing. A fresh scope ignores the global store and every scope around
///     it, so reads start from the keys' defaults, and it has its own cache of ``InjectionLifetime/cached`` values.
///     Tests use fresh scopes to be independent of each other. The default is `false`.
///   - update: A closure that overrides dependencies in the new scope. Reads in it, objects made in it and tasks it
///     starts see the new scope.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withInjectedValues<R>(
    fresh: Bool = false,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    try InjectedValues.Store.open(fresh: fresh).configured(update).run(operation)
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
///   - update: A closure that overrides dependencies in the new scope. Reads in it, objects made in it and tasks it
///     starts see the new scope.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
@inlinable
public func withInjectedValues<R>(
    fresh: Bool = false,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Swift.Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    // Inlined into the caller, with the binding below, so that `TaskLocal.withValue` is specialized there: its
    // unspecialized generic form costs a request's scope six task frames and five executor checks more.
    let scope = try InjectedValues.Store.open(fresh: fresh).configured(update)
    return try await InjectedValues.Store.binding.withValue(.init(scope: scope)) { try await operation() }
}

// MARK: - Carrying scopes into later and escaping work

/// Runs an operation in a new scope based on a captured scope, such as the one another object remembers, with some
/// dependencies overridden on top.
///
/// A model made in a scope keeps it, but a model it makes later, in a method run from a button tap, a delegate or a
/// callback, is made outside any scope. Make it from the parent's scope instead, which any of the parent's
/// ``Injected`` properties hands out as its projected value, so that the child keeps the parent's dependencies:
///
/// ```swift
/// final class FeedModel {
///     @Injected(\.networkProvider) var networkProvider
///
///     func openDetail() -> DetailModel {
///         withInjectedValues(from: $networkProvider) { DetailModel() }
///     }
/// }
/// ```
///
/// Reads in the new scope, and through objects made in it, look in its own overrides, then in the scopes active where
/// this is called (down to the first one the captured scope has too), then in the captured scopes, as reads through
/// the parent itself do. Where the scopes active here are in another test than the captured one, they alone count.
///
/// When the captured scope is empty, because the property was made outside any scope, the new scope is nested in the
/// active scope, exactly as ``withInjectedValues(fresh:_:operation:)`` nests it; inside a test's scope, the test
/// reports it, since the child then runs on the test's scope rather than the parent's. Nothing of the parent is read
/// but what its property stored when it was made, so this is safe with actors, locked classes and any `Sendable`
/// parent, and nothing is registered anywhere.
///
/// - Parameters:
///   - scope: The scope to build on: `$property` of one of the parent's `@Injected` properties, or a scope from
///     ``InjectedValues/capture()``.
///   - update: A closure that overrides dependencies in the new scope. Reads in it, objects made in it and tasks it
///     starts see the new scope.
///   - operation: The code to run in the new scope.
///   - fileID: Where this is called, named when a test reports that `scope` is empty. Leave the default.
///   - line: The line where this is called. Leave the default.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withInjectedValues<R>(
    from scope: InjectedValues.CapturedScope,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R,
    fileID: StaticString = #fileID,
    line: UInt = #line
) rethrows -> R {
    try InjectedValues.Store.open(on: scope.reportingIfEmpty(file: fileID, line: line)).configured(update).run(
        operation
    )
}

/// Runs an asynchronous operation in a new scope based on a captured scope, such as the one another object
/// remembers, with some dependencies overridden on top.
///
/// This behaves like the synchronous ``withInjectedValues(from:_:operation:fileID:line:)``, and the operation runs on
/// the caller's actor.
///
/// - Parameters:
///   - scope: The scope to build on: `$property` of one of the parent's `@Injected` properties, or a scope from
///     ``InjectedValues/capture()``.
///   - update: A closure that overrides dependencies in the new scope. Reads in it, objects made in it and tasks it
///     starts see the new scope.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The code to run in the new scope.
///   - fileID: Where this is called, named when a test reports that `scope` is empty. Leave the default.
///   - line: The line where this is called. Leave the default.
/// - Returns: The value the operation returns.
@discardableResult
public func withInjectedValues<R>(
    from scope: InjectedValues.CapturedScope,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Swift.Actor)? = #isolation,
    operation: () async throws -> R,
    fileID: StaticString = #fileID,
    line: UInt = #line
) async rethrows -> R {
    let scope = try InjectedValues.Store.open(on: scope.reportingIfEmpty(file: fileID, line: line)).configured(update)
    return try await InjectedValues.Store.binding.withValue(.init(scope: scope)) { try await operation() }
}

/// Runs an operation in a new scope based on a captured scope, such as the one another object remembers.
///
/// The same as ``withInjectedValues(from:_:operation:fileID:line:)`` with nothing overridden on top:
///
/// ```swift
/// func openDetail() -> DetailModel {
///     withInjectedValues(from: $networkProvider) { DetailModel() }
/// }
/// ```
///
/// - Parameters:
///   - scope: The scope to build on: `$property` of one of the parent's `@Injected` properties, or a scope from
///     ``InjectedValues/capture()``.
///   - operation: The code to run in the new scope.
///   - fileID: Where this is called, named when a test reports that `scope` is empty. Leave the default.
///   - line: The line where this is called. Leave the default.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withInjectedValues<R>(
    from scope: InjectedValues.CapturedScope,
    operation: () throws -> R,
    fileID: StaticString = #fileID,
    line: UInt = #line
) rethrows -> R {
    try withInjectedValues(from: scope, { _ in }, operation: operation, fileID: fileID, line: line)
}

/// Runs an asynchronous operation in a new scope based on a captured scope, such as the one another object
/// remembers.
///
/// The same as ``withInjectedValues(from:_:isolation:operation:fileID:line:)`` with nothing overridden on top.
///
/// - Parameters:
///   - scope: The scope to build on: `$property` of one of the parent's `@Injected` properties, or a scope from
///     ``InjectedValues/capture()``.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The code to run in the new scope.
///   - fileID: Where this is called, named when a test reports that `scope` is empty. Leave the default.
///   - line: The line where this is called. Leave the default.
/// - Returns: The value the operation returns.
@discardableResult
public func withInjectedValues<R>(
    from scope: InjectedValues.CapturedScope,
    isolation: isolated (any Swift.Actor)? = #isolation,
    operation: () async throws -> R,
    fileID: StaticString = #fileID,
    line: UInt = #line
) async rethrows -> R {
    try await withInjectedValues(from: scope, { _ in }, operation: operation, fileID: fileID, line: line)
}

/// Made unavailable: reading another object's properties by reflection ignores its isolation and its locks.
///
/// Pass the scope one of the parent's `@Injected` properties remembers instead, `withInjectedValues(from:
/// $property)`, which reads only what the property stored when it was made.
///
/// - Parameters:
///   - parent: An object.
///   - update: A closure that overrides dependencies.
///   - operation: The code to run.
/// - Returns: The value the operation returns.
@available(
    *,
    unavailable,
    message: "pass the scope one of the parent's @Injected properties remembers: withInjectedValues(from: $property)"
)
@discardableResult
public nonisolated func withInjectedValues<R>(
    from parent: AnyObject,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    fatalError("unavailable")
}

nonisolated extension InjectedValues {
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
    /// It captures what an ``Injected`` property made at the same place would remember: the active scopes, live while
    /// they run and as they were when captured once they have ended. Scopes that have ended merge into one level when
    /// something is captured, so that work that captures again in each hop, as polling and retries do, holds a capture
    /// as short after thousands of hops as after two.
    ///
    /// - Returns: The captured scope. It keeps the frames of the scopes it captured, never the scopes themselves.
    public static func capture() -> CapturedScope {
        CapturedScope(snapshot: InjectedValues.Store.snapshotToKeep())
    }

    /// A scope captured by ``InjectedValues/capture()`` or handed out by an ``Injected`` property, to run code in it
    /// later, on any thread.
    ///
    /// Each ``run(_:)`` opens a new scope based on it, exactly as ``withInjectedValues(from:_:operation:fileID:line:)``
    /// does with no update closure: writes made in the body stay in that scope, and reads look in the body's own
    /// writes, then in the scopes active where it runs (down to the first one the capture has too), then in the
    /// captured scopes. A capture made outside any scope runs its body where it is run.
    public struct CapturedScope: Sendable {
        let snapshot: InjectedValues.Snapshot?
        /// The value type of the `@Injected` property that handed out the scope, or `nil` for a capture.
        let madeFor: Any.Type?

        init(snapshot: InjectedValues.Snapshot?, madeFor: Any.Type? = nil) {
            self.snapshot = snapshot
            self.madeFor = madeFor
        }

        /// The captured snapshot, after reporting, inside a test's scope, that `withInjectedValues(from:)` got none.
        func reportingIfEmpty(file: StaticString, line: UInt) -> InjectedValues.Snapshot? {
            guard snapshot == nil, let report = InjectedValues.Store.place().reader.root.testPolicy?.report else {
                return snapshot
            }
            let source = madeFor.map { "an @Injected property of type \($0)" } ?? "InjectedValues.capture()"
            report(
                """
                InjectedValues: withInjectedValues(from:) at \(file):\(line) got no scope to build on: \(source) was \
                made outside every scope, so the new scope builds on the test's scope, not on the parent's. To fix it, \
                make the parent inside the test (or inside withInjectedValues), or pass a scope captured in the test.
                """
            )
            return nil
        }

        /// Runs `body` in the captured scope.
        ///
        /// - Parameter body: The code to run.
        /// - Returns: The value `body` returns.
        @discardableResult
        public func run<R>(_ body: () throws -> R) rethrows -> R {
            try InjectedValues.Store.open(on: snapshot).run(body)
        }

        /// Runs an asynchronous `body` in the captured scope, on the caller's actor.
        ///
        /// - Parameters:
        ///   - isolation: The actor `body` runs on. Leave the default, the caller's.
        ///   - body: The code to run.
        /// - Returns: The value `body` returns.
        @discardableResult
        public func run<R>(
            isolation: isolated (any Swift.Actor)? = #isolation,
            _ body: () async throws -> R
        ) async rethrows -> R {
            let scope = InjectedValues.Store.open(on: snapshot)
            return try await InjectedValues.Store.binding.withValue(.init(scope: scope)) { try await body() }
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
/// calls `report` once per key in the test, with a message that names the key and says how to fix it; the read still
/// returns the live default. Fresh scopes opened inside the test keep its test values, its `strict`, and the keys it
/// has reported. `report` also hears of a ``withInjectedValues(from:_:operation:fileID:line:)`` that finds no scope to
/// build on, strict or not.
///
/// Opened inside another test's scope, as a test's trait is inside its suite's, it is nested in that scope instead
/// of starting afresh: the outer overrides stay, this one's go on top, and the outer scope's `strict` and `report`
/// apply.
///
/// A test runner's process (XCTest's or Swift Testing's, known by its arguments and environment) is one that runs
/// tests from its first read; any other becomes one with the first call, for good. In such a process, reads made
/// outside every test's scope (work on a queue, a thread or a detached task) get test values too, and while a strict
/// test runs, such a read of a key with no test value is reported, once per key, to the strict test that began last.
/// <doc:TestingWithInjected> says what this means for a test suite.
///
/// - Parameters:
///   - strict: Whether reading a key that has neither an override nor a test value is reported.
///   - report: What to call with a message about a problem in the test: a key read without a test value, in a
///     strict test, or a scope that `from:` could not find.
///   - update: A closure that overrides dependencies in the test's scope.
///   - operation: The test.
/// - Returns: The value the operation returns.
@discardableResult
public nonisolated func withTestInjectedValues<R>(
    strict: Bool,
    reportingTo report: @escaping @Sendable (_ message: String) -> Void,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    let scope = InjectedValues.Store.openTest(InjectedValues.TestPolicy(strict: strict, report: report))
    InjectedValues.Store.beginTest(scope.root!.testPolicy!)
    defer { InjectedValues.Store.endTest(scope.root!.testPolicy!) }
    return try scope.configured(update).run(operation)
}

/// Runs an asynchronous operation in a fresh scope for a test, in which keys that declare a test value start from it.
///
/// This behaves like the synchronous ``withTestInjectedValues(strict:reportingTo:_:operation:)``, and the operation
/// runs on the caller's actor.
///
/// - Parameters:
///   - strict: Whether reading a key that has neither an override nor a test value is reported.
///   - report: What to call with a message about a problem in the test.
///   - update: A closure that overrides dependencies in the test's scope.
///   - isolation: The actor the operation runs on. Leave the default, the caller's.
///   - operation: The test.
/// - Returns: The value the operation returns.
@discardableResult
public func withTestInjectedValues<R>(
    strict: Bool,
    reportingTo report: @escaping @Sendable (_ message: String) -> Void,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Swift.Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    let scope = InjectedValues.Store.openTest(InjectedValues.TestPolicy(strict: strict, report: report))
    InjectedValues.Store.beginTest(scope.root!.testPolicy!)
    defer { InjectedValues.Store.endTest(scope.root!.testPolicy!) }
    let binding = InjectedValues.Binding(scope: try scope.configured(update))
    return try await InjectedValues.Store.binding.withValue(binding) { try await operation() }
}

/// Runs an operation in a fresh scope for a test, calling `strict`, if any, for each key read with no test value.
///
/// The same as ``withTestInjectedValues(strict:reportingTo:_:operation:)`` with `strict` set when a closure is
/// given; without one, nothing is reported.
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
    try withTestInjectedValues(strict: strict != nil, reportingTo: strict ?? { _ in }, update, operation: operation)
}

/// Runs an asynchronous operation in a fresh scope for a test, calling `strict`, if any, for each key read with no
/// test value.
///
/// The same as ``withTestInjectedValues(strict:reportingTo:_:isolation:operation:)`` with `strict` set when a
/// closure is given; without one, nothing is reported.
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
    isolation: isolated (any Swift.Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    try await withTestInjectedValues(
        strict: strict != nil,
        reportingTo: strict ?? { _ in },
        update,
        isolation: isolation,
        operation: operation
    )
}

nonisolated extension InjectedValues {
    // MARK: - Storage
    //
    // The machinery on one page; the guarantees article draws the same as tables.
    //
    // - A `Scope` is what the task-local `Store.binding` holds while its operation and the tasks started in it run;
    //   nothing else holds one. Its `Cell` is a lock around an immutable `Frame` of overrides, which a write replaces.
    //   When the scope's last binding ends, its `deinit` empties the cell.
    // - Whatever remembers a scope (an `@Injected` property, a capture, a scope opened on either) holds a `Snapshot`: a
    //   persistent list of levels, each a cell and the frame it had when the level was made. A read uses the live
    //   frame while the scope runs, and the frozen one after. Dead levels merge when a snapshot is made, so chains stay
    //   flat. A snapshot holds a cell, never a scope, and its root weakly: what a scope stores cannot keep it alive.
    // - A `Root` ends every lookup: the global store, or a fresh scope's, which its scopes hold. It keeps `.cached`
    //   values, built outside every lock by their first reader, whose `BuildTicket` other readers wait for.
    // - One decision: `Store.place()` reads the binding and what a property lends in the thread's `Context`. What a
    //   task can inherit is in the binding: an update closure and a `.cached` build bind a view (a cell, no scope) of
    //   the scope or root they work for, so tasks started there read it too, and keep it no more than a snapshot does.
    // - Derived defaults: a `.cached` build records the keys it reads (`inputs`) and what its read saw of them (each
    //   override, and the root); its value serves only a read that sees the same. It is kept in the innermost level
    //   that overrides one (in the cell's `derived`; a dead level's, weakly, in its innermost ended cell), else the
    //   root: that decides how long it lives, not who gets it. The scope's own reads, and the builds they start
    //   (whose view names its cell `builtFor`), keep what they get in its cell too. Writes drop what was built from
    //   the key. The records are a build's own task's reads. A thread's view marks the global store's values that
    //   every read may take (`plain`), until a build first reads an input of the key.
    // - Article variables: one mutex, which a thread holds while it reads or assigns one through the store.
    // - Lock order: the variables mutex, a root's lock, a cell's lock (never two at once), a thread's view, `waits`. No
    //   user code runs under a lock but an `InjectionKey`'s accessors under the variables mutex, and what a lock's
    //   holder replaces is released after it unlocks.

    @usableFromInline
    typealias AnyBox = any AnyObject & Sendable

    /// A value in the store, boxed so that one dictionary can hold values of every type.
    @usableFromInline
    final class Box<Value: Sendable>: Sendable {
        let value: Value

        @usableFromInline
        init(_ value: Value) { self.value = value }
    }

    /// The value in a box that the store made for a key whose value type is `Value`.
    ///
    /// The store files every box under its key's `ObjectIdentifier` and makes it from a value of that key's `Value`
    /// type, so the box found under a key is always a `Box<Value>`; `unsafeDowncast` skips the check `as!` would make.
    @inline(__always)
    static func unbox<Value: Sendable>(_ box: AnyBox, as type: Value.Type) -> Value {
        unsafeDowncast(box, to: Box<Value>.self).value
    }

    /// A scope's overrides: a value, which a write replaces with a copy.
    ///
    /// Most scopes override one key, a server's request scope among them, so one is kept in line, without hashing.
    struct Frame: Sendable {
        private var firstID: ObjectIdentifier?
        private var first: AnyBox?
        private var table: [ObjectIdentifier: AnyBox]?

        var isEmpty: Bool { first == nil && table == nil }

        var boxes: [AnyBox] { (first.map { [$0] } ?? []) + (table.map { Array($0.values) } ?? []) }

        @inline(__always)
        subscript(id: ObjectIdentifier) -> AnyBox? {
            if let table { return table[id] }
            return firstID == id ? first : nil
        }

        /// Overrides a key, and returns what it replaced.
        @discardableResult
        mutating func set(_ id: ObjectIdentifier, _ box: AnyBox) -> AnyBox? {
            if table == nil, first == nil || firstID == id {
                defer { (firstID, first) = (id, box) }
                return first
            }
            if let firstID, let first { (table, self.firstID, self.first) = ([firstID: first], nil, nil) }
            return table!.updateValue(box, forKey: id)
        }

        /// This frame with `inner`'s overrides on top: two dead levels made one.
        func under(_ inner: Frame) -> Frame {
            var merged = self
            if let id = inner.firstID, let box = inner.first { merged.set(id, box) }
            for (id, box) in inner.table ?? [:] { merged.set(id, box) }
            return merged
        }
    }

    /// A scope's overrides behind a lock, one of 256 shared stripes, so that a scope costs no lock to make.
    typealias Cell = Lock<CellState>

    /// What a cell's lock guards.
    struct CellState {
        var frame = Frame()
        /// Whether the scope has ended, which emptied the cell.
        var ended = false
        /// Counts the writes, so that a snapshot can tell whether the frame it froze is still the live one.
        var version: UInt = 0
        /// The snapshot that what is made in the scope now remembers, while it is current.
        var kept: Snapshot?
        /// What derived defaults keep in the cell, made on first use, so that a cell without costs no more to make,
        /// copy or empty.
        var derived: Derived?

        /// The cell's `derived`, made if need be.
        mutating func madeDerived() -> Derived {
            if let derived { return derived }
            let made = Derived()
            derived = made
            return made
        }

        /// Overrides a key, and drops what was built from it; returns what both held, to release after unlocking.
        mutating func set(_ id: ObjectIdentifier, _ box: AnyBox) -> (AnyBox?, [Built]) {
            version &+= 1
            return (frame.set(id, box), derived?.drop(builtFrom: id) ?? [])
        }
    }

    /// What a cell keeps for derived defaults, guarded by the cell's lock.
    final class Derived {
        /// The `.cached` values built for reads whose innermost level that overrides one of their inputs is this cell's,
        /// and those the scope's own reads got, wherever they were built.
        ///
        /// Each has what its read saw; the newest few a key are kept, since reads through objects made at different
        /// times, or made elsewhere, see different inputs. Once the scope has ended, those built for objects' reads.
        var built: [ObjectIdentifier: [Built]] = [:]
        var building: [ObjectIdentifier: BuildTicket] = [:]
        /// The inputs each key's last build for the cell read, which the reads that waited for it follow.
        var read: [ObjectIdentifier: [ObjectIdentifier]] = [:]
        /// For a fresh scope's own cell, its root, whose builds read the cell, until the scope ends.
        var owns: Root?

        /// Keeps a value, and returns what it replaces, to release after unlocking: for the scope's own reads, the
        /// one they had, which an input's change since has made stale; for other reads (through objects, captures,
        /// nested scopes, builds for those), one built for a read that saw the same, and the oldest beyond eight.
        func keep(_ value: Built, for id: ObjectIdentifier) -> [Built] {
            let (old, others) = built[id, default: []].filter { $0.box !== value.box }.reduce(
                into: ([Built](), [Built]())
            ) { if $1.own == value.own { $0.0.append($1) } else { $0.1.append($1) } }
            let kept = value.own ? [value] : (old.filter { !$0.sawTheSame(as: value) } + [value]).suffix(8)
            built[id] = others + kept
            return old.filter { old in !kept.contains { $0.box === old.box } }
        }

        /// The value kept for `id` that `matches`: the scope's own, else the newest.
        func preferred(_ id: ObjectIdentifier, where matches: (Built) -> Bool) -> Built? {
            let matching = built[id]?.filter(matches)
            return matching?.first { $0.own } ?? matching?.last
        }

        /// Makes a value kept here the scope's own, if it is not; returns what that replaces, to release after
        /// unlocking.
        func adopt(_ value: Built, for id: ObjectIdentifier) -> [Built] {
            guard !value.own else { return [] }
            var own = value
            own.own = true
            return keep(own, for: id)
        }

        /// Removes the values built from `id`, and returns them.
        func drop(builtFrom id: ObjectIdentifier) -> [Built] {
            let stale = built.values.joined().filter { $0.inputs.contains(id) }
            if stale.isEmpty { return [] }
            built = built.compactMapValues { values in
                let kept = values.filter { !$0.inputs.contains(id) }
                return kept.isEmpty ? nil : kept
            }
            return stale
        }
    }

    /// A `.cached` value and the keys its build read, its own reads and those of the cached values it read.
    struct Built {
        let box: AnyBox
        let inputs: [ObjectIdentifier]
        /// For a value kept in a cell, its root's count of writes when its build began: a write to an input since, in
        /// the root, makes it stale.
        var rootWrites: UInt = 0
        /// For a value kept in a cell, what the read it was built for saw, which a read it serves must see too.
        ///
        /// The override of each input in the levels it walked (`nil` for none), held so that their identities stay
        /// theirs, and the root it ended at. Which cell keeps the value decides only how long it lives.
        var levels: [AnyBox?] = []
        weak var root: Root?
        /// Whether it serves the scope's own reads: those the scope itself makes, in its operation, its update closure
        /// and its tasks, and the builds they start, rather than reads through objects, captures or nested scopes.
        ///
        /// Kept in the scope's cell, wherever else it lives.
        var own = false

        /// Whether `other` was built for a read that saw what this one's did.
        func sawTheSame(as other: Built) -> Bool { sawTheSame(other.inputs, other.levels, at: other.root) }

        /// Whether this value's read saw `levels` for `inputs`, ending at `root`; or at a root that has ended since,
        /// where the levels override every input, so that the root it read nothing from does not matter.
        func sawTheSame(_ inputs: [ObjectIdentifier], _ levels: [AnyBox?], at root: Root?) -> Bool {
            (self.root === root || self.root == nil && !levels.contains { $0 == nil }) && self.inputs == inputs
                && zip(self.levels, levels).allSatisfy { $0 === $1 }
        }

        /// Removes the values built from `id`, and returns them.
        static func drop<Key>(builtFrom id: ObjectIdentifier, in built: inout [Key: Built]) -> [Built] {
            if built.isEmpty { return [] }
            let stale = built.filter { $0.value.inputs.contains(id) }
            for key in stale.keys { built[key] = nil }
            return Array(stale.values)
        }
    }

    /// A scope, which only the task-local binding holds, while its operation and the tasks started in it run; or a
    /// view of one (or of a root), which an update closure or a `.cached` build binds.
    @usableFromInline
    final class Scope: Sendable {
        /// The scope's overrides, or the cell a view shows (`nil` for a build with no fresh scope of its own).
        let cell: Cell?
        /// What the scope was opened on: `nil` for a fresh scope, or one opened on its root alone.
        let base: Snapshot?
        /// The scope's root, which it keeps alive; `nil` for a view.
        let root: Root?
        /// A view's root, weakly, as a snapshot holds it: `nil` for the global store, or once a fresh root has ended.
        weak let viewed: Root?
        /// For a build's view, the cell of the scope whose own read it builds for: the values the build reads are part
        /// of that scope's instance.
        let builtFor: Cell?

        init(base: Snapshot?, root: Root) {
            (cell, self.base, self.root, viewed, builtFor) = (Cell(CellState(), striped: true), base, root, nil, nil)
        }

        init(viewOf cell: Cell?, base: Snapshot?, root: Root, builtFor: Cell? = nil) {
            (self.cell, self.base, self.root, viewed) = (cell, base, nil, root === Store.global ? nil : root)
            self.builtFor = builtFor
        }

        /// The cell of the scope whose own reads this scope's are, which keeps the instances they get: the scope's, or
        /// what a view shows, or the one a build is for.
        var owner: Cell? { builtFor ?? cell }

        /// The root the scope's reads end at: its own, or a view's, else the global store.
        var endsAt: Root { root ?? viewed ?? Store.global }

        /// The scope's end, when its last binding does: its cell is emptied, and what it held released.
        ///
        /// A fresh scope's root, which scopes nested in it may keep, keeps its final frame for the builds made there.
        deinit {
            guard let root, let cell else { return }
            func end() -> (Frame, Snapshot?, Derived?) {
                cell.withLock { state in
                    defer {
                        (state.frame, state.ended, state.kept, state.derived) = (Frame(), true, nil, nil)
                    }
                    return (state.frame, state.kept, state.derived)
                }
            }
            // A fresh scope's root takes its frame in the same step as the cell ends, so that no build sees neither.
            let dropped =
                base == nil && root !== Store.global
                ? root.lock.withLock { state in
                    let dropped = end()
                    if state.owner === cell { state.ownerFrame = dropped.0 }
                    return dropped
                } : end()
            withExtendedLifetime(dropped) {}
        }

        /// What is made in the scope now remembers: made once, and again after a write to one of its levels, so
        /// that the objects a request makes share one.
        func snapshot() -> Snapshot? {
            guard let cell, let root, base?.isClean ?? true else { return Snapshot.make(Reader(self), lent: nil) }
            // The base is clean, so the kept snapshot, whose tail it is, is clean while the cell has had no write since.
            // What a new one replaces is released after unlocking: a snapshot's last release may release user values.
            let (snapshot, replaced) = cell.withLock { state -> (Snapshot, Snapshot?) in
                if let kept = state.kept, kept.version == state.version { return (kept, nil) }
                let made = Snapshot(
                    cell,
                    state.frame,
                    state.version,
                    next: base,
                    root: root,
                    world: base?.world ?? root.world
                )
                defer { state.kept = made }
                return (made, state.kept)
            }
            withExtendedLifetime(replaced) {}
            return snapshot
        }
    }

    /// What remembers a scope: its innermost level and the levels after it, a persistent list whose tails snapshots
    /// share.
    ///
    /// A level holds a cell, and the frame the cell had when the level was made, which reads use once the scope has
    /// ended; a dead level holds the merged frames of scopes that had ended, and, weakly, the innermost of their cells,
    /// only to keep what is built for it.
    @usableFromInline
    final class Snapshot: Sendable {
        let cell: Cell?
        /// For a dead level, the innermost ended cell it merged, weakly, where what is built for the level is kept:
        /// a value kept there may remember this level, and must not keep the cell.
        weak let keeper: Cell?
        let frozen: Frame
        /// The cell's version when it was frozen; `nil` for a dead level.
        let version: UInt?
        let next: Snapshot?
        /// The root reads end at, weakly, unless it is the global store: `nil` once a fresh root has ended, and for a
        /// snapshot of a world whose root had ended when it was made.
        weak let root: Root?
        let isGlobal: Bool
        /// The test whose world the snapshot is in, or `nil` for the process's; kept after the test ends, so that its
        /// objects stay out of every other world (a policy holds no scope and no value).
        let world: TestPolicy?

        init(_ cell: Cell?, _ frozen: Frame, _ version: UInt?, next: Snapshot?, root: Root, world: TestPolicy?) {
            (self.frozen, self.version, self.next, self.world) = (frozen, version, next, world)
            (self.cell, keeper) = version == nil ? (nil, cell) : (cell, nil)
            // Made in a world whose root has ended (`root` is then the reader's, of another world): it ends nowhere,
            // so that a write through it is dropped rather than crossing into that world.
            let inWorld = root.world === world
            (isGlobal, self.root) = (inWorld && root === Store.global, inWorld && root !== Store.global ? root : nil)
        }

        /// A level of `cell` as it is now.
        convenience init(_ cell: Cell, next: Snapshot?, root: Root, world: TestPolicy?) {
            let (frame, version, ended) = cell.withLock { ($0.frame, $0.version, $0.ended) }
            self.init(ended ? nil : cell, frame, ended ? nil : version, next: next, root: root, world: world)
        }

        var endsAt: Root? { isGlobal ? Store.global : root }

        var levels: UnfoldSequence<Snapshot, (Snapshot?, Bool)> { sequence(first: self, next: \.next) }

        /// The override of a key in a level: in the live frame while the scope runs, in the frozen one after.
        @inline(__always)
        static func box(for id: ObjectIdentifier, in cell: Cell?, _ frozen: Frame) -> AnyBox? {
            if let (ended, box) = cell?.withLock({ ($0.ended, $0.frame[id]) }), !ended { return box }
            return frozen[id]
        }

        /// The override of a key in this level, its frozen frame read in place rather than copied.
        func override(of id: ObjectIdentifier) -> AnyBox? { Snapshot.box(for: id, in: cell, frozen) }

        /// Whether every level still shows what its cell holds, and no dead level follows another: a tail a new
        /// snapshot can share as it is.
        var isClean: Bool {
            var afterDead = false
            for level in levels {
                if let version = level.version {
                    guard level.cell?.withLock({ $0.ended ? nil : $0.version }) == version else { return false }
                } else if afterDead {
                    return false
                }
                afterDead = level.version == nil
            }
            return true
        }

        /// The innermost level whose scope still runs, whose cell a write through the snapshot goes to.
        var liveLevel: Snapshot? { levels.first { $0.cell?.withLock { !$0.ended } == true } }

        func has(_ cell: Cell) -> Bool { levels.contains { $0.cell === cell } }

        /// What a read from `reader`, through `lent`, walks, as a snapshot: live levels frozen now, dead ones merged,
        /// empty ones dropped, and a clean tail shared; `nil` when that is the global store alone.
        static func make(_ reader: Reader, lent: Snapshot?) -> Snapshot? {
            // A snapshot stays in the world of what it was made from, even once that world's root has ended.
            let (root, world) = (reader.root(lent), reader.counts(lent) ? lent!.world : reader.world)
            let empty =
                root === Store.global && world == nil
                ? nil : Snapshot(nil, Frame(), nil, next: nil, root: root, world: world)
            if !reader.counts(lent), reader.base?.isClean ?? true {
                // The common cases: a scope's own level on its clean base, or what a view shows.
                return reader.cell.map { Snapshot($0, next: reader.base, root: root, world: world) } ?? reader.base
                    ?? empty
            }
            var levels: [(cell: Cell?, frame: Frame, version: UInt?)] = []
            reader.walk(lent) { cell, frozen, _, keeper in
                let (live, version) = cell?.withLock { ($0.ended ? nil : $0.frame, $0.version) } ?? (nil, 0)
                if let live {
                    levels.append((cell, live, version))
                } else if let last = levels.last, last.version == nil {
                    levels[levels.count - 1].frame = frozen.under(last.frame)
                } else if !frozen.isEmpty {
                    // A dead level keeps the innermost ended cell it merges, where what is built for it is kept.
                    levels.append((cell ?? keeper, frozen, nil))
                }
                return false
            }
            return levels.reversed().reduce(nil) {
                Snapshot($1.cell, $1.frame, $1.version, next: $0, root: root, world: world)
            } ?? empty
        }
    }

    /// Where a read starts: the innermost scope's cell, the levels after it, and the root.
    struct Reader {
        let cell: Cell?
        let base: Snapshot?
        let root: Root
        /// The test whose world the read is in: its levels', which keep it after the test's root ends, else its root's.
        let world: TestPolicy?

        init(_ scope: Scope?) {
            (cell, base) = (scope?.cell, scope?.base)
            root = scope?.endsAt ?? Store.global
            world = base?.world ?? root.world
        }

        init(snapshot: Snapshot) {
            (cell, base, root, world) = (nil, snapshot, snapshot.endsAt ?? Store.global, snapshot.world)
        }

        /// Visits the levels a read walks, each a cell (`nil` for a dead level), its frozen frame and the version it
        /// froze (`nil` for the reader's own cell, which is live, and for a dead level), until `visit`
        /// returns `true`: the reader's own until one that `lent` has too, then `lent`'s.
        ///
        /// A `lent` from another world counts only where the reader has no scope. The one place that says in what order
        /// a read looks.
        func walk(_ lent: Snapshot?, _ visit: (Cell?, Frame, UInt?, Cell?) -> Bool) {
            let lent = counts(lent) ? lent : nil
            if let cell {
                if lent?.has(cell) == true { return Reader.walk(lent, visit) }
                if visit(cell, Frame(), nil, nil) { return }
            }
            var node = base
            while let level = node, !(level.cell.map { lent?.has($0) == true } ?? false) {
                if visit(level.cell, level.frozen, level.version, level.keeper) { return }
                node = level.next
            }
            Reader.walk(lent, visit)
        }

        private static func walk(_ list: Snapshot?, _ visit: (Cell?, Frame, UInt?, Cell?) -> Bool) {
            var node = list
            while let level = node, !visit(level.cell, level.frozen, level.version, level.keeper) { node = level.next }
        }

        /// The override of a key in the levels a read walks; after the reader's own cell, where the caller has just
        /// looked there (`cellChecked`).
        func box(for id: ObjectIdentifier, lent: Snapshot?, cellChecked: Bool = false) -> AnyBox? {
            var (found, skip): (AnyBox?, Bool) = (nil, cellChecked && cell != nil && lent == nil)
            walk(lent) { cell, frozen, _, _ in
                guard !skip else {
                    skip = false
                    return false
                }
                found = Snapshot.box(for: id, in: cell, frozen)
                return found != nil
            }
            return found
        }

        /// Whether a remembered snapshot counts: where the reader has no scope, or in the same world.
        func counts(_ lent: Snapshot?) -> Bool {
            guard let lent else { return false }
            return (cell == nil && base == nil) || world === lent.world
        }

        /// The root a read ends at: the remembered one while it exists, else the reader's.
        func root(_ lent: Snapshot?) -> Root { counts(lent) ? lent!.endsAt ?? root : root }
    }

    /// The end of every lookup: the global store, or a fresh scope's root.
    ///
    /// It keeps the `.cached` values.
    final class Root: Sendable {
        /// The policy for keys nothing overrides, in a test's root and the fresh roots opened in it.
        let testPolicy: TestPolicy?
        let lock = Lock(RootState())

        init(testPolicy: TestPolicy?) { self.testPolicy = testPolicy }

        /// The test whose world this root is in, or `nil` for the process's.
        var world: TestPolicy? { testPolicy?.isProcessPolicy == false ? testPolicy : nil }

        /// The policy reads of `K`'s default follow: the root's, or for the global store, the process's.
        func policy<K: ReadOnlyInjectionKey>(for key: K.Type) -> TestPolicy? {
            testPolicy ?? (self === Store.global && !K.currentValueIsVariable ? Store.processPolicy : nil)
        }

        /// Overrides a key in the root, and empties every thread's view of the global store; `nil` for a fresh root
        /// whose scope has ended (which it checks under the lock the scope's end takes), whose world takes no writes.
        ///
        /// The key's own cached value goes too, and a build of it in progress stores nothing, its waiters reading the
        /// override: the inputs it was built from would still count for the values built on it.
        func set(_ id: ObjectIdentifier, _ box: AnyBox) -> Any? {
            lock.withLock { state in
                guard !state.hasEnded else { return nil }
                if state.building.removeValue(forKey: id) != nil { lock.broadcast() }
                let replaced = (state.overrides.set(id, box), state.cache.removeValue(forKey: id))
                return (replaced, state.wrote(id), state.dropViews()) as Any
            }
        }

        /// Drops every override and cached value; builds in progress finish, but are not stored.
        ///
        /// A fresh root whose scope has ended, which tasks of its nested scopes may still read, is left as it is:
        /// `false`.
        @discardableResult
        func clear() -> Bool {
            let dropped = lock.withLock { state -> [AnyBox]? in
                if state.hasEnded { return nil }
                defer { (state.overrides, state.cache, state.building) = (Frame(), [:], [:]) }
                (state.writes, state.cleared) = (state.writes &+ 1, state.writes &+ 1)
                lock.broadcast()
                return state.overrides.boxes + state.cache.values.map(\.box) + state.dropViews()
            }
            withExtendedLifetime(dropped) {}
            return dropped != nil
        }
    }

    /// What a root's lock guards.
    struct RootState {
        var overrides = Frame()
        /// The `.cached` values built, and the builds in progress.
        var cache: [ObjectIdentifier: Built] = [:]
        var building: [ObjectIdentifier: BuildTicket] = [:]
        /// Counts the writes, and says which key each last wrote, so that a build can tell whether an input changed.
        var writes: UInt = 0
        var written: [ObjectIdentifier: UInt] = [:]
        /// The count of writes at the last reset, which makes every value whose build began before it stale.
        var cleared: UInt = 0
        /// A fresh scope's own cell, whose overrides its builds read, and the frame it had when that scope ended.
        var owner: Cell?
        var ownerFrame = Frame()
        /// The global store's: every thread's record, whose views its writes empty, by the record's address.
        var threads: [UInt: ThreadState] = [:]

        /// Whether this is a fresh root whose scope has ended, whose world takes no more writes or resets.
        ///
        /// The scope's end takes the root's lock too, so the answer holds while the lock is held.
        var hasEnded: Bool { owner?.withLock { $0.ended } == true }

        /// Whether no write to the root since `built`'s build began, nor a reset, has changed an input it read there:
        /// one that no level overrode for it.
        func isFresh(_ built: Built) -> Bool {
            !built.inputs.indices.contains { index in
                (built.levels.isEmpty || built.levels[index] == nil)
                    && (built.rootWrites < cleared || written[built.inputs[index], default: 0] > built.rootWrites)
            }
        }

        /// Records a write of `id`, and drops the values built from it; returns them, to release after unlocking.
        mutating func wrote(_ id: ObjectIdentifier) -> [Built] {
            (writes, written[id]) = (writes &+ 1, writes &+ 1)
            return Built.drop(builtFrom: id, in: &cache)
        }

        /// Empties every thread's view of the global store; returns what they held, to release after unlocking.
        func dropViews() -> [AnyBox] {
            threads.values.flatMap { thread in
                thread.view.withLock { view in
                    defer { view = ThreadState.View() }
                    return Array(view.entries.values)
                }
            }
        }
    }

    /// What the task-local holds: the innermost scope, or a view.
    ///
    /// A struct rather than an optional, because copying a task-local optional out looks up the optional's type
    /// metadata on every read.
    @usableFromInline
    struct Binding: Sendable {
        let scope: Scope?

        @usableFromInline
        init(scope: Scope?) { self.scope = scope }
    }

    /// Where a write goes.
    enum Target {
        case cell(Cell)
        case root(Root)
        case dropped
    }

    /// The global store, and the operations every entry point starts from.
    @usableFromInline
    enum Store {
        /// The task-local binding.
        ///
        /// Declared without the `@TaskLocal` macro, whose generated storage a module whose default isolation is the
        /// main actor would isolate to it.
        @usableFromInline
        static let binding = Swift.TaskLocal(wrappedValue: Binding(scope: nil))

        /// The global store's root: overrides made outside every scope, and the process-wide `.cached` values.
        static let global = Root(testPolicy: nil)

        /// The wait graph: which thread waits for which build, and which builds are unfinished.
        static let waits = Lock(WaitGraph())

        /// The article variables' mutex, which a thread holds while it reads or assigns one through the store.
        static let variableLock = Lock(())

        /// Which variables have been read, which first reads are in progress, and what global writes replaced.
        static let variables = Lock(Variables())

        /// The keys each `.cached` key's last build read, in any root or scope, so that a scope that overrides one of
        /// them has the value built for it without the root's being built first.
        static let knownInputs = Lock([ObjectIdentifier: [ObjectIdentifier]]())

        /// Records the keys a build of `id` read; where none had been, no thread's view may hand out the global store's
        /// value built from none to every read any more, since these may lead a scope's read elsewhere.
        ///
        /// A view marks a value under the global store's lock, having checked the inputs known, so it either saw these
        /// or is unmarked here after. The view's `entries` hold the same box, so nothing is freed under the locks.
        static func learn(_ inputs: [ObjectIdentifier], for id: ObjectIdentifier) {
            let gained = knownInputs.withLock { known in
                defer { known[id] = inputs }
                return !inputs.isEmpty && known[id]?.isEmpty != false
            }
            guard gained else { return }
            global.lock.withLock { state in
                for thread in state.threads.values { thread.view.withLock { _ = $0.plain.removeValue(forKey: id) } }
            }
        }

        /// The cells' locks: 256 stripes, never destroyed.
        static let stripes = Lock((), count: 256)

        /// The policy of reads made outside every test, in a test runner's process from its first read, else set by
        /// the first test; and the strict tests running now.
        static let tests = Lock(
            (
                process: runsTests(CommandLine.arguments, { getenv($0) != nil }) ? TestPolicy() : nil,
                strict: [TestPolicy]()
            )
        )

        /// Whether a process with these arguments and environment is a test runner's, by what XCTest and Swift Testing
        /// put there: so that it reads test values from its first read, whichever of its tests run.
        static func runsTests(_ arguments: [String], _ hasVariable: (String) -> Bool) -> Bool {
            ["XCTestConfigurationFilePath", "XCTestBundlePath", "XCTestSessionIdentifier"].contains(where: hasVariable)
                || arguments.contains { argument in
                    let name = argument.split(separator: "/").last ?? ""
                    return argument == "--testing-library" || name == "xctest" || name.hasSuffix(".xctest")
                        || name == "swiftpm-testing-helper"
                }
        }

        static var processPolicy: TestPolicy? { tests.withLock { $0.process } }

        // MARK: The one decision

        /// Where an operation on this thread reads and writes, and what it makes remembers: the binding, and the
        /// snapshot a property lends to its access.
        static func place() -> (reader: Reader, lent: Snapshot?) {
            (Reader(binding.get().scope), ThreadState.current.own.context.lent?.snapshot)
        }

        /// Where a write goes: the innermost scope; in a build, the innermost running scope of the level its view
        /// shows, else its root; outside every scope, that of what a property lends; with nothing remembered, the
        /// global store.
        ///
        /// A build's view stands for the scope the build is for, as the innermost scope does in an operation: a
        /// property read there does not take the build's writes into the property's scope or world. A fresh root whose
        /// scope has ended refuses a write (`Root.set`).
        static func target(_ reader: Reader, _ lent: Snapshot?) -> (cell: Cell?, root: Root?) {
            if let cell = reader.cell { return (cell, nil) }
            guard let remembered = reader.base ?? lent else { return (nil, global) }
            return (remembered.liveLevel?.cell, remembered.endsAt)
        }

        /// The snapshot that a property, a capture or a scope made now remembers.
        static func snapshotToKeep() -> Snapshot? {
            let (scope, lent) = (binding.get().scope, ThreadState.current.own.context.lent?.snapshot)
            if lent == nil { return scope?.snapshot() }
            return Snapshot.make(Reader(scope), lent: lent)
        }

        // MARK: Scopes

        /// Opens a scope where scopes are opened now: on a captured snapshot, if any; fresh, with a root of its own.
        @usableFromInline
        static func open(fresh: Bool = false, on captured: Snapshot? = nil, policy: TestPolicy? = nil) -> Scope {
            let (around, lent) = (binding.get().scope, ThreadState.current.own.context.lent?.snapshot)
            if !fresh, captured == nil, lent == nil {
                // Where no property lends: on the scope around's own snapshot, or on the root alone.
                return Scope(base: around?.snapshot(), root: around?.endsAt ?? global)
            }
            let reader = Reader(around)
            guard fresh else {
                return Scope(base: Snapshot.make(reader, lent: captured ?? lent), root: reader.root(captured ?? lent))
            }
            // A fresh scope inside a test is still in the test; outside every test of a process that runs tests, it
            // reads test values as the global store does.
            let scope = Scope(base: nil, root: Root(testPolicy: policy ?? reader.root.testPolicy ?? processPolicy))
            scope.root!.lock.withLock { $0.owner = scope.cell }
            scope.cell!.withLock { $0.madeDerived().owns = scope.root }
            return scope
        }

        /// Opens a test's scope: fresh with `policy`, or, inside another test's scope, nested in it.
        ///
        /// The first test makes a process that no runner started one that runs tests: from then on, reads outside
        /// every test get test values.
        static func openTest(_ policy: TestPolicy) -> Scope {
            let views = global.lock.withLock { state -> [AnyBox] in
                guard tests.withLock({ $0.process == nil }) else { return [] }
                tests.withLock { $0.process = TestPolicy() }
                return state.dropViews()  // They answer `.uncached` reads without asking for the policy there now is.
            }
            withExtendedLifetime(views) {}
            return place().reader.root.world == nil ? open(fresh: true, policy: policy) : open()
        }

        /// Counts a test among the strict tests running, if it is strict, until `endTest`.
        static func beginTest(_ policy: TestPolicy) {
            if policy.strict { tests.withLock { $0.strict.append(policy) } }
        }

        static func endTest(_ policy: TestPolicy) {
            if policy.strict { tests.withLock { _ = $0.strict.remove(at: $0.strict.lastIndex { $0 === policy }!) } }
        }

        /// What a write through a property lends, so that the read half of a write through a nested path
        /// (`model.config.timeout = 10`) reads the value it changes where the write goes, not in an ended scope: nothing
        /// inside a scope; outside every scope, the snapshot from its innermost level that still runs, or once none
        /// runs, a level of its root alone.
        static func lentForWrite(_ snapshot: Snapshot) -> Snapshot? {
            if binding.get().scope != nil { return nil }
            if let live = snapshot.liveLevel { return live }
            guard let root = snapshot.endsAt else { return snapshot }  // Nowhere to write: the write is dropped.
            return Snapshot(nil, Frame(), nil, next: nil, root: root, world: snapshot.world)
        }

        /// Runs `body` with `snapshot` lent to the reads and the write it makes: a property's access.
        @inline(__always)
        static func lending<T>(_ snapshot: Snapshot, _ body: () throws -> T) rethrows -> T {
            let thread = ThreadState.current
            guard let outer = thread.own.context.lent else {
                thread.own.context.lent = Lent(snapshot)
                defer { thread.own.context.lent = nil }
                return try body()
            }
            // A read through a property inside another's, as in a factory default: the outer one's levels first.
            let both = Snapshot.make(Reader(snapshot: outer.snapshot), lent: snapshot) ?? snapshot
            thread.own.context.lent = Lent(both)
            defer { thread.own.context.lent = outer }
            return try withExtendedLifetime(both) { try body() }
        }

        // MARK: Reads

        /// Reads a key where `place()` says.
        static func value<K: ReadOnlyInjectionKey>(for key: K.Type, through accessor: String) -> K.Value {
            let thread = ThreadState.current
            // The binding's scope bound once, by the `guard`: a second binding of it, from an optional, would retain the
            // scope again, and every task in the scope reads it.
            guard let scope = binding.get().scope else {
                if thread.own.context.pending != nil || thread.own.context.lent != nil {
                    return value(for: key, on: thread, in: nil, through: accessor)
                }
                return globalValue(for: key, on: thread)
            }
            if thread.own.context.pending != nil { return value(for: key, on: thread, in: scope, through: accessor) }
            if let lent = thread.own.context.lent {
                // A property read in the scope it was made in, whose snapshot is the scope's own level on the scope's
                // base: the levels the scope's read walks, so the read is the scope's. Not in a view, whose cell may
                // have ended, emptied, where the snapshot's frozen frame still holds what the property remembers.
                guard lent.cell != nil, lent.cell == scope.cell.map(ObjectIdentifier.init),
                    lent.next == scope.base.map(ObjectIdentifier.init), scope.root != nil
                else {
                    return value(for: key, on: thread, in: scope, through: accessor)
                }
            }
            // The common scoped read, an override in the innermost scope, in line.
            if let box = scope.cell?.withLock({ $0.frame[ObjectIdentifier(key)] }) {
                return unbox(box, as: K.Value.self)
            }
            // A request's usual read, in a scope with no levels below it: of a key it does not override, that the
            // thread's view holds a plain value of, outside every build, as `read` would take it. `Store.global` is
            // loaded first, so that the scope's root is compared in place: a retain of the global store, which every
            // thread's reads would write, costs two threads more than half their reads.
            if scope.base == nil, Store.global === scope.root, let box = thread.plainBox(of: key) {
                return unbox(box, as: K.Value.self)
            }
            return read(key, Reader(scope), lent: nil, through: accessor, cellChecked: true)
        }

        /// Reads a key through a property, or in a write through a key path.
        @inline(never)
        private static func value<K: ReadOnlyInjectionKey>(
            for key: K.Type,
            on thread: ThreadState,
            in bound: Scope?,
            through accessor: String
        )
            -> K.Value
        {
            if let pending = thread.own.context.pending {
                // The getter of a write through a key path, which Swift calls before the setter: where it reads one
                // key, of the written value's type, the value being written, so that no live default is built. The
                // write's own getter gets it once; its setter reads real values.
                (pending.reads, pending.matched) = (pending.reads + 1, pending.matched && pending.type == K.Value.self)
                if !pending.probing { thread.own.context.pending = nil }
                if pending.matched { return pending.value as! K.Value }
            }
            let id = ObjectIdentifier(key)
            // Through a property read outside every scope: its first level. The lent snapshot used in place, not bound
            // to a name, which Swift would retain, and every thread reading through the property shares it.
            if bound == nil, thread.own.context.lent != nil {
                if let box = thread.own.context.lent!.snapshot.override(of: id) { return unbox(box, as: K.Value.self) }
                // A snapshot of one level that ends at the global store, and does not override a `.cached` key that the
                // thread's view holds a plain value of, outside every build: that value, as `read` would take it, with
                // no second look in the level and no reader, which would retain the global store.
                if thread.own.context.lent!.snapshot.next == nil, thread.own.context.lent!.snapshot.isGlobal,
                    let box = thread.plainBox(of: key)
                {
                    return unbox(box, as: K.Value.self)
                }
            }
            let lent = thread.own.context.lent?.snapshot
            return read(key, Reader(bound), lent: lent, through: accessor)
        }

        /// Reads a key through the levels a read walks, then from the root.
        ///
        /// A `.cached` key that nothing overrides gets the value built for the innermost level that overrides one of
        /// its inputs, built now if need be; else the root's.
        ///
        /// `cellChecked`: the caller has just looked in the reader's own cell.
        private static func read<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            _ reader: Reader,
            lent: Snapshot?,
            through accessor: String,
            cellChecked: Bool = false
        ) -> K.Value {
            let id = ObjectIdentifier(key)
            // In a `.cached` build, whose reads all come here, since it binds a view with no cell: one of its inputs,
            // unless a task the build started reads it, which inherits that view.
            let thread = ThreadState.current
            if thread.own.inputs != nil, thread.own.buildTask != ThreadState.task {
                return thread.outsideBuild {
                    read(key, reader, lent: lent, through: accessor, cellChecked: cellChecked)
                }
            }
            thread.own.inputs?.append(id)
            if let found = reader.box(for: id, lent: lent, cellChecked: cellChecked) {
                return unbox(found, as: K.Value.self)
            }
            let (root, cached) = (reader.root(lent), K.lifetime == .cached)
            // The global store's override, or its value built from no input while no build had read one, as this thread's
            // view holds it: it serves every read, since no level can override an input it does not have, with no
            // process-wide lock. A server's usual read, of a dependency its request's scope does not override.
            if cached, root === global, let box = thread.view.withLock({ $0.plain[id] }) {
                return unbox(box, as: K.Value.self)
            }
            let outerReading = thread.own.reading
            thread.own.reading = (id, accessor)
            defer { thread.own.reading = outerReading }
            guard cached else {
                func value() -> K.Value {
                    root === global ? globalValue(for: key, on: thread) : rootValue(for: key, in: root)
                }
                // A factory read through a property runs with what the property lends bound, for the tasks it starts.
                return lent == nil || K.currentValueIsVariable ? value() : thread.bindingLent(value)
            }
            return read(key, reader, lent: lent, root: root)
        }

        /// Reads a `.cached` key that no level overrides, from `root` or built for a level, where the inputs of its last
        /// build may lead.
        ///
        /// Apart from `read(_:_:lent:through:)`, whose common reads need no metadata of the types this one holds.
        @inline(never)
        private static func read<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            _ reader: Reader,
            lent: Snapshot?,
            root: Root
        ) -> K.Value {
            let thread = ThreadState.current
            let known = knownInputs.withLock { $0[ObjectIdentifier(key)] } ?? []
            // The value built for the innermost level that overrides one of `inputs`; for the binding's own read (the
            // reader is the binding's), kept in its owner's cell too. `nil` where the build read none that a level
            // overrides: the value is the root's.
            func built(from inputs: [ObjectIdentifier], evenUnkept: Bool, ran: inout Bool) -> K.Value? {
                let (base, ownCell) = (
                    Snapshot.make(reader, lent: lent), reader.counts(lent) ? nil : binding.get().scope?.owner
                )
                return build(
                    key,
                    for: base,
                    from: inputs,
                    root: root,
                    ownCell: ownCell,
                    evenUnkept: evenUnkept,
                    ran: &ran
                )
            }
            // Whether the levels that override one of `inputs` are a fresh scope's own cell alone, the root's own
            // level, whose values the root builds, one at a time; `nil` where no level overrides one.
            func rootBuilds(_ inputs: [ObjectIdentifier]) -> Bool? {
                overridingLevel(of: inputs, reader, lent).map { $0.alone && $0.level.isOwn(of: root) }
            }
            // Where the key's inputs are known from an earlier build and a level overrides one, the root's value is
            // not this reader's: it is built for that level, and the root's is not built. The inputs known are those of
            // the last build, which may have taken another branch: the build's own decide where its value goes.
            // Whether the value returned is one the store did not keep is said by the build that made it: a value the
            // read sets aside leaves the build around the read as it found it. A key the root overrides has no default
            // to follow its inputs: the override is the value.
            let unkept = thread.own.unkept
            var (looked, ran): (UInt?, Bool) = (nil, false)
            if !known.isEmpty, !root.lock.withLock({ $0.overrides[ObjectIdentifier(key)] != nil }),
                rootBuilds(known) == false, let value = built(from: known, evenUnkept: false, ran: &ran)
            {
                return value
            }
            // Whether that build ran is no matter to the loop, which counts its own.
            ran = false
            while true {
                // The outermost such read stays the trigger for the builds nested in this one.
                let outer = thread.own.trigger
                (thread.own.trigger, thread.own.unkept) = (outer ?? (reader, lent), unkept)
                let (value, inputs) = root === global ? globalEntry(for: key) : rootEntry(for: key, in: root)
                thread.own.trigger = outer
                guard !inputs.isEmpty else { return value }
                // The root's value, where the root has had no write to one of its inputs, nor a reset, since this read's own
                // build for the level read none of them that a level overrides (its default now reads other keys, behind a
                // flag that is no dependency), is the read's: looking again would find the same. Not where it only waited
                // for another thread's build, which may have read what the root held before.
                let lastWrite = root.lock.withLock { state in
                    inputs.reduce(state.cleared) { Swift.max($0, state.written[$1, default: 0]) }
                }
                if looked == lastWrite, ran { return value }
                thread.own.inputs?.append(contentsOf: inputs)
                guard rootBuilds(inputs) == false else { return value }
                thread.own.unkept = unkept
                // A second build of this read's own for the level is the read's, kept or not: the root's value, whose inputs
                // were written since the first, may have read one the level overrides, and a default that writes its own
                // input as the store builds it would have the read look again forever.
                let second = ran
                ran = false
                if let built = built(from: inputs, evenUnkept: second, ran: &ran) { return built }
                // The build for the level read none that a level overrides: what the root's value read may have
                // changed since, and the read looks again if its inputs were written.
                looked = lastWrite
            }
        }

        /// The innermost level a read walks that overrides one of `inputs`: where a value built from them is kept, its
        /// cell, or the innermost cell above it where that level is dead, with the frame it showed; and whether it is
        /// the only level that overrides one.
        private static func overridingLevel(
            of inputs: [ObjectIdentifier],
            _ reader: Reader,
            _ lent: Snapshot?
        ) -> (level: Level, alone: Bool)? {
            var (level, holder, alone): (Level?, Level?, Bool) = (nil, nil, true)
            reader.walk(lent) { cell, frozen, version, keeper in
                if level != nil {
                    alone = !inputs.contains { Snapshot.box(for: $0, in: cell, frozen) != nil }
                    return !alone
                }
                let live = cell?.withLock { $0.ended ? nil : ($0.frame, $0.version) }
                let here = (cell ?? keeper).map {
                    Level(cell: $0, version: live?.1 ?? version, live: live != nil, frame: live?.0 ?? frozen)
                }
                guard inputs.contains(where: { (live?.0 ?? frozen)[$0] != nil }) else {
                    holder = here ?? holder
                    return false
                }
                level = here ?? holder ?? Level(cell: nil, version: nil, live: false, frame: frozen)
                return false
            }
            return level.map { ($0, alone) }
        }

        /// A level a value built for a scope is kept in: its cell (`nil` for none), the version and frame it showed,
        /// and whether it was live.
        struct Level {
            let cell: Cell?
            let version: UInt?
            let live: Bool
            let frame: Frame

            /// Whether this is a fresh scope's own cell, whose values `root` builds, one at a time, and keeps there.
            func isOwn(of root: Root) -> Bool { cell?.withLock { $0.derived?.owns } === root }
        }

        /// Reads a `.cached` key from the global store, with the keys it was built from.
        private static func globalEntry<K: ReadOnlyInjectionKey>(for key: K.Type) -> Entry<K.Value> {
            let id = ObjectIdentifier(key)
            let entry = ThreadState.current.view.withLock { view in view.entries[id].map { ($0, view.inputs[id]) } }
            guard let entry else { return rootEntry(for: key, in: global) }
            return (unbox(entry.0, as: K.Value.self), entry.1 ?? [])
        }

        /// Reads a key from the global store, through the thread's view of it.
        private static func globalValue<K: ReadOnlyInjectionKey>(for key: K.Type, on thread: ThreadState) -> K.Value {
            let (id, uncached) = (ObjectIdentifier(key), K.lifetime == .uncached)
            let (evaluates, box) = thread.view.withLock {
                $0.evaluatesUncached && uncached ? (true, nil) : (false, $0.entries[id])
            }
            if evaluates { return thread.evaluate(key) }
            guard let box else {
                // An `.uncached` key the view says evaluates, though the global store overrides others.
                if uncached, thread.view.withLock({ $0.evaluated.contains(id) }) { return thread.evaluate(key) }
                return rootValue(for: key, in: global)
            }
            return unbox(box, as: K.Value.self)
        }

        /// What a view holds for an `.uncached` key that nothing overrides, in a process that runs no tests.
        static let evaluate = Box(0)

        /// Reads a key from a root: its override, or else its default per its lifetime, which a `.cached` key builds
        /// once: the first reader builds it, and others wait for it.
        static func rootValue<K: ReadOnlyInjectionKey>(for key: K.Type, in root: Root) -> K.Value {
            rootEntry(for: key, in: root).value
        }

        /// The same, with the keys a `.cached` value was built from, and the cell it is kept in, if not the root.
        ///
        /// A value built from an override of the fresh scope's own cell is kept in that cell, which a write to the
        /// input empties of it; a value whose input was written while it was built is not kept.
        private static func rootEntry<K: ReadOnlyInjectionKey>(for key: K.Type, in root: Root) -> Entry<K.Value> {
            let (id, thread, isGlobal, lifetime) = (
                ObjectIdentifier(key), ThreadState.current, root === global, K.lifetime
            )
            while true {
                let (found, ticket, start, replaced) = root.lock.withLock {
                    state -> (Built?, BuildTicket?, (writes: UInt, owner: (UInt, Frame)?)?, [Built]) in
                    if let found = state.overrides[id].map({ Built(box: $0, inputs: []) }) ?? state.cache[id] {
                        if isGlobal {
                            thread.remember(Box(unbox(found.box, as: K.Value.self)), for: id, found.inputs, in: state)
                        }
                        return (found, nil, nil, [])
                    }
                    // Built from the fresh scope's own overrides, and kept in its cell: what the cell holds now. The
                    // scope's own while it serves; else one another read kept, which becomes the scope's own, so that
                    // a value kept after it does not replace it.
                    let owned = state.owner?.withLock { owner -> (Built, [Built])? in
                        guard !owner.ended, let derived = owner.derived,
                            let chosen = derived.preferred(
                                id,
                                where: {
                                    state.isFresh($0)
                                        && $0.sawTheSame($0.inputs, $0.inputs.map { owner.frame[$0] }, at: root)
                                }
                            )
                        else { return nil }
                        return (chosen, derived.adopt(chosen, for: id))
                    }
                    if let owned { return (owned.0, nil, nil, owned.1) }
                    if lifetime == .uncached {
                        if isGlobal, processPolicy == nil { thread.remember(evaluate, for: id, [], in: state) }
                        return (nil, nil, nil, [])
                    }
                    if let ticket = state.building[id] { return (nil, ticket, nil, []) }
                    state.building[id] = BuildTicket(key: key, builder: thread)
                    let owner = state.owner?.withLock { ($0.version, $0.frame) }
                    return (nil, state.building[id], (state.writes, owner), [])
                }
                thread.releasing(consume replaced)
                if let found { return (unbox(found.box, as: K.Value.self), found.inputs) }
                guard let ticket else { return (defaultValue(for: key, in: root), []) }
                guard let start else {
                    thread.wait(for: ticket, on: root.lock) { $0.building[id] !== ticket }
                    continue
                }
                let (value, read, unkept) = build(key, in: root)
                ticket.finish()
                // Whether the value is kept; if not, the build around this one keeps nothing either, since its value
                // holds this one.
                let (inputs, dropped, other, kept) = root.lock.withLock {
                    state -> ([ObjectIdentifier], [Built], Built?, Bool) in
                    root.lock.broadcast()
                    var seen = Swift.Set<ObjectIdentifier>()
                    let inputs = (read + read.flatMap { state.cache[$0]?.inputs ?? [] }).filter {
                        seen.insert($0).inserted
                    }
                    // A reset that dropped the build while it ran, or a write to an input, leaves the cache as it is:
                    // the caller alone gets it.
                    guard state.building[id] === ticket else { return (inputs, [], nil, false) }
                    state.building[id] = nil
                    guard !unkept, !inputs.contains(where: { state.written[$0, default: 0] > start.writes }) else {
                        return (inputs, [], nil, false)
                    }
                    var built = Built(box: Box(value), inputs: inputs, rootWrites: start.writes)
                    guard let owner = state.owner,
                        inputs.contains(where: { state.ownerFrame[$0] != nil })
                            || owner.withLock({ owner in inputs.contains { owner.frame[$0] != nil } })
                    else {
                        state.cache[id] = built
                        return (inputs, [], nil, true)
                    }
                    return owner.withLock { owner in
                        // A write to the cell since the build began leaves it as fresh, unless it wrote an input.
                        guard !owner.ended,
                            let (version, frame) = start.owner,
                            owner.version == version || inputs.allSatisfy({ owner.frame[$0] === frame[$0] })
                        else { return (inputs, [], nil, false) }
                        (built.levels, built.root, built.own) = (inputs.map { owner.frame[$0] }, root, true)
                        let derived = owner.madeDerived()
                        // What a read that saw the same kept in the cell meanwhile wins, as the scope's own, so that
                        // the scope's reads get one instance.
                        guard
                            let other = derived.preferred(id, where: { $0.sawTheSame(as: built) && state.isFresh($0) })
                        else { return (inputs, derived.keep(built, for: id), nil, true) }
                        return (inputs, derived.adopt(other, for: id), other, true)
                    }
                }
                if !kept { thread.own.unkept = true }
                thread.releasing(consume dropped)
                learn(inputs, for: id)
                return (other.map { unbox($0.box, as: K.Value.self) } ?? value, inputs)
            }
        }

        /// A value and the keys it was built from.
        typealias Entry<Value> = (value: Value, inputs: [ObjectIdentifier])

        /// Evaluates a `.cached` key's default for the root that keeps it, with a view of the root bound.
        ///
        /// It reads and writes in the root's own world (a fresh scope's own cell, while it runs, and its root), never
        /// in a nested scope, so that no override of one is baked into an instance every scope shares; and what it
        /// makes, captures or starts holds the root as weakly as a snapshot does.
        private static func build<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            in root: Root
        ) -> (K.Value, [ObjectIdentifier], unkept: Bool) {
            // A view of the fresh scope's own cell, as a level: live while the scope runs, and after, as it was when
            // the build began, or as it was when it ended. Taken under the root's lock, which the scope's end takes too,
            // so that the build sees either the running cell or the frame it left.
            let base = root.lock.withLock { state -> Snapshot? in
                if let level = state.owner.map({ Snapshot($0, next: nil, root: root, world: root.world) }),
                    level.cell != nil
                {
                    return level
                }
                // A level even when empty: it is what sends the build's writes to its root, never the global store.
                return Snapshot(nil, state.ownerFrame, nil, next: nil, root: root, world: root.world)
            }
            // The global store's build binds a view of no scope, so that its reads take the path that records them.
            let view = Scope(viewOf: nil, base: root === global ? nil : base, root: root)
            return ThreadState.current.recordingInputs(keepingUpdate: true, binding: Binding(scope: view)) {
                defaultValue(for: key, in: root)
            }
        }

        /// Builds a `.cached` key's default for a read whose innermost level that overrides one of `known` (the inputs
        /// of its last build) is a scope's, and keeps it where the inputs it reads say; `nil` where it reads none that a
        /// level overrides, whose value is the root's.
        ///
        /// `base` shows the levels the read walks, and is where the levels come from: dead ones merged, as the values
        /// built for them are kept. The value is kept in the innermost level that overrides one of its inputs: while
        /// the scope runs, unless an input has changed since; once it has ended, for the objects that remember the
        /// cell. A value kept there serves a later read only if that read sees what this one saw: the same override of
        /// each input, and the same root.
        private static func build<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            for base: Snapshot?,
            from known: [ObjectIdentifier],
            root: Root,
            ownCell: Cell?,
            evenUnkept: Bool,
            ran: inout Bool
        ) -> K.Value? {
            let (id, thread, levels) = (ObjectIdentifier(key), ThreadState.current, base.map { Reader(snapshot: $0) })
            // What the read sees of `inputs` in its levels, which takes their cells' locks: never under the cell's.
            func seen(_ inputs: [ObjectIdentifier]) -> [AnyBox?] { inputs.map { levels?.box(for: $0, lent: nil) } }
            // A value is stale if the root has had a write to an input since its build.
            func serves(_ built: Built) -> Bool {
                built.sawTheSame(built.inputs, seen(built.inputs), at: root)
                    && (built.root == nil || root.lock.withLock { $0.isFresh(built) })
            }
            // A value taken from another build adds its inputs to the build around this read.
            func taken(_ built: Built) -> K.Value {
                thread.own.inputs?.append(contentsOf: built.inputs)
                return unbox(built.box, as: K.Value.self)
            }
            // The value the reading scope's own reads get: one its cell keeps as its own, which other reads cannot push
            // out, wherever else the value is kept, while it serves them; else `value`, kept so. It replaces one that
            // no longer serves, checked outside the lock, only if no other read has replaced that one since: a read
            // that found or built its value before a write must not push out the instance a read made since from the
            // write, and two reads that each found or built one get the same.
            func pin(_ value: Built) -> Built {
                guard let ownCell else { return value }
                while true {
                    let current = ownCell.withLock { $0.derived?.built[id]?.first { $0.own } }
                    if let current, current.box === value.box || serves(current) { return current }
                    guard serves(value) else { return value }
                    var own = value
                    own.own = true
                    let dropped = ownCell.withLock { state -> [Built]? in
                        guard state.derived?.built[id]?.first(where: { $0.own })?.box === current?.box else {
                            return nil
                        }
                        return state.ended ? [] : state.madeDerived().keep(own, for: id)
                    }
                    guard let dropped else { continue }
                    thread.releasing(consume dropped)
                    return value
                }
            }
            // Whether the cell may keep a value built from `inputs` now.
            func keeps(_ state: CellState, in level: Level, _ inputs: [ObjectIdentifier]) -> Bool {
                guard !state.ended else { return !level.live }
                return level.live
                    && (state.version == level.version || inputs.allSatisfy { state.frame[$0] === level.frame[$0] })
            }
            var known = known
            while true {
                guard let level = levels.flatMap({ overridingLevel(of: known, $0, nil)?.level }) else { return nil }
                // Every value kept for the key in the levels the read walks, innermost first, newest first: one may be
                // kept where the inputs of another build, known now, do not lead.
                let kept = (base?.levels.compactMap { $0.cell ?? $0.keeper } ?? []).flatMap { cell in
                    (cell.withLock { $0.derived?.built[id] } ?? []).reversed().map { (cell: cell, built: $0) }
                }
                if let (cell, found) = kept.first(where: { serves($0.built) }) {
                    // Built first for another read that saw the same, or kept elsewhere: now the scope's own too.
                    return taken(cell === ownCell && found.own ? found : pin(found))
                }
                let newest = kept.first { $0.cell === level.cell }?.built.box
                // One build at a time for the cell, as for a root: others wait for it, then look again.
                let (ticket, building, changed) =
                    level.cell?.withLock { state -> (BuildTicket?, Bool, Bool) in
                        guard state.ended == !level.live else { return (nil, false, false) }
                        let derived = state.madeDerived()
                        if derived.built[id]?.last?.box !== newest { return (nil, false, true) }
                        if let ticket = derived.building[id] { return (ticket, false, false) }
                        derived.building[id] = BuildTicket(key: K.self, builder: thread)
                        return (derived.building[id], true, false)
                    } ?? (nil, false, false)
                if changed { continue }
                if let ticket, !building {
                    thread.wait(for: ticket, on: level.cell!) { $0.derived?.building[id] !== ticket }
                    // The build waited for may have read other inputs than those known, which lead elsewhere now.
                    known = level.cell!.withLock { $0.derived?.read[id] } ?? known
                    continue
                }
                let rootWrites = root.lock.withLock { $0.writes }
                let view = Scope(viewOf: nil, base: base, root: root, builtFor: ownCell)
                ran = true
                let (value, inputs, unkept) = thread.recordingInputs(
                    keepingUpdate: true,
                    binding: Binding(scope: view)
                ) {
                    defaultValue(for: K.self, in: root)
                }
                ticket?.finish()
                learn(inputs, for: id)
                var built = Built(
                    box: Box(value),
                    inputs: inputs,
                    rootWrites: rootWrites,
                    levels: seen(inputs),
                    root: root,
                    own: false
                )
                // The levels as the read found them, frozen when `base` was made, before the build: a write to an input
                // in one of them since leaves a value the build may have made from the old override, which is not kept.
                // A value it got that the store did not keep makes this one unkept too, and so the build around it.
                let unchanged =
                    !unkept
                    && zip(inputs, built.levels).allSatisfy { input, now in
                        base?.levels.lazy.compactMap { $0.frozen[input] }.first === now
                    }
                if !unchanged { thread.own.unkept = true }
                // Lets the reads waiting for this build look again, and where the build still holds its ticket (no reset
                // dropped it), runs `then` in the same step, so that they find what it keeps.
                func release(
                    then: (inout CellState) -> (Built?, [Built]) = { _ in (nil, []) }
                ) -> (Built?, [Built]) {
                    level.cell?.withLock { state in
                        level.cell!.broadcast()
                        guard let ticket, let derived = state.derived, derived.building[id] === ticket else {
                            return (nil, [])
                        }
                        (derived.building[id], derived.read[id]) = (nil, inputs)
                        return then(&state)
                    } ?? (nil, [])
                }
                // Kept where its inputs say: the innermost level that overrides one, which the inputs known before the
                // build may have missed; where none does, the value is the root's, which the root builds, in its world.
                guard let home = levels.flatMap({ overridingLevel(of: inputs, $0, nil)?.level }) else {
                    _ = release()
                    // Asked for (`evenUnkept`), the value, which the store does not keep, is still the read's.
                    if evenUnkept { thread.own.unkept = true }
                    return evenUnkept ? value : nil
                }
                built.own = home.cell != nil && home.cell === ownCell && home.live
                // The root's count of writes at its last write to an input or reset: a value whose build began at or
                // after it is as fresh as this one, whatever else the root has had written since.
                let lastWrite = root.lock.withLock { state in
                    inputs.reduce(state.cleared) { Swift.max($0, state.written[$1, default: 0]) }
                }
                // What another read kept in the cell meanwhile, for a read that saw the same, wins: the scope's own
                // first.
                func keep(_ state: inout CellState) -> (Built?, [Built]) {
                    guard unchanged, keeps(state, in: home, inputs) else { return (nil, []) }
                    let derived = state.madeDerived()
                    if let other = derived.preferred(
                        id,
                        where: { $0.sawTheSame(as: built) && $0.rootWrites >= lastWrite }
                    ) {
                        return (other, [])
                    }
                    return (nil, derived.keep(built, for: id))
                }
                var (other, dropped): (Built?, [Built]) = (nil, [])
                if home.cell === level.cell {
                    (other, dropped) = release(then: keep)
                } else {
                    // Kept where it lives before the ticket is released, so that a read waiting for it finds it there.
                    if ticket != nil { (other, dropped) = home.cell?.withLock { keep(&$0) } ?? (nil, []) }
                    _ = release()
                }
                thread.releasing(consume dropped)
                let chosen = unchanged && !built.own ? pin(other ?? built) : other ?? built
                return chosen.box === built.box ? value : taken(chosen)
            }
        }

        /// Evaluates a key's default: its `currentValue`, or in a test, its test value if it declares one.
        ///
        /// A strict test reports, once per key, a key that has none.
        private static func defaultValue<K: ReadOnlyInjectionKey>(for key: K.Type, in root: Root) -> K.Value {
            let thread = ThreadState.current
            // A root's build for a scope's read, of a key that scope overrides: the scope gets a value of its own, but
            // the root's is built from the live default, which an app hears of, and a test does not report.
            let scopeOverrides = thread.own.trigger.map {
                $0.reader.box(for: ObjectIdentifier(key), lent: $0.lent) != nil
            }
            guard let policy = root.policy(for: key) else {
                if scopeOverrides == true { warn(firstBuildMessage(of: thread.own.stack.first ?? key, reading: key)) }
                return thread.evaluate(key)
            }
            if let testKey = key as? any TestValueKey.Type {
                func testValue<T: TestValueKey>(_ key: T.Type) -> Any { thread.evaluating(key) { T.testValue } }
                return testValue(testKey) as! K.Value
            }
            if scopeOverrides == true {
                thread.own.unkept = true
                return thread.evaluate(key)
            }
            let accessor = thread.own.reading.flatMap { $0.key == ObjectIdentifier(key) ? $0.accessor : nil }
            policy.report(missing: key, of: K.Value.self, in: thread.own.context, through: accessor)
            return thread.evaluate(key)
        }

        // MARK: Writes

        /// Overrides a key where `target` says; in the global store, an `InjectionKey`'s variable is assigned.
        ///
        /// `box` is a `Box` of `value`, made by the caller.
        @usableFromInline
        static func override<K: ReadOnlyInjectionKey>(_ key: K.Type, with value: K.Value, in box: AnyBox) {
            let (id, thread, scope) = (ObjectIdentifier(key), ThreadState.current, binding.get().scope)
            thread.own.context.pending = nil  // The first write of a write through a key path ends its read half.
            var (cell, root) = scope?.cell.map { ($0, nil) } ?? target(Reader(scope), thread.own.context.lent?.snapshot)
            while let chosen = cell {
                let (wrote, replaced, stale, owns) = chosen.withLock { state -> (Bool, AnyBox?, [Built], Root?) in
                    guard !state.ended else { return (false, nil, [], nil) }
                    let (replaced, stale) = state.set(id, box)
                    return (true, replaced, stale, state.derived?.owns)
                }
                // A scope's first write of a key, as an update closure's, replaces nothing, and skips the release.
                // Consumed, so that `releasing` drops the last references, in its empty context.
                if replaced != nil || !stale.isEmpty { thread.releasing((consume replaced, consume stale)) }
                // A fresh scope's own cell is part of its root's world: the root's values built from the key go too.
                if let owns { thread.releasing(owns.lock.withLock { $0.wrote(id) }) }
                if wrote { return }
                // The scope ended since it was chosen: the write goes where it would go now. A view's own cell (a task
                // an update closure started, after the scope ended) has nowhere else.
                guard root != nil else { return warn(droppedWriteMessage(for: key)) }
                (cell, root) = target(Reader(scope), thread.own.context.lent?.snapshot)
            }
            if let root, root !== global || !K.currentValueIsVariable {
                guard let replaced = root.set(id, box) else { return warn(droppedWriteMessage(for: key)) }
                thread.releasing(consume replaced)
            } else if root != nil {
                let settable = key as! any InjectionKey.Type
                thread.releasing(assign(value, to: settable))
            } else {
                warn(droppedWriteMessage(for: key))
            }
        }

        /// Runs `write`, a write of `value` through a key path, whose reads' reports name the path.
        ///
        /// Swift calls the accessor's getter before its setter: `probe`, the getter alone, tells whether it reads
        /// exactly one key, of the written type, as a plain accessor does; if so, and `path` is that one accessor, the
        /// getter's read during `write` gets `value` back, and builds no default.
        static func writingThroughKeyPath<T>(_ value: T, _ path: AnyKeyPath, probe: () -> Void, _ write: () -> Void) {
            let (thread, pending) = (ThreadState.current, Pending(value))
            let outer = thread.own.context
            (thread.own.context.writing, thread.own.context.pending) = (path, pending)
            defer { thread.own.context = outer }
            probe()
            let plain = pending.reads == 1 && pending.matched && names(oneAccessor: path)
            thread.own.context.pending = plain ? Pending(value, probing: false) : nil
            write()
        }

        /// Whether a key path is one accessor with nothing after it, judged by its description.
        ///
        /// That reads `\InjectedValues.api`, or where Swift cannot name it, `\InjectedValues.<computed 0x… (API)>`. A
        /// part after the accessor (a property of the dependency) is written on the value that the getter returns, so
        /// the getter must return the real one.
        static func names(oneAccessor path: AnyKeyPath) -> Bool {
            var (depth, parts, previous) = (0, 0, Character(" "))
            for character in path.debugDescription {
                switch character {
                case "<", "(", "[": depth += 1
                case ">" where previous != "-", ")", "]": depth -= 1
                case "." where depth == 0: parts += 1
                default: break
                }
                previous = character
            }
            return parts == 1
        }

        /// Assigns an `InjectionKey`'s variable for a global write, holding the variables mutex, and drops what was
        /// built from the value it replaced.
        private static func assign<K: InjectionKey, V>(_ value: V, to key: K.Type) -> Any {
            let (id, thread) = (ObjectIdentifier(key), ThreadState.current)
            if thread.own.heldVariables == 0, !thread.own.readVariables.contains(id) { firstRead(key, on: thread) }
            let replaced = thread.holdingVariables { () -> K.Value in
                let old = K.currentValue
                variables.withLock { state in
                    guard state.originals[id] == nil else { return }
                    state.originals[id] = {
                        defer { K.currentValue = old }
                        return K.currentValue
                    }
                }
                K.currentValue = value as! K.Value
                return old
            }
            let dropped = global.lock.withLock { state in
                // A build in progress read the value this write replaced: it stores nothing, and waiters read again.
                if K.lifetime == .cached { (state.building[id], _) = (nil, global.lock.broadcast()) }
                return (
                    K.lifetime == .cached ? state.cache.removeValue(forKey: id) : nil, state.wrote(id),
                    state.dropViews()
                )
            }
            return (replaced, dropped)
        }

        /// Drops every override of the innermost scope (and of a fresh scope's root), or of the global store.
        static func reset() {
            let (reader, lent) = place()
            let (cell, root) = target(reader, lent)
            if let cell {
                let dropped = cell.withLock { state in
                    defer {
                        (state.frame, state.version) = (Frame(), state.version &+ 1)
                        state.derived?.built = [:]
                    }
                    return (state.frame, state.derived?.built)
                }
                if reader.root.lock.withLock({ $0.owner }) === cell { reader.root.clear() }
                withExtendedLifetime(dropped) {}
            } else if root === global {
                // Taken and assigned back holding the mutex, so that no global write records an original between.
                let restored = ThreadState.current.holdingVariables {
                    variables.withLock { state in
                        defer { state.originals = [:] }
                        return Array(state.originals.values)
                    }.map { $0() }
                }
                withExtendedLifetime(restored) {}
                global.clear()
            } else if root?.clear() == false {
                warn(droppedResetMessage)
            }
        }

        // MARK: Article variables

        /// Reads an `InjectionKey`'s variable holding the variables mutex.
        static func readVariable<K: ReadOnlyInjectionKey>(_ key: K.Type) -> K.Value {
            let thread = ThreadState.current
            guard thread.own.heldVariables == 0 else { return K.currentValue }
            guard thread.own.readVariables.contains(ObjectIdentifier(key)) else { return firstRead(key, on: thread) }
            return thread.holdingVariables { K.currentValue }
        }

        /// Reads a variable this thread has not read before.
        ///
        /// Its first read anywhere, which may run its initializer, holds no lock and runs outside every scope; other
        /// threads wait for it in the wait graph, as for a build.
        @inline(never)
        @discardableResult
        static func firstRead<K: ReadOnlyInjectionKey>(_ key: K.Type, on thread: ThreadState) -> K.Value {
            let id = ObjectIdentifier(key)
            while true {
                let (ticket, reading) = variables.withLock { state -> (BuildTicket?, Bool) in
                    if state.initialized.contains(id) { return (nil, false) }
                    if let ticket = state.firstReads[id] { return (ticket, false) }
                    state.firstReads[id] = BuildTicket(key: key, builder: thread, isFirstRead: true)
                    return (state.firstReads[id], true)
                }
                if let ticket, !reading {
                    // The variable's own initializer writing it closes a cycle on this thread.
                    if ticket.builder == ObjectIdentifier(thread) { dependencyCycle(thread.cycle(closingAt: key)) }
                    thread.wait(for: ticket, on: variables) { $0.firstReads[id] !== ticket }
                    continue
                }
                guard let ticket else {
                    thread.own.readVariables.append(id)
                    return thread.holdingVariables { K.currentValue }
                }
                let value = thread.isolated(binding: Binding(scope: nil)) { K.currentValue }
                (_, _) = (ticket.finish(), thread.own.readVariables.append(id))
                variables.withLock { state in
                    (state.firstReads[id], _) = (nil, state.initialized.insert(id))
                    variables.broadcast()
                }
                return value
            }
        }
    }

    // MARK: - Threads

    /// What a property lends, and what kind of operation runs, on a thread: set by a synchronous entry point for its
    /// own length, then restored.
    ///
    /// An operation, a `.cached` build and a variable's initializer start from a context of their own, keeping only
    /// `writing`, so nothing set for one operation reaches a nested one.
    struct Context {
        /// What a property lends to the reads and the write its access makes.
        var lent: Lent?
        /// In a write through a key path, until its first write: the value written.
        var pending: Pending?
        /// The key path a write goes through, for the whole write and what it evaluates, which a strict test's report
        /// names: its reads build live defaults only where the path is nested or the accessor derived.
        var writing: AnyKeyPath?
        /// Whether an update closure reads, which a strict test's report says.
        var inUpdate = false
    }

    /// A snapshot a property lends to its access, with the identities of its first level's cell and the level after, so
    /// that a read can tell whether it is its scope's own by comparing them, without a reference count written: every
    /// thread that reads through the property shares the snapshot.
    ///
    /// The identities are of objects the snapshot holds, and the scope compared with holds its own, so equal ones are
    /// the same object.
    struct Lent {
        /// `unowned(unsafe)`: `Store.lending` lends it for the length of a call, in which the property (or a local)
        /// holds it strongly, and restores the previous one before either lets go.
        unowned(unsafe) let snapshot: Snapshot
        let cell: ObjectIdentifier?
        let next: ObjectIdentifier?

        init(_ snapshot: Snapshot) {
            (self.snapshot, cell, next) = (
                snapshot, snapshot.cell.map(ObjectIdentifier.init), snapshot.next.map(ObjectIdentifier.init)
            )
        }
    }

    /// The value a write through a key path writes, which its read half reads back; a class, so that a context
    /// without one is a single `nil` pointer to test.
    final class Pending {
        let type: Any.Type
        let value: Any
        /// Whether the getter runs alone, to count how many keys it reads, and whether each was of the written type.
        let probing: Bool
        var reads = 0
        var matched = true

        init<T>(_ value: T, probing: Bool = true) { (type, self.value, self.probing) = (T.self, value, probing) }
    }

    /// A thread's record: its context and stack of defaults, which only it touches, and its view of the global store.
    ///
    /// A read writes the record's reference count, and reads the fields declared first, so the record starts a cache
    /// line of its own (`startingALine`) and ends with 128 bytes that nothing reads: no line a read touches holds
    /// another allocation, which another thread might write, and the line would bounce between their cores.
    final class ThreadState {
        /// What the global store holds for the keys this thread has read there, each in a box of its own, so that
        /// reading it writes no reference count another thread's reads write too.
        ///
        /// Writes to the store empty it, holding the global store's lock.
        let view = Lock(View())
        /// What only the thread whose record this is reads and writes.
        ///
        /// `@exclusivity(unchecked)`: only that thread touches `own`, and no access to it spans a call that reaches it
        /// again, so the runtime's exclusivity checks, a large part of a read's cost, are skipped.
        @exclusivity(unchecked) var own = Own()
        private let spacing = SIMD16<UInt64>()

        struct View {
            var entries: [ObjectIdentifier: AnyBox] = [:]
            /// The keys each `.cached` value among them was built from.
            var inputs: [ObjectIdentifier: [ObjectIdentifier]] = [:]
            /// Those among them that every read may take here, in a scope too.
            ///
            /// Each is overridden in the store, or was built from no input while no build anywhere had read one. A build
            /// that first reads some removes its key.
            var plain: [ObjectIdentifier: AnyBox] = [:]
            /// Whether every `.uncached` key evaluates its default: the global store overrides none, and no test runs.
            var evaluatesUncached = false
            /// The `.uncached` keys that evaluate their defaults, where the global store overrides others.
            var evaluated = Swift.Set<ObjectIdentifier>()
        }

        struct Own {
            var context = Context()
            /// The keys whose defaults this thread is evaluating, outermost first.
            var stack: [Any.Type] = []
            /// How deep this thread holds the variables mutex: a variable's accessor may read or assign another.
            var heldVariables = 0
            /// The variables whose first read has returned, as far as this thread knows: a list, since a program has
            /// few, and comparing a few identifiers costs less than hashing one.
            var readVariables: [ObjectIdentifier] = []
            /// The keys the innermost `.cached` build on this thread has read so far, and the task it runs in (`nil`
            /// outside every task): a read on this thread in another task is not the build's.
            var inputs: [ObjectIdentifier]?
            var buildTask: AnyHashable?
            /// While a root builds a value a scope's read needs, that read: a key it overrides is not reported.
            var trigger: (reader: Reader, lent: Snapshot?)?
            /// Whether the innermost build got a value the store did not keep (built from a live default no report
            /// named, as when a root's build skips a report for `trigger`, or from an input written meanwhile), so
            /// that its own value, which may hold that one, is not kept either.
            var unkept = false
            /// While a read looks past the scopes, its key and the accessor Swift says it was made in, which a report on
            /// that key names.
            var reading: (key: ObjectIdentifier, accessor: String)?
        }

        /// The task that runs on this thread now, `nil` outside every task, as a value that only compares equal to the
        /// same task.
        ///
        /// `withUnsafeCurrentTask`: the reference is kept only to compare with, never used to reach the task. It is
        /// compared while the build that keeps it runs in that task, which therefore cannot end and leave its address
        /// to another, and `recordingInputs` drops it when the build returns.
        static var task: AnyHashable? { withUnsafeCurrentTask { $0.map(AnyHashable.init) } }

        /// This thread's record, made on first use and released when the thread exits.
        @inline(__always)
        static var current: ThreadState {
            guard let slot = pthread_getspecific(threadKey) else { return makeCurrent() }
            // `Unmanaged`: the global store's `threads` holds the record from `makeCurrent()` until the key's destructor
            // removes it when the thread exits, and only this thread reads its slot, so the record outlives every use.
            return Unmanaged<ThreadState>.fromOpaque(slot).takeUnretainedValue()
        }

        @inline(never)
        private static func makeCurrent() -> ThreadState {
            let state = startingALine(ThreadState.init)
            Store.global.lock.withLock { $0.threads[UInt(bitPattern: ObjectIdentifier(state))] = state }
            pthread_setspecific(threadKey, Unmanaged.passUnretained(state).toOpaque())
            return state
        }

        /// Makes an object with `make` that starts a 128-byte cache line, if one of 64 tries does, else the last.
        ///
        /// Swift aligns no object to more than 16 bytes: this makes another after an allocation that moves the next
        /// address, and frees the others when it returns.
        static func startingALine<T: AnyObject>(_ make: () -> T) -> T {
            var (made, others) = (make(), [Any]())
            while UInt(bitPattern: ObjectIdentifier(made)) % 128 != 0, others.count < 126 {
                others += [made, [UInt8](repeating: 0, count: 8 * others.count)]
                made = make()
            }
            return made
        }

        /// The thread-specific data key under which each thread keeps its record.
        private static let threadKey: pthread_key_t = {
            var key = pthread_key_t()
            let status = pthread_key_create(&key) { slot in
                let state = Store.global.lock.withLock { $0.threads.removeValue(forKey: UInt(bitPattern: slot)) }
                withExtendedLifetime(state) {}
            }
            precondition(status == 0, "InjectedValues: pthread_key_create failed with \(status)")
            return key
        }()

        /// Records what the global store holds for a key in this thread's view; called holding the store's lock.
        func remember(_ box: AnyBox, for id: ObjectIdentifier, _ inputs: [ObjectIdentifier], in state: RootState) {
            let evaluates = box === Store.evaluate
            let plain =
                !evaluates && inputs.isEmpty
                && (state.overrides[id] != nil || Store.knownInputs.withLock { $0[id]?.isEmpty ?? true })
            let replaced = view.withLock { view in
                // Every `.uncached` key evaluates while the global store overrides none; else only this one.
                if evaluates, state.overrides.isEmpty {
                    view.evaluatesUncached = true
                } else if evaluates {
                    view.evaluated.insert(id)
                }
                if !inputs.isEmpty { view.inputs[id] = inputs }
                if plain { view.plain[id] = box }
                return evaluates ? nil : view.entries.updateValue(box, forKey: id)
            }
            withExtendedLifetime(replaced) {}
        }

        /// The global store's value of a `.cached` key that the view marks for every read (`plain`), for a read outside
        /// every build that ends at the global store with no level overriding the key: what `read` takes there, for the
        /// fast paths that skip its walk.
        @inline(__always)
        func plainBox<K: ReadOnlyInjectionKey>(of key: K.Type) -> AnyBox? {
            guard K.lifetime == .cached, own.inputs == nil else { return nil }
            return view.withLock { $0.plain[ObjectIdentifier(key)] }
        }

        /// Runs `body` (an operation, a `.cached` build, or a variable's initializer) in a context of its own, with
        /// `binding` bound if given.
        func isolated<T>(keepingUpdate: Bool = false, binding: Binding? = nil, _ body: () throws -> T) rethrows -> T {
            let outer = own.context
            own.context = Context()
            (own.context.writing, own.context.inUpdate) = (outer.writing, keepingUpdate && outer.inUpdate)
            defer { own.context = outer }
            guard let binding, binding.scope != nil || Store.binding.get().scope != nil else { return try body() }
            return try Store.binding.withValue(binding, operation: body)
        }

        /// Runs `body`, a `.cached` build, as `isolated` does, and returns what it made, the keys it read (each once;
        /// a build around it read them too), and whether it got a value the store did not keep (`unkept`, which the
        /// build around it finds as it left it).
        func recordingInputs<T>(
            keepingUpdate: Bool,
            binding: Binding,
            _ body: () -> T
        ) -> (T, [ObjectIdentifier], unkept: Bool) {
            let (outer, outerUnkept, outerTask) = (own.inputs, own.unkept, own.buildTask)
            (own.inputs, own.unkept, own.buildTask) = ([], false, ThreadState.task)
            let value = isolated(keepingUpdate: keepingUpdate, binding: binding, body)
            var once = Swift.Set<ObjectIdentifier>()
            let (inputs, unkept) = ((own.inputs ?? []).filter { once.insert($0).inserted }, own.unkept)
            (own.inputs, own.unkept, own.buildTask) = (outer.map { $0 + inputs }, outerUnkept, outerTask)
            return (value, inputs, unkept)
        }

        /// Runs `body`, a read made on this thread by another task than the innermost build's (a `Task.immediate` the
        /// build started, before its first suspension), as a read of its own: what it reads is not the build's input,
        /// and a value it gets that the store did not keep leaves the build's own kept.
        func outsideBuild<T>(_ body: () -> T) -> T {
            let outer = (own.inputs, own.unkept, own.trigger, own.buildTask)
            (own.inputs, own.unkept, own.trigger, own.buildTask) = (nil, false, nil, nil)
            defer { (own.inputs, own.unkept, own.trigger, own.buildTask) = outer }
            return body()
        }

        /// Evaluates a key's `currentValue`, with the key on the stack; an `InjectionKey`'s under the variables mutex.
        func evaluate<K: ReadOnlyInjectionKey>(_ key: K.Type) -> K.Value {
            evaluating(key) { K.currentValueIsVariable ? Store.readVariable(key) : K.currentValue }
        }

        /// Runs `body`, which evaluates one of `key`'s defaults, with the key on the stack, stopping the process if it
        /// is being evaluated on this thread already.
        ///
        /// The default is part of the read, and keeps what it lends.
        func evaluating<T>(_ key: Any.Type, _ body: () -> T) -> T {
            if let index = own.stack.firstIndex(where: { $0 == key }) {
                InjectedValues.dependencyCycle(Array(own.stack[index...]) + [key])
            }
            own.stack.append(key)
            defer { own.stack.removeLast() }
            guard let pending = own.context.pending else { return body() }
            own.context.pending = nil
            defer { own.context.pending = pending }
            return body()
        }

        /// Runs `body`, a read through a property of a key whose default may start tasks, with what the property lends
        /// bound instead, as a view of the levels the read walks: a task the default starts (`Task.immediate` among
        /// them) reads them too, before its first suspension and after it.
        @inline(never)
        func bindingLent<T>(_ body: () -> T) -> T {
            let (reader, lent) = (Reader(Store.binding.get().scope), own.context.lent?.snapshot)
            let view = Scope(viewOf: nil, base: Snapshot.make(reader, lent: lent), root: reader.root(lent))
            return isolated(keepingUpdate: true, binding: Binding(scope: view), body)
        }

        /// Releases what a write replaced, in a context of its own: a `deinit` it runs is not part of the write, and
        /// reads neither what the writer's property lends nor the write it makes.
        func releasing(_ dropped: consuming Any?) {
            let outer = own.context
            own.context = Context()
            ThreadState.release(dropped)
            own.context = outer
        }

        /// Takes ownership of `value`, and so releases it before returning, wherever the optimizer puts the caller's
        /// releases.
        @inline(never)
        private static func release(_ value: consuming Any?) {}

        /// Runs `body` holding the variables mutex, which this thread may hold already.
        func holdingVariables<T>(_ body: () -> T) -> T {
            if own.heldVariables == 0 { Store.variableLock.lock() }
            own.heldVariables += 1
            defer {
                own.heldVariables -= 1
                if own.heldVariables == 0 { Store.variableLock.unlock() }
            }
            return body()
        }

        /// Waits for another thread to finish `ticket`, until `done` holds of `lock`'s state, after recording the wait
        /// in the wait graph, and stopping the process if the wait would close a cycle.
        ///
        /// It lets go of the variables mutex meanwhile, since the other thread may assign a variable, and takes it back
        /// holding no other lock.
        func wait<S>(for ticket: BuildTicket, on lock: Lock<S>, until done: (S) -> Bool) {
            let keys = Array(ticket.isFirstRead && own.stack.last == ticket.key ? own.stack.dropLast() : own.stack[...])
            let closed = Store.waits.withLock { graph -> [Any.Type]? in
                if let closed = cycle(waitingFor: ticket, keys, in: graph) { return closed }
                graph.waiting[ObjectIdentifier(self)] = (ticket, keys)
                return nil
            }
            if let closed { InjectedValues.dependencyCycle(closed) }
            let held = own.heldVariables
            if held > 0 { (own.heldVariables, _) = (0, Store.variableLock.unlock()) }
            lock.wait(until: done)
            Store.waits.withLock { _ = $0.waiting.removeValue(forKey: ObjectIdentifier(self)) }
            if held > 0 { (own.heldVariables, _) = (held, Store.variableLock.lock()) }
        }

        /// The cycle that waiting for `ticket` with `keys` on the stack would close, or `nil` when waiting is safe.
        ///
        /// Following builders that wait for unfinished tickets, each step is a real read: each key on a builder's stack
        /// read the next, and a waiting thread's innermost key read the key of the ticket it waits for. If the chain
        /// comes back to this thread, those reads form a cycle. The walk ends: every thread waits for one ticket at
        /// most, and each checked, under the same lock, that it closed no loop when it began waiting.
        private func cycle(waitingFor ticket: BuildTicket, _ keys: [Any.Type], in graph: WaitGraph) -> [Any.Type]? {
            var (chain, next): ([Any.Type], BuildTicket) = ([], ticket)
            // A finished ticket ends the chain, the first one too: its builder may be waiting for something else now.
            while graph.unfinished.contains(ObjectIdentifier(next)) {
                if next.builder == ObjectIdentifier(self) {
                    return Array(keys.drop(while: { $0 != next.key })) + chain + [next.key]
                }
                guard let wait = graph.waiting[next.builder] else { return nil }
                (chain, next) = (chain + wait.keys.drop(while: { $0 != next.key }), wait.ticket)
            }
            return nil
        }

        /// The cycle that a write of `key` closes on this thread, which is evaluating it already.
        func cycle(closingAt key: Any.Type) -> [Any.Type] { Array(own.stack.drop(while: { $0 != key })) + [key] }
    }

    /// One thread's build of one `.cached` key in one root, or its first read of a variable; unfinished, in the wait
    /// graph, from its making (under the root's or the variables' lock) to `finish()`.
    final class BuildTicket: Sendable {
        let key: Any.Type
        /// The building thread's record, by identity.
        let builder: ObjectIdentifier
        let isFirstRead: Bool

        init(key: Any.Type, builder: ThreadState, isFirstRead: Bool = false) {
            (self.key, self.builder, self.isFirstRead) = (key, ObjectIdentifier(builder), isFirstRead)
            Store.waits.withLock { _ = $0.unfinished.insert(ObjectIdentifier(self)) }
        }

        func finish() { Store.waits.withLock { _ = $0.unfinished.remove(ObjectIdentifier(self)) } }
    }

    /// Who waits for which build, and the builds still running, guarded by `Store.waits`.
    struct WaitGraph {
        var waiting: [ObjectIdentifier: (ticket: BuildTicket, keys: [Any.Type])] = [:]
        var unfinished = Swift.Set<ObjectIdentifier>()
    }

    /// The article variables' bookkeeping, guarded by `Store.variables`.
    struct Variables {
        var initialized = Swift.Set<ObjectIdentifier>()
        var firstReads: [ObjectIdentifier: BuildTicket] = [:]
        /// For each variable that global writes assigned since the last reset, what assigns back the value it held
        /// before the first of them, and returns the value it replaces.
        var originals: [ObjectIdentifier: () -> Any] = [:]
    }

    /// What a test's scope does with keys nothing overrides, shared by the test's root and the fresh scopes opened in
    /// it, so that the test reports each key once.
    ///
    /// Its identity is the test's world.
    @usableFromInline
    final class TestPolicy: Sendable {
        /// How the test reports a problem; `nil` for the process's policy, which reports to a strict test running.
        let report: (@Sendable (String) -> Void)?
        let strict: Bool
        private let reported = Lock(Swift.Set<ObjectIdentifier>())

        init(strict: Bool = true, report: (@Sendable (String) -> Void)? = nil) {
            (self.strict, self.report) = (strict, report)
        }

        /// Whether this is the policy of reads made outside every test in a process that runs tests.
        var isProcessPolicy: Bool { report == nil }

        /// Reports, once per key, a read of `key`, whose value is of type `value`, that found neither an override nor
        /// a test value, saying what read it.
        func report(missing key: Any.Type, of value: Any.Type, in context: Context, through accessor: String?) {
            let report = isProcessPolicy ? Store.tests.withLock { $0.strict.last?.report } : strict ? self.report : nil
            guard let report, reported.withLock({ $0.insert(ObjectIdentifier(key)).inserted }) else { return }
            let source: Source =
                isProcessPolicy
                ? .escapingWork : context.writing.map(Source.write) ?? (context.inUpdate ? .updateClosure : .test)
            report(
                missingTestValueMessage(for: key, of: value, readBy: source, through: accessor.flatMap(accessorName))
            )
        }

        /// What read a key that a report is about.
        enum Source {
            case test, updateClosure
            case write(AnyKeyPath)
            case escapingWork
        }
    }

    // MARK: - Messages

    /// What a strict test reports about a key read with neither an override nor a test value, by what read it.
    static func missingTestValueMessage(
        for key: Any.Type,
        of value: Any.Type,
        readBy source: TestPolicy.Source,
        through accessor: String? = nil
    ) -> String {
        let testValue = "extension \(key): TestValueKey { static var testValue: \(value) { … } }"
        let (read, name) = accessor.map { ("\(key) through its accessor \($0)", $0) } ?? ("\(key)", "accessor")
        switch source {
        case .test:
            let override = accessor.map { "override \($0)" } ?? "override the accessor that reads it"
            return """
                InjectedValues: the test read \(read), which nothing overrides and which has no test value, so it \
                used the live default. To fix it, \(override), in the test's update closure \
                (.injectedValues { $0.\(name) = mock }) or with .injecting(\\.\(name), mock), where mock is a \
                \(value) for tests, or give the key a value for every test: \(testValue).
                """
        case .updateClosure:
            return """
                InjectedValues: the test's update closure read \(read), which nothing overrides and which has no test \
                value, so it used the live default. Writing part of a dependency, as $0.client.fetch = … does, reads \
                the whole dependency first. To fix it, set the whole dependency in the update closure, as \
                $0.\(accessor ?? "client") = mock, where mock is a \(value) for tests, or give the key a value for \
                every test: \(testValue).
                """
        case .write(let path):
            // Where Swift cannot name the accessor, as on Linux, the key path describes it by an address.
            let named = "\(path)".contains("<computed") ? "a nested key path or a derived accessor" : "\(path)"
            return """
                InjectedValues: the test's write through \(named) read \(key), which nothing overrides and which has \
                no test value, so it built the live default. Swift writes through a key path by reading it first, and \
                only a plain accessor's read gets the value being written: a nested path (\\.client.timeout) reads \
                the whole dependency, and a derived accessor the keys it reads. To fix it, write the whole dependency \
                through its own accessor, with .injecting or in the update closure, or give the key a value for every \
                test: \(testValue).
                """
        case .escapingWork:
            return """
                InjectedValues: work outside every test's scope (a Dispatch queue, a Thread, a detached task, a \
                callback) read \(key), which nothing overrides and which has no test value, so it used the live \
                default. To fix it, give the key a value for every test: \(testValue), or run the work in the test's \
                scope: capture it with InjectedValues.capture() where the work is handed off, and call \
                scope.run { … } where it runs.
                """
        }
    }

    /// The name of the accessor a read was made in, from Swift's `#function` there: a property's name, or `nil` where
    /// it names a function or a subscript, as it does for a read made straight in a test.
    static func accessorName(_ name: String) -> String? {
        guard let first = name.first, first == "_" || first.isLetter,
            name.allSatisfy({ $0 == "_" || $0.isLetter || $0.isNumber })
        else { return nil }
        return name
    }

    /// What is printed when the store builds its own value of `built` from the live default of `input`, which the scope
    /// whose read it is built for overrides.
    static func firstBuildMessage(of built: Any.Type, reading input: Any.Type) -> String {
        """
        InjectedValues: the store built its own \(built) from the live default of \(input), for a read in a scope \
        that overrides \(input), because it learns what a default reads from its first build. That scope gets a \
        value built from its own \(input). If building from the live value has effects (files, network), override \
        \(built) in that scope too, or make its initializer touch nothing until it is used.
        """
    }

    /// What is printed when a write through an object has nowhere to go.
    static func droppedWriteMessage(for key: Any.Type) -> String {
        """
        InjectedValues: a write of \(key) was dropped: it was made outside every scope through an object made in a \
        test or a fresh scope that has ended, by a `.cached` default built for such a scope after it ended, or by a \
        task started in an update closure after its scope ended. To fix it, write while that scope runs, or make the \
        object where its writes should go.
        """
    }

    /// What is printed when a reset has nothing it may reset.
    static let droppedResetMessage = """
        InjectedValues: a reset was dropped: it was made by a `.cached` default built for a test or a fresh scope \
        after that scope ended, or outside every scope through an object made there. To fix it, reset while that \
        scope runs.
        """

    /// Prints a warning on the standard error.
    static func warn(_ message: String) { _ = "warning: \(message)\n".withCString { write(2, $0, strlen($0)) } }

    /// Stops the process because defaults read each other in a cycle.
    static func dependencyCycle(_ keys: [Any.Type]) -> Never {
        let chain = keys.map { String(describing: $0) }.joined(separator: " → ")
        fatalError(
            """
            InjectedValues: dependency cycle: \(chain). Each key's default reads the next one, so none of them can be \
            built. To fix it, break the cycle: let one of these types receive the other as a parameter or a \
            property set after creation, or resolve it lazily, when first used, instead of in currentValue.
            """
        )
    }

    // MARK: - Locks

    /// A POSIX mutex and condition variable, and the state they guard: all state that threads share is in one.
    ///
    /// A cell's lock is one of 256 stripes, which every cell shares and nothing destroys, so that a scope costs no lock
    /// to make; cells' locks are never held two at once, so sharing one costs at most a wait, never a deadlock.
    @usableFromInline
    final class Lock<State>: @unchecked Sendable {
        // `@unchecked Sendable`: `state` is read and written only in `withLock`, holding the mutex, so every access to
        // it is exclusive as well, which `@exclusivity(unchecked)` tells the runtime. The mutex and the condition live
        // in memory allocated once, whose address never changes, and which only `deinit` frees, when no thread can
        // hold or wait on them; a striped lock points into a stripe's, which is never freed.
        @exclusivity(unchecked) private var state: State
        private var primitives: UnsafeMutablePointer<Primitives>
        private typealias Primitives = (mutex: pthread_mutex_t, condition: pthread_cond_t, spacing: SIMD16<UInt64>)
        private let ownsPrimitives: Bool

        /// A lock of its own (of `count`, side by side, for the stripes), or with `striped`, one of the stripes.
        ///
        /// Each mutex and condition has 128 bytes after it that nothing touches, and the first has the spacing of one
        /// more element before it, so that no cache line they are in holds anything else: locking one writes no line
        /// that another thread's lock or data is in, which would bounce between their cores.
        init(_ state: State, striped: Bool = false, count: Int = 1) {
            (self.state, ownsPrimitives) = (state, !striped)
            primitives = striped ? Store.stripes.primitives : .allocate(capacity: count + 1) + 1
            if striped {
                let address = UInt(bitPattern: ObjectIdentifier(self))
                primitives += Int((address >> 4 ^ address >> 12) & 255)
            }
            for index in (striped ? 0 : -1)..<(striped ? 0 : count) {
                (primitives + index).initialize(to: (pthread_mutex_t(), pthread_cond_t(), SIMD16()))
                guard index >= 0 else { continue }
                let made = (
                    pthread_mutex_init(&primitives[index].mutex, nil),
                    pthread_cond_init(&primitives[index].condition, nil)
                )
                precondition(made == (0, 0), "InjectedValues: pthread_mutex_init or pthread_cond_init failed")
            }
        }

        deinit {
            guard ownsPrimitives else { return }
            pthread_cond_destroy(&primitives.pointee.condition)
            pthread_mutex_destroy(&primitives.pointee.mutex)
            (primitives - 1).deallocate()
        }

        /// Runs `body` with the state, holding the lock.
        @inline(__always)
        @discardableResult
        final func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
            lock()
            defer { unlock() }
            return try body(&state)
        }

        /// Waits, giving up the lock, until a `broadcast()` finds `ready` true of the state; returns holding none.
        final func wait(until ready: (State) -> Bool) {
            lock()
            defer { unlock() }
            while !ready(state) { pthread_cond_wait(&primitives.pointee.condition, &primitives.pointee.mutex) }
        }

        final func lock() { pthread_mutex_lock(&primitives.pointee.mutex) }
        final func unlock() { pthread_mutex_unlock(&primitives.pointee.mutex) }

        /// Wakes every thread waiting for the state to be ready; called holding the lock.
        final func broadcast() { pthread_cond_broadcast(&primitives.pointee.condition) }
    }
}

nonisolated extension InjectedValues.Scope {
    /// Runs the update closure, which reads and writes this scope, and returns the scope, ready to be bound.
    ///
    /// The closure runs with a view of the scope bound, not the scope: tasks it starts and objects it makes see the
    /// scope while it runs, and keep it no more than a snapshot does, so that a value it stores cannot keep the scope.
    @usableFromInline
    func configured(_ update: (inout InjectedValues) throws -> Void) rethrows -> InjectedValues.Scope {
        let thread = InjectedValues.ThreadState.current
        let outer = thread.own.context
        thread.own.context = InjectedValues.Context()
        (thread.own.context.writing, thread.own.context.inUpdate) = (outer.writing, true)
        defer { thread.own.context = outer }
        let view = InjectedValues.Scope(viewOf: cell, base: base, root: root!)
        try InjectedValues.Store.binding.withValue(InjectedValues.Binding(scope: view)) {
            var values = InjectedValues()
            try update(&values)
        }
        return self
    }

    /// Runs the operation with the scope bound.
    func run<R>(_ operation: () throws -> R) rethrows -> R {
        try InjectedValues.ThreadState.current.isolated(binding: InjectedValues.Binding(scope: self), operation)
    }
}
