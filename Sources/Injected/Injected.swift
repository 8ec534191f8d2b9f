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
    /// Reads and writes made through the store take turns: a read holds the reading thread's lock, and a write made
    /// outside any scope holds every thread's, so `InjectedValues[\.networkProvider]` on one thread never races
    /// `InjectedValues[\.networkProvider] = mock` on another.
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
    /// happened to read it first. Its setter and observers (`didSet`) run, during a global write or reset, holding
    /// every thread's lock of the store's variables: they may read and write dependencies, but must not wait for
    /// another thread, for example by reading a `.cached` dependency that another thread is still building. A computed
    /// `currentValue`'s getter runs holding the reading thread's lock; a global write it makes, directly or through a
    /// default it builds, lets go of that lock while the write runs.
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
    /// override made by a nested scope never leaks into a shared instance. Since it outlives every scope that reads
    /// it, it remembers none: properties it makes, scopes it captures and tasks it starts resolve outside every scope.
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
    /// - Parameter key: The key of the dependency.
    public static subscript<K: ReadOnlyInjectionKey>(key: K.Type) -> K.Value {
        get { InjectedValues.Store.value(for: key) }
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
    /// operation that calls only the setter. So this write evaluates the dependency's default where nothing overrides
    /// it: the key's test value in a test, if it declares one, and otherwise its live default. Every read the write
    /// makes before its first write is the getter's, not one the caller made: nothing it evaluates is reported in a
    /// strict test, and a live value it built for the key the setter then writes is dropped, not cached; another key
    /// it built is cached and reported when the test first reads it. Outside tests these are ordinary reads, so a
    /// `.cached` default they build is the one every later read gets. To
    /// override a dependency without evaluating its default at all, write it in an update closure:
    /// `withInjectedValues { $0.networkProvider = mock } operation: { … }`, or the test trait's
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
            InjectedValues.ThreadState.current.writingThroughKeyPath { values[keyPath: keyPath] = newValue }
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
    /// - Parameter key: The key of the dependency.
    public subscript<K: ReadOnlyInjectionKey>(key: K.Type) -> K.Value {
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
/// A property made while a scope is active remembers where reads looked at that moment, its *lookup*, for its whole
/// life, so an object made with some dependencies overridden keeps using them: after the scope's operation has
/// returned, on any thread, in a detached task or a callback. A read through the property looks, in order:
///
/// 1. in the reader's own active scopes, innermost first, down to the first one the remembered lookup has too, so an
///    override made where the object is used wins;
/// 2. in the remembered scopes, innermost first;
/// 3. in the global store, or the fresh scope the remembered lookup ends in, and last at the key's default.
///
/// A fresh scope opened outside every other fresh scope, such as a test's, starts a world of its own: the remembered
/// lookup is consulted only when the reader has no active scope, or when both are in the same world. Otherwise the
/// property resolves in the reader's scopes alone, so that one test never sees another's mocks. A property made
/// outside any scope remembers nothing and resolves wherever it is read.
///
/// While the remembered scope runs (its operation, and every task started in it), the property sees every write made
/// in it. Once all of them have finished, the scope keeps what its update closure set. Assigning to the property from
/// outside any scope overrides the key in the remembered scope, for every object made in it.
///
/// A property made in the update closure of ``withInjectedValues(fresh:_:operation:)`` remembers the scope around
/// it instead, and one made in the default of a ``InjectionLifetime/cached`` key remembers no scope, so that no scope
/// keeps a value that remembers it. A property made in the default of an `.uncached` key (a factory), evaluated for a
/// read through another property, remembers where that read looks, so that what a factory makes keeps the scope of
/// the object that asked for it.
@propertyWrapper
public struct Injected<Value> {
    /// The dependency's key path.
    ///
    /// `nonisolated(unsafe)`: a key path is immutable once formed, and `KeyPath` is not declared `Sendable` only
    /// because a path can capture the arguments of subscripts it goes through; paths into `InjectedValues` go through
    /// accessor properties, which capture nothing. A `var`, never assigned after the initializers, because Swift warns
    /// that the annotation is unnecessary on a constant in an app that declares key paths `Sendable` itself.
    private nonisolated(unsafe) var keyPath: KeyPath<InjectedValues, Value>
    /// Where reads looked when the property was made; `nil` outside any scope.
    private nonisolated let lookup: InjectedValues.Lookup?
    /// Where a read-only property was declared, for the message when code writes to it; `nil` for writable ones.
    private nonisolated let readOnlyDeclaration: InjectedValues.ReadOnlyDeclaration?

    /// Creates a property that reads and writes the dependency at a key path.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of ``InjectedValues``.
    public nonisolated init(_ keyPath: WritableKeyPath<InjectedValues, Value>) {
        self.keyPath = keyPath
        self.lookup = InjectedValues.Store.lookupToKeep()
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
        self.lookup = InjectedValues.Store.lookupToKeep()
        self.readOnlyDeclaration = InjectedValues.ReadOnlyDeclaration(file: file, line: line)
    }

    /// The dependency, resolved on every access.
    ///
    /// Setting it overrides the dependency in the innermost active scope, or, from outside any scope, in the scope the
    /// property remembers, exactly like writing `InjectedValues[keyPath] = newValue` there.
    public var wrappedValue: Value {
        get {
            guard let lookup else { return InjectedValues[keyPath] }
            // Rather than pass the remembered lookup down through the key path's accessors, the property lends it to
            // the reads they make, in this thread's context, for the length of this read.
            return InjectedValues.ThreadState.lending(lookup) { InjectedValues[keyPath] }
        }
        nonmutating set {
            guard let writable = keyPath as? WritableKeyPath<InjectedValues, Value> else {
                fatalError(readOnlyWriteMessage(keyPath))
            }
            guard let lookup else {
                InjectedValues[writable] = newValue
                return
            }
            // From outside any scope, the write goes to the remembered scope; inside one, to the active scope.
            InjectedValues.ThreadState.lending(lookup, forWrite: true) { InjectedValues[writable] = newValue }
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
    /// It is the lookup the property was made with, or none for a property made outside any scope. Reading it reads
    /// nothing but the property's own immutable field, so it is safe wherever the property itself may be read.
    ///
    /// Like ``wrappedValue``, it is not marked `nonisolated`: Swift copies the mark onto the `$` variable of a wrapped
    /// local variable, where it is not allowed.
    public var projectedValue: InjectedValues.CapturedScope {
        InjectedValues.CapturedScope(lookup: lookup, madeFor: Value.self)
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
/// The scope *runs* while its operation runs and while any task started in it does: until then, everything made in
/// the scope sees the writes made in it, and a task that outlives the operation sees them, and its own, through
/// whatever it builds on the scope. Once the last of them has finished, the scope keeps only what its update closure
/// set. The update closure is not part of the run: objects made in it, scopes opened in it, and tasks started in it
/// belong to the scope around this one, so that nothing the scope keeps keeps the scope.
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
    try InjectedValues.Scope.opened(fresh: fresh).run(update, operation)
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
@inlinable
public func withInjectedValues<R>(
    fresh: Bool = false,
    _ update: (inout InjectedValues) throws -> Void,
    isolation: isolated (any Swift.Actor)? = #isolation,
    operation: () async throws -> R
) async rethrows -> R {
    // Inlined into the caller, with the binding below, so that `TaskLocal.withValue` is specialized there: its
    // unspecialized generic form costs a request's scope six task frames and five executor checks more.
    let run = try InjectedValues.Scope.opened(fresh: fresh).start(update)
    return try await InjectedValues.Scope.binding.withValue(.init(run: run)) { try await operation() }
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
/// this is called (down to the first one the captured lookup has too), then in the captured scopes, as reads through
/// the parent itself do. Where the scopes active here are in another world than the captured one (another test, or
/// another fresh scope opened outside every other), they alone count.
///
/// When the captured scope is empty, because the property was made outside any scope, the new scope is nested in the
/// active scope, exactly as ``withInjectedValues(fresh:_:operation:)`` nests it; inside a test's scope, the test
/// reports it, since the child then runs on the test's scope rather than the parent's. Nothing of the parent is read
/// but the lookup its property stored when it was made, so this is safe with actors, locked classes and any
/// `Sendable` parent, and nothing is registered anywhere.
///
/// - Parameters:
///   - scope: The scope to build on: `$property` of one of the parent's `@Injected` properties, or a scope from
///     ``InjectedValues/capture()``.
///   - update: A closure that overrides dependencies in the new scope. Objects made in it remember the scope active
///     where this is called.
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
    try InjectedValues.Scope.opened(on: scope.reportingIfEmpty(file: fileID, line: line)).run(update, operation)
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
///   - update: A closure that overrides dependencies in the new scope. Objects made in it remember the scope active
///     where this is called.
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
    let run = try InjectedValues.Scope.opened(on: scope.reportingIfEmpty(file: fileID, line: line)).start(update)
    return try await InjectedValues.Scope.binding.withValue(.init(run: run)) { try await operation() }
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
    /// It captures what an ``Injected`` property made at the same place would remember: in an update closure, the
    /// scope around the new one, and in the default of a ``InjectionLifetime/cached`` key, nothing, so that no scope
    /// keeps a capture of itself. Like every lookup the library makes, it leaves out the scopes that can add nothing
    /// to it (a scope that has finished running and kept nothing), so that work that captures again in each hop, as
    /// polling and retries do, holds a lookup as short after thousands of hops as after two.
    ///
    /// - Returns: The captured scope, which keeps its scopes alive for as long as it lives.
    public static func capture() -> CapturedScope {
        CapturedScope(lookup: InjectedValues.Store.lookupToKeep())
    }

    /// A scope captured by ``InjectedValues/capture()`` or handed out by an ``Injected`` property, to run code in it
    /// later, on any thread.
    ///
    /// It holds the captured lookup for as long as it lives, and nothing once it is gone. Each ``run(_:)`` opens a new
    /// scope based on it, exactly as ``withInjectedValues(from:_:operation:fileID:line:)`` does with no update
    /// closure: writes made in the body stay in that scope, and reads look in the body's own writes, then in the
    /// scopes active where it runs (down to the first one the captured lookup has too), then in the captured scopes. A
    /// capture made outside any scope runs its body where it is run.
    public struct CapturedScope: Sendable {
        let lookup: InjectedValues.Lookup?
        /// The value type of the `@Injected` property that handed out the scope, or `nil` for a capture.
        let madeFor: Any.Type?

        init(lookup: InjectedValues.Lookup?, madeFor: Any.Type? = nil) {
            self.lookup = lookup
            self.madeFor = madeFor
        }

        /// The captured lookup, after reporting, inside a test's scope, that `withInjectedValues(from:)` got none.
        func reportingIfEmpty(file: StaticString, line: UInt) -> InjectedValues.Lookup? {
            guard lookup == nil, let report = InjectedValues.Store.lookupToKeep()?.root?.testPolicy?.report else {
                return lookup
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
            try InjectedValues.Scope.opened(on: lookup).run({ _ in }, body)
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
            let run = InjectedValues.Scope.opened(on: lookup).start { _ in }
            return try await InjectedValues.Scope.binding.withValue(.init(run: run)) { try await body() }
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
/// The first call makes the process one that runs tests, for good: from then on, reads made outside every test's
/// scope (work on a queue, a thread or a detached task) get test values too, and while a strict test runs, such a read
/// of a key with no test value is reported, once per key, to the strict test that began last. <doc:TestingWithInjected>
/// says what this means for a test suite.
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
    let policy = InjectedValues.TestPolicy(strict: strict, report: report)
    let scope = InjectedValues.Scope.opened(forTest: policy)
    return try InjectedValues.Store.runningTest(scope.lookup.root?.testPolicy ?? policy) {
        try scope.run(update, operation)
    }
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
    let policy = InjectedValues.TestPolicy(strict: strict, report: report)
    let scope = InjectedValues.Scope.opened(forTest: policy)
    return try await InjectedValues.Store.runningTest(scope.lookup.root?.testPolicy ?? policy) {
        let run = try scope.start(update)
        return try await InjectedValues.Scope.binding.withValue(.init(run: run)) { try await operation() }
    }
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
    /// What a test's scope does with keys that nothing overrides, shared by the test's root and the fresh scopes opened
    /// inside it, so that the test reports each key once.
    final class TestPolicy: Sendable {
        /// How the test reports a problem, such as a test failure; `nil` for the process's policy, which reports to a
        /// strict test that is running.
        let report: (@Sendable (String) -> Void)?
        /// Whether reads of keys with neither an override nor a test value are reported.
        let strict: Bool
        /// The keys reported so far.
        private let reported = Lock(Swift.Set<ObjectIdentifier>())

        init(strict: Bool, report: (@Sendable (String) -> Void)?) {
            self.strict = strict
            self.report = report
        }

        /// Whether this is the policy of reads made outside every test in a process that runs tests.
        var isProcessPolicy: Bool { report == nil }

        /// Reports, once per key, a read of `key` that found neither an override nor a test value.
        func reportMissingTestValue(of key: Any.Type, inUpdate: Bool) {
            let report: (@Sendable (String) -> Void)?
            let message: String
            if isProcessPolicy {
                // Outside every test: reported while a strict test runs, to the one that began last.
                report = Store.strictTests.withLock { $0.last?.report }
                message = escapingReadMessage(for: key)
            } else {
                report = strict ? self.report : nil
                message = inUpdate ? partialWriteMessage(for: key) : missingTestValueMessage(for: key)
            }
            guard let report, reported.withLock({ $0.insert(ObjectIdentifier(key)).inserted }) else { return }
            report(message)
        }
    }

    // MARK: - Storage
    //
    // The machinery in one page (the guarantees article says the same at more length, as tables):
    //
    // - Lookups. Where a read looks is one immutable list, a `Lookup`: levels of overrides (scopes), innermost first,
    //   ending at a root (the global store, or a fresh scope's root with its cache of `.cached` values). Scopes,
    //   captures, `@Injected` properties and the task-local binding each hold one. `Store.lookup(for:in:bound:)` alone
    //   decides, from the binding and the thread's context, which lookups an operation reads, makes and writes through,
    //   and `Lookup.made` alone builds a new one, leaving out the levels that add nothing (`Scope.addsNothing`). A read
    //   walks one list, or a lent lookup after the reader's levels it does not have (`Lookup.ordered`); a write passes
    //   the levels that add nothing too (`Lookup.write`), so every lookup made from a scope sees the same writes.
    // - Context. The task-local `Scope.binding` holds the `Run` of the innermost running scope. One per-thread record,
    //   `ThreadState`, holds a `Context` that a synchronous entry point sets for its own length and restores: the
    //   lookup a property lends to the reads its key path makes, the lookups an update closure or a `.cached` build
    //   reads, makes and writes through, and whether reads are quiet (the reads a write through a key path makes before
    //   its first write). An operation nested in another starts from a context of its own, keeping only `quiet`.
    // - Scopes. Every scope keeps its overrides behind its own `PlainLock`: what its update closure set (`kept`), and,
    //   while it runs, what is written in it. A scope runs while a `Run` exists: the binding of its operation and of
    //   every task started in it holds it, and so does a nested scope's run, if this one has written something; the
    //   last one's release ends the run, dropping what was written. A root
    //   keeps its cache behind its own lock too. Nothing a scope keeps holds the scope: its update closure, what a
    //   `.cached` default builds and an article-style variable's initializer run with no scope bound, so what they
    //   make, capture or start remembers the scope around (or none).
    // - Views. Each thread reads the global store through a view of its own, behind a lock of its own that its reads
    //   take alone. An entry is added only by its own thread, holding the global store's lock; a global write or reset
    //   removes the entries it makes wrong from every view, holding the same lock.
    // - Builds. A `.cached` value is built outside every lock by the first thread to find it missing, which records a
    //   `BuildTicket` in the root's cache; others wait on the root's condition. Who waits for whom is recorded under
    //   `Store.waits`, which is how a cycle across threads is found (see `ThreadState.cycle(waitingFor:)`).
    // - Article-style variables. The store reads an `InjectionKey`'s `currentValue` holding the reading thread's own
    //   variable lock, and assigns it holding every registered thread's, so reads and writes made through the store
    //   never race. A variable's first read, which may run its initializer, holds no lock; one thread makes it, and
    //   `Store.variables` makes other readers and writers of that key wait for it in the wait graph, as for a build.
    //   A write made while the thread reads a variable (a computed getter) lets go of its own lock for the write.
    // - Lock order: every thread's variable lock (a writer takes them one by one, holding nothing else), then
    //   `variables.lock`, then a scope's lock, then a thread's view lock, then `waits` or the test-process lock, then
    //   a `BuildTicket`'s; never two scopes' locks at once; a `TestPolicy`'s and the strict tests' alone. No user code
    //   runs under a lock, except the setter and observers of an `InjectionKey`'s `currentValue` under the variable
    //   locks, and a computed `currentValue` getter under its reader's: defaults and initializers are evaluated after
    //   unlocking, and every value a lock's holder removes is released after it unlocks.
    // - Test processes. The first test scope sets `Store.processPolicy` for good, so that reads outside every test
    //   get test values; `Store.strictTests` lists the strict tests running, which hear of such reads.

    /// Where a read looks: an immutable list of levels of overrides, innermost first, ending at a root.
    ///
    /// Each node is itself a lookup, the rest of the list from that level on. Nodes are shared: a scope's lookup is its
    /// level followed by the lookup it was opened on.
    @usableFromInline
    final class Lookup: Sendable {
        /// The first level; `nil` in a lookup that is only its root.
        let level: Scope?
        /// The levels after the first, or `nil` after the last.
        let rest: Lookup?
        /// The root every level is read before: a fresh scope's, or `nil` for the global store.
        let root: Scope?

        init(level: Scope?, rest: Lookup?, root: Scope?) {
            self.level = level
            self.rest = rest
            self.root = root
        }

        /// The lookup of a scope opened on `base`: its own level, then `base`'s levels.
        convenience init(_ level: Scope, on base: Lookup?) {
            self.init(level: level, rest: base?.level == nil ? nil : base, root: base?.root)
        }

        /// The world the lookup is in: the outermost fresh scope around its root, or `nil` for the global store's.
        var world: Scope? { root.map { $0.world ?? $0 } }

        /// The box of a key's override in the first level.
        @inline(__always)
        func firstBox(for id: ObjectIdentifier) -> AnyBox? {
            level?.box(for: id)
        }

        /// Whether `scope` is one of the levels.
        func contains(_ scope: Scope) -> Bool {
            var node: Lookup? = self
            while let current = node, let level = current.level {
                if level === scope { return true }
                node = current.rest
            }
            return false
        }

        /// The two lookups a read walks, in turn: the first until one of its levels is in the second, then the second.
        ///
        /// A lookup lent by a property counts only where the reader has no scope, or is in the same world; otherwise
        /// the reader's lookup is all there is, so that an object made in one test never shows its mocks to another.
        @inline(__always)
        static func ordered(_ reader: Lookup?, _ lent: Lookup?) -> (Lookup?, Lookup?) {
            guard let lent, lent !== reader else { return (reader, nil) }
            guard let reader else { return (lent, nil) }
            return reader.world === lent.world ? (reader, lent) : (reader, nil)
        }

        /// The lookup that a read through `lent` inside `reader` walks, less the levels that add nothing.
        ///
        /// The one place where lookups are made: for new scopes, captures and properties. It shares every node it can,
        /// and allocates only the levels it has to put in a new order.
        static func made(_ reader: Lookup?, _ lent: Lookup?, running: Scope? = nil) -> Lookup? {
            let (first, second) = ordered(reader, lent)
            if second == nil, first?.keepsEveryLevel(running: running) ?? true { return first }
            let root = (second ?? first)?.root
            /// The levels walked, and whether each adds anything.
            var levels: [(node: Lookup, kept: Bool)] = []
            /// From this index on, `levels` is the end of the last list walked, with nothing left out.
            var shared = 0
            var node = first
            var other = second
            while true {
                if let current = node, let level = current.level {
                    if let next = other, next.contains(level) {
                        (node, other, shared) = (next, nil, levels.count)
                        continue
                    }
                    let kept = !level.addsNothing
                    if !kept { shared = levels.count + 1 }
                    levels.append((current, kept))
                    node = current.rest
                } else if let next = other {
                    (node, other, shared) = (next, nil, levels.count)
                } else {
                    break
                }
            }
            var made: Lookup? = shared < levels.count ? levels[shared].node : nil
            for (node, kept) in levels[..<shared].reversed() where kept {
                made = Lookup(level: node.level, rest: made, root: root)
            }
            guard made == nil, let root else { return made }
            return Lookup(level: nil, rest: nil, root: root)
        }

        /// Overrides a key where a write through the lookup goes, and says whether it wrote.
        ///
        /// It returns `false` when that is the global store. `replaced` is what the write replaced, to be released after
        /// unlocking.
        ///
        /// A write goes to the first level that has not ended having kept nothing, which lookups made since leave out
        /// (`addsNothing`), so that it stays that way and every lookup made from this one sees the write; past every
        /// level, it goes to a fresh scope's root, never from a fresh scope's world to the global store.
        @inline(__always)
        func write(_ box: AnyBox, for id: ObjectIdentifier, replaced: inout AnyBox?) -> Bool {
            // The common write, to a scope that runs or is being set up, in line.
            if let level, level.writeUnlessLeftOut(box, for: id, replaced: &replaced) { return true }
            return writePastFirstLevel(box, for: id, replaced: &replaced)
        }

        /// `write(_:for:replaced:)`, once the first level has been passed by.
        @inline(never)
        private func writePastFirstLevel(_ box: AnyBox, for id: ObjectIdentifier, replaced: inout AnyBox?) -> Bool {
            var node = rest
            while let current = node, let level = current.level {
                if level.writeUnlessLeftOut(box, for: id, replaced: &replaced) { return true }
                node = current.rest
            }
            guard let root else { return false }
            _ = root.writeUnlessLeftOut(box, for: id, replaced: &replaced)
            return true
        }

        /// Where a reset through the lookup drops overrides: the level a write would go to, or else the root; `nil` for
        /// the global store.
        func scopeToReset() -> Scope? {
            var node: Lookup? = self
            while let current = node, let level = current.level {
                if !level.addsNothing { return level }
                node = current.rest
            }
            return root
        }

        /// Whether every level of the lookup adds something, so that it is made as it is; `running` is a scope known
        /// to run, which the check can skip.
        func keepsEveryLevel(running: Scope?) -> Bool {
            var node: Lookup? = self
            while let current = node, let level = current.level {
                if level !== running, level.addsNothing { return false }
                node = current.rest
            }
            return true
        }
    }

    /// One level of overrides, opened by `withInjectedValues`; or a root: the global store, or a fresh scope's root.
    ///
    /// A level keeps what its update closure set (`kept`) and, while it runs, what is written in it (`overrides`, which
    /// starts as `kept` and is what reads see). A root keeps the cache of `.cached` values for its lookups; the global
    /// store's root also keeps the global overrides, and a fresh scope's root none, since a fresh scope's update
    /// closure and operation write to its own level.
    @usableFromInline
    final class Scope: @unchecked Sendable {
        // `@unchecked Sendable` and `nonisolated(unsafe)`: `state` is read and written only while holding `lock`, and
        // the other stored properties never change. `@exclusivity(unchecked)`: holding `lock` makes every access to
        // `state` exclusive, and no access spans a call that could reach it again, so the runtime's checks (about 470
        // instructions of a server request's scope) are skipped.

        /// The task-local binding: the run of the innermost running scope, or `nil` outside every scope.
        ///
        /// It holds `nil` rather than a run of the global store, because reading a bound object retains it: on the
        /// common path, with no scope, every read on every thread would then write to one reference count. It is a
        /// struct rather than an optional because copying a task-local optional out looks up the optional's type
        /// metadata, on every read. It is declared without the `@TaskLocal` macro, whose generated storage a module
        /// whose default isolation is the main actor would isolate to it.
        @usableFromInline
        static let binding = Swift.TaskLocal(wrappedValue: Binding(run: nil))

        /// What `binding` holds.
        @usableFromInline
        struct Binding: Sendable {
            let run: Run?

            @usableFromInline
            init(run: Run?) {
                self.run = run
            }
        }

        /// A scope's run: its operation and every task started in it, each of whose bindings holds it.
        ///
        /// The scope runs from the run's start to its release, when the last of them has finished; then what was written
        /// in it is dropped, and objects made in the scope see what its update closure set. Runs started inside it, which
        /// read through it, receive what it wrote, so that their tasks keep reading it (see `deinit`).
        @usableFromInline
        final class Run: Sendable {
            let lookup: Lookup
            /// The running scope, `lookup`'s first level.
            let scope: Scope
            /// `lookup`'s identity, which a read compares with the lookup a property lends without retaining either.
            let id: ObjectIdentifier

            /// Starts the run of `lookup`'s first level; `enclosing` is the run the binding held where it starts.
            init(_ lookup: Lookup, in enclosing: Run?) {
                self.lookup = lookup
                id = ObjectIdentifier(lookup)
                scope = lookup.level!
                scope.withState { $0.phase = .running }
                if let enclosing { Run.nest(self, in: enclosing) }
            }

            /// Records `run` as nested in `enclosing`, if it reads through it.
            @inline(never)
            private static func nest(_ run: Run, in enclosing: Run) {
                guard run.lookup.rest?.contains(enclosing.scope) == true else { return }
                enclosing.scope.withState { state in
                    if state.nestedRuns == nil { state.nestedRuns = [:] }
                    state.nestedRuns![ObjectIdentifier(run)] = WeakRun(run: run)
                }
                let box = EnclosingRun(enclosing)
                run.scope.withState { $0.enclosingRun = box }
            }

            /// Ends the run.
            ///
            /// What it wrote goes, as written in their own runs, to the runs started inside it that are
            /// still running, for each key that no level between them and this scope overrides: their tasks keep reading
            /// it, while this scope's own objects now read what its update closure set. Those runs are handed to the
            /// run around this one, which passes its writes on in turn when it ends. Nothing keeps a finished run, so a
            /// chain of hops that each start the next holds one run at a time.
            deinit {
                var written: Overrides?
                scope.lock.lock()
                scope.state.phase = .ended
                if let kept = scope.state.kept {
                    written = scope.state.overrides
                    (scope.state.overrides, scope.state.kept) = (kept, nil)
                }
                let nested = scope.state.nestedRuns
                let enclosing = scope.state.enclosingRun
                scope.state.nestedRuns = nil
                scope.lock.unlock()
                if enclosing != nil || nested != nil {
                    handOver(written: written, to: nested.map { Array($0.values) } ?? [], leaving: enclosing)
                }
                var built = lookup.root.map { Run.ended(scope, in: $0) } ?? []
                // Released here, outside the lock, because a value's deinit is user code; and in the scope, which it
                // reads as it now is, since the run that wrote the values may end on any thread.
                if written != nil || !built.isEmpty {
                    ThreadState.current.outsideEveryScope(in: lookup) { (written, built) = (nil, []) }
                }
            }

            /// Leaves the run that `enclosing` holds, and hands what this run wrote, and the runs nested in it, to
            /// `nested` and to that run.
            @inline(never)
            private func handOver(written: Overrides?, to nested: [WeakRun], leaving enclosing: EnclosingRun?) {
                // Weak references are loaded out of every lock: a strong reference made from one may be the last.
                let around = enclosing?.run
                around?.scope.withState { _ = $0.nestedRuns?.removeValue(forKey: ObjectIdentifier(self)) }
                var runWrites = nested.isEmpty ? [] : Run.writes(in: written, over: scope)
                for inner in nested.compactMap(\.run) {
                    inner.receive(runWrites, from: scope)
                    if let around { Run.nest(inner, in: around) }
                }
                // What no nested run took is released in the scope, as `deinit` releases the rest.
                if !runWrites.isEmpty { ThreadState.current.outsideEveryScope(in: lookup) { runWrites = [] } }
            }

            /// What a run wrote: what `written`, its overrides at its end, holds that the scope, now back to what it
            /// kept, does not.
            private static func writes(
                in written: Overrides?,
                over scope: Scope
            ) -> [(id: ObjectIdentifier, box: AnyBox)] {
                guard let written else { return [] }
                let kept = scope.withState { $0.overrides }
                return written.entries.filter { kept[$0.id] !== $0.box }
            }

            /// Takes what the run of an enclosing scope wrote, for each key no level between this run's scope and that
            /// one overrides, as written in this run.
            private func receive(_ writes: [(id: ObjectIdentifier, box: AnyBox)], from ended: Scope) {
                guard !writes.isEmpty else { return }
                var levels: [Scope] = []
                var node = lookup.rest
                while let current = node, let level = current.level, level !== ended {
                    levels.append(level)
                    node = current.rest
                }
                let unseen = writes.filter { write in !levels.contains { $0.box(for: write.id) != nil } }
                scope.withState { state in
                    guard case .running = state.phase else { return }
                    if state.kept == nil { state.kept = state.overrides }
                    for write in unseen where state.overrides[write.id] == nil {
                        _ = state.overrides.updateValue(write.box, forKey: write.id)
                    }
                }
            }

            /// When the run of a fresh scope's own level ends, its root drops what was built from what the run wrote,
            /// which may hold a value the run wrote that remembers the scope, and builds nothing from it again.
            ///
            /// Returns what it dropped, to be released after unlocking.
            private static func ended(_ scope: Scope, in root: Scope) -> [AnyBox] {
                // Read out of the lock: the root holds its own lookup weakly, and the reference read here may be the last.
                guard let own = root.withState({ $0.root!.own }), own.level === scope else { return [] }
                return root.withState { state -> [AnyBox] in
                    state.root!.ownRunEnded = true
                    return state.root!.cache.compactMap { id, entry in
                        guard case .ready(let box, fromRun: true) = entry else { return nil }
                        state.root!.cache[id] = nil
                        return box
                    }
                }
            }

            /// The box of a key's override in the running scope.
            ///
            /// A method of the run, so that the run, which holds the scope, is kept for the call, and the scope needs no
            /// retain of its own.
            @inline(__always)
            func box(for id: ObjectIdentifier) -> AnyBox? {
                scope.box(for: id)
            }
        }

        /// A scope opened now, ready to run: its lookup, and the lookup of the scope around it, which what its update
        /// closure makes remembers.
        @usableFromInline
        struct Opened {
            @usableFromInline
            let lookup: Lookup
            let around: Lookup?

            /// Runs the update closure and then the operation, with the scope's run bound.
            func run<R>(
                _ update: (inout InjectedValues) throws -> Void,
                _ operation: () throws -> R
            ) rethrows -> R {
                let thread = ThreadState.current
                let run = try start(update, on: thread)
                let context = Context(quiet: thread.context.quiet)
                return try binding.withValue(Binding(run: run)) { try thread.with(context, operation) }
            }

            /// Runs the update closure, in the new scope but outside its run, and starts the run.
            ///
            /// The closure reads and writes the new scope, but what it makes remembers the scope around, and tasks it
            /// starts are bound to the scope around: the new scope keeps what the closure sets, so nothing made there
            /// may hold the scope.
            @usableFromInline
            func start(_ update: (inout InjectedValues) throws -> Void) rethrows -> Run {
                try start(update, on: .current)
            }

            private func start(
                _ update: (inout InjectedValues) throws -> Void,
                on thread: ThreadState
            ) rethrows -> Run {
                var context = Context(quiet: thread.context.quiet)
                (context.base, context.made) = (lookup, around)
                (context.setsBase, context.setsMade, context.inUpdate) = (true, true, true)
                // `self`, which holds the lookups the context lends, is kept for the call.
                try thread.with(context) {
                    var values = InjectedValues()
                    try update(&values)
                }
                // A scope opened on no other level reads through no enclosing run, and the binding is not looked up.
                return Run(lookup, in: lookup.rest == nil ? nil : binding.get().run)
            }
        }

        /// The overrides, the cache and the phase, guarded by `lock`.
        struct State {
            /// What reads see: what the update closure set, and, while the scope runs, what is written in it.
            var overrides = Overrides()
            /// Once something is written while the scope runs, what `overrides` held before, which the scope keeps and
            /// goes back to when the run ends; `nil` while the two are the same.
            var kept: Overrides?
            var phase = Phase.settingUp
            /// What only a root keeps; `nil` for a level.
            var root: Root?
            /// While the scope runs: the runs started inside it that read through it, which its run passes its writes
            /// to when it ends, and the run it was started in, which it hands them to.
            var nestedRuns: [ObjectIdentifier: WeakRun]?
            var enclosingRun: EnclosingRun?
        }

        /// What a root keeps beside its overrides, guarded by its lock.
        struct Root {
            /// The `.cached` values, built or being built.
            var cache = [ObjectIdentifier: CacheEntry]()
            /// The keys in `cache` that a quiet read built from a default a test would report, and that no read has
            /// reported yet.
            var unreported = Swift.Set<ObjectIdentifier>()
            /// A fresh scope's root: the fresh scope's lookup, which its builds read through while it lives.
            weak var own: Lookup?
            /// A fresh scope's root: whether the run of the fresh scope's own level has ended.
            var ownRunEnded = false
            /// The global store's root: the threads that have a view of it, which its writes and resets update.
            var threads = [ObjectIdentifier: ThreadState]()
        }

        enum Phase {
            case settingUp, running, ended
        }

        /// A run, held weakly: a run's end must not wait for the runs around it or inside it.
        struct WeakRun: Sendable {
            weak let run: Run?
        }

        /// The run a scope's run was started in, held weakly, in a box, so that a scope's state holds one plain
        /// reference, which copies and moves as cheaply as its other fields.
        final class EnclosingRun: Sendable {
            weak let run: Run?

            init(_ run: Run) {
                self.run = run
            }
        }

        @exclusivity(unchecked) nonisolated(unsafe) var state = State()
        /// A root's policy for keys nothing overrides, in a test (or in a process that runs tests).
        let testPolicy: TestPolicy?
        /// A root's world, the outermost fresh scope's root it was opened in, or `nil` where that is itself.
        let world: Scope?

        /// The scope's lock, one of the stripes that its address picks.
        ///
        /// Shared, so that a scope, which a server makes for every request, costs no lock of its own. Scopes' locks are
        /// never held two at once, so sharing one costs at most a wait, never a deadlock. Assigned only in `init`.
        private(set) nonisolated(unsafe) var lock: PlainLock

        /// A level, or with a policy or a world, a root.
        init(root: Bool = false, testPolicy: TestPolicy? = nil, world: Scope? = nil) {
            self.testPolicy = testPolicy
            self.world = world
            if root { state.root = Root() }
            lock = PlainLock.stripes
            lock = .stripe(for: self)
        }

        /// Runs `body` with the state, holding the lock.
        @inline(__always)
        func withState<R>(_ body: (inout State) throws -> R) rethrows -> R {
            lock.lock()
            defer { lock.unlock() }
            return try body(&state)
        }

        /// The box of a key's override in this scope, looked up holding the lock.
        ///
        /// It returns the box rather than the value because an optional of a generic value type would cost every read a
        /// lookup of that optional's type metadata.
        @inline(__always)
        func box(for id: ObjectIdentifier) -> AnyBox? {
            withState { $0.overrides[id] }
        }

        /// The one rule for leaving a level out of a lookup being made: it has finished running and kept nothing, so
        /// it can add nothing to a read.
        var addsNothing: Bool {
            withState { state in
                guard case .ended = state.phase else { return false }
                return state.overrides.isEmpty
            }
        }

        /// Whether the scope runs and something has been written (or reset) in the run.
        var runHasWritten: Bool {
            withState { state in
                guard case .running = state.phase else { return false }
                return state.kept != nil
            }
        }

        /// Overrides a key unless the scope has ended having kept nothing (`addsNothing`), checked and written under
        /// one lock; says whether it wrote, and puts what the write replaced in `replaced`.
        @inline(__always)
        func writeUnlessLeftOut(_ box: AnyBox, for id: ObjectIdentifier, replaced: inout AnyBox?) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            switch state.phase {
            case .ended where state.overrides.isEmpty: return false
            case .running where state.kept == nil: state.kept = state.overrides
            default: break
            }
            replaced = state.overrides.updateValue(box, forKey: id)
            return true
        }

        /// Drops the overrides (while the scope runs, those the reads see), a root's cache, and the global store's
        /// threads' views of it, and returns what they held, to be released after unlocking.
        ///
        /// Builds in progress are dropped too: their builders still return what they build to their callers, but do not
        /// store it, so the next read after a reset builds again.
        func takeAll() -> [AnyBox] {
            withState { state in
                if case .running = state.phase, state.kept == nil { state.kept = state.overrides }
                var taken =
                    state.overrides.boxes + (state.root?.threads.values.flatMap { $0.removeViewEntries() } ?? [])
                state.overrides = Overrides()
                for case .ready(let box, _)? in state.root?.cache.values ?? [:].values { taken.append(box) }
                state.root?.cache = [:]
                state.root?.unreported = []
                // Threads waiting for a build that the reset dropped build it again.
                lock.broadcast()
                return taken
            }
        }

        /// Opens a scope on the lookup new things are made with now; fresh, with a root of its own.
        @usableFromInline
        static func opened(fresh: Bool) -> Opened {
            let around = Store.lookupToOpen()
            guard fresh else { return Opened(lookup: Lookup(Scope(), on: around), around: around) }
            // A fresh scope inside a test is still in the test, and outside every test of a process that runs tests,
            // it reads test values as the global store does.
            return openedFresh(around?.root?.testPolicy ?? Store.processPolicy, world: around?.world)
        }

        /// Opens a fresh scope: a level of its own on a root of its own, in `world`, or in a world of its own.
        static func openedFresh(_ testPolicy: TestPolicy?, world: Scope?) -> Opened {
            let root = Scope(root: true, testPolicy: testPolicy, world: world)
            let lookup = Lookup(level: Scope(), rest: nil, root: root)
            root.withState { $0.root!.own = lookup }
            return Opened(lookup: lookup, around: Lookup(level: nil, rest: nil, root: root))
        }

        /// Opens a scope on a captured lookup, seen from where it is opened.
        static func opened(on captured: Lookup?) -> Opened {
            let around = Store.lookupToOpen()
            return Opened(lookup: Lookup(Scope(), on: Lookup.made(around, captured)), around: around)
        }

        /// Opens a test's scope: fresh with `policy`, or, inside another test's scope, nested in it.
        static func opened(forTest policy: TestPolicy) -> Opened {
            if let outer = Store.lookupToOpen()?.root?.testPolicy, !outer.isProcessPolicy {
                return opened(fresh: false)
            }
            return openedFresh(policy, world: nil)
        }
    }
    @usableFromInline
    typealias AnyBox = any AnyObject & Sendable

    /// A scope's overrides, each a `Box` of its key's value type.
    ///
    /// Most scopes override one or two keys, a server's per-request scope among them, so up to two are kept in line,
    /// which costs such a scope no allocation and a read no hashing; past that, they move to a dictionary.
    struct Overrides: Sendable {
        private var storage = Storage.none

        private enum Storage: Sendable {
            case none
            case one(ObjectIdentifier, AnyBox)
            case two(ObjectIdentifier, AnyBox, ObjectIdentifier, AnyBox)
            case table([ObjectIdentifier: AnyBox])
        }

        var isEmpty: Bool {
            if case .none = storage { return true }
            return false
        }

        /// Every key and its box.
        var entries: [(id: ObjectIdentifier, box: AnyBox)] {
            switch storage {
            case .none: []
            case .one(let key, let box): [(key, box)]
            case .two(let firstKey, let first, let secondKey, let second): [(firstKey, first), (secondKey, second)]
            case .table(let table): table.map { ($0.key, $0.value) }
            }
        }

        /// Every box, for a reset.
        var boxes: [AnyBox] {
            switch storage {
            case .none: []
            case .one(_, let box): [box]
            case .two(_, let first, _, let second): [first, second]
            case .table(let table): Array(table.values)
            }
        }

        @inline(__always)
        subscript(id: ObjectIdentifier) -> AnyBox? {
            switch storage {
            case .none: nil
            case .one(let key, let box): key == id ? box : nil
            case .two(let firstKey, let first, let secondKey, let second):
                firstKey == id ? first : secondKey == id ? second : nil
            case .table(let table): table[id]
            }
        }

        /// Sets a key's box, and returns the one it replaces.
        mutating func updateValue(_ box: AnyBox, forKey id: ObjectIdentifier) -> AnyBox? {
            switch storage {
            case .none:
                storage = .one(id, box)
            case .one(let key, let old):
                storage = key == id ? .one(id, box) : .two(key, old, id, box)
                return key == id ? old : nil
            case .two(let firstKey, let first, let secondKey, let second) where firstKey == id || secondKey == id:
                storage = firstKey == id ? .two(id, box, secondKey, second) : .two(firstKey, first, id, box)
                return firstKey == id ? first : second
            case .two(let firstKey, let first, let secondKey, let second):
                storage = .table([firstKey: first, secondKey: second, id: box])
            case .table(var table):
                // Emptied first, so that `table` holds the dictionary's only reference and changing it copies nothing.
                storage = .none
                defer { storage = .table(table) }
                return table.updateValue(box, forKey: id)
            }
            return nil
        }
    }

    /// A value in the store, boxed so that one dictionary can hold values of every type.
    @usableFromInline
    final class Box<Value: Sendable>: Sendable {
        let value: Value

        @usableFromInline
        init(_ value: Value) {
            self.value = value
        }
    }

    /// The value in a box that the store made for a key whose value type is `Value`.
    ///
    /// The store files every box under its key's `ObjectIdentifier` and makes it from a value of that key's `Value`
    /// type, so the box found under a key is always a `Box<Value>`; `unsafeDowncast` skips the check that `as!` would
    /// make.
    private static func unbox<Value: Sendable>(_ box: AnyBox, as type: Value.Type) -> Value {
        unsafeDowncast(box, to: Box<Value>.self).value
    }

    /// The state of a `.cached` key in a root's cache.
    enum CacheEntry: Sendable {
        /// A thread is evaluating the key's `currentValue`; readers wait for it.
        case building(BuildTicket)
        /// The value, a `Box` of the key's value type, and whether it was built from what the run of a fresh scope's
        /// own level wrote, which the run's end drops.
        case ready(AnyBox, fromRun: Bool)
    }

    /// The global store and the operations on every scope.
    @usableFromInline
    enum Store {
        /// The global store's root: overrides made while no scope is active, and the process-wide cache of `.cached`
        /// values.
        static let global = Scope(root: true)

        /// The lock of the wait graph.
        ///
        /// It guards every `BuildTicket`'s `finished`, and every `ThreadState`'s `waitingFor` and `waitingKeys`. Taken
        /// last, after a root's lock.
        static let waits = Lock()

        /// The article-style variables' first reads and writers.
        static let variables = Variables()

        /// The policy of reads made outside every test, set when the process begins its first test; `nil` in a process
        /// that runs no tests.
        private static let processPolicyLock = Lock<TestPolicy?>(nil)

        /// The strict tests running now, in the order they began.
        static let strictTests = Lock<[TestPolicy]>([])

        /// The policy of reads made outside every test in a process that runs tests, or `nil`.
        static var processPolicy: TestPolicy? {
            processPolicyLock.withLock { $0 }
        }

        /// Makes the process one that runs tests, on its first test: from then on, reads outside every test's scope
        /// get test values, and are reported while strict tests run.
        static func beginTestProcess() {
            guard processPolicyLock.withLock({ $0 == nil }) else { return }
            let dropped: [AnyBox] = global.withState { state in
                let policy = TestPolicy(strict: true, report: nil)
                guard
                    processPolicyLock.withLock({ current in
                        guard current == nil else { return false }
                        current = policy
                        return true
                    })
                else { return [] }
                // Views answer reads of `.uncached` keys without asking the global store, which now has to decide.
                return state.root!.threads.values.flatMap { $0.removeViewEntries() }
            }
            withExtendedLifetime(dropped) {}
        }

        /// Runs `body` as a test with `policy`, counting it among the strict tests running if it is strict.
        static func runningTest<R>(_ policy: TestPolicy, _ body: () throws -> R) rethrows -> R {
            beginTest(policy)
            defer { endTest(policy) }
            return try body()
        }

        /// Runs the asynchronous `body` as a test with `policy`, like `runningTest(_:_:)`.
        static func runningTest<R>(
            _ policy: TestPolicy,
            isolation: isolated (any Swift.Actor)? = #isolation,
            _ body: () async throws -> R
        ) async rethrows -> R {
            beginTest(policy)
            defer { endTest(policy) }
            return try await body()
        }

        private static func beginTest(_ policy: TestPolicy) {
            beginTestProcess()
            if policy.strict { strictTests.withLock { $0.append(policy) } }
        }

        private static func endTest(_ policy: TestPolicy) {
            if policy.strict {
                strictTests.withLock { tests in _ = tests.remove(at: tests.lastIndex { $0 === policy }!) }
            }
        }

        // MARK: Where an operation looks

        /// What an operation on the current thread is for, which decides the lookup it uses.
        enum Purpose {
            case read, make, write
        }

        /// The one place that decides where an operation on this thread reads, makes things and writes, from the
        /// task-local binding and the thread's context.
        ///
        /// - Reads look through the context's `base`, or else the binding's lookup (`bound`), and then through the
        ///   lookup a property lends them, after the levels of the first it does not have (`Lookup.ordered`).
        /// - New properties, captures and scopes are made with the context's `made` (in an update closure, the scope
        ///   around; in a `.cached` default or an article-style initializer, none), or else where reads look, and with
        ///   the lent lookup made into one with it (`Lookup.made`).
        /// - Writes go to the first level of the context's `writes`, or else of the binding's lookup; outside any scope, a
        ///   property's own setter writes to the property's lookup. A `nil` lookup is the global store.
        @inline(__always)
        static func lookup(
            for purpose: Purpose,
            in context: Context,
            bound: @autoclosure () -> Lookup?
        ) -> Lookup? {
            switch purpose {
            case .read: return context.setsBase ? context.base : bound()
            case .make: return context.setsMade ? context.made : lookup(for: .read, in: context, bound: bound())
            case .write:
                let writes = context.setsBase ? context.base : bound()
                return writes == nil && context.lendsWrites ? context.lent : writes
            }
        }

        /// The lookup that a scope opened now is opened on: where reads look, in a `.cached` default or an article-style
        /// initializer, and else the lookup that what is made now keeps.
        @inline(__always)
        static func lookupToOpen() -> Lookup? {
            let context = ThreadState.currentContext
            return context.opensOnBase ? context.base : lookupToKeep(in: context)
        }

        /// The lookup that a property, a capture or a scope made now keeps.
        @inline(__always)
        static func lookupToKeep() -> Lookup? {
            lookupToKeep(in: ThreadState.currentContext)
        }

        /// `lookupToKeep()`, in `context`, the current thread's.
        static func lookupToKeep(in context: Context) -> Lookup? {
            let run = Scope.binding.get().run
            // In line, the common case: a property made in the running scope, which holds the binding's lookup.
            if context.makesAsBound, let run, run.lookup.rest?.keepsEveryLevel(running: nil) ?? true {
                return run.lookup
            }
            return Lookup.made(lookup(for: .make, in: context, bound: run?.lookup), context.lent, running: run?.scope)
        }

        // MARK: Reads

        /// Reads a key where `lookup(for:in:bound:)` says.
        ///
        /// Only where the read evaluates the default does it ask whether the key is an `InjectionKey`, whose
        /// `currentValue` the store reads holding the thread's variable lock.
        static func value<K: ReadOnlyInjectionKey>(for key: K.Type) -> K.Value {
            // The thread's state is looked up once, and retained only where the read reaches the global store. Of its
            // context, the common reads need only the flags and the lent lookup's identity; the others read it whole.
            let state = ThreadState.existing
            let (inLine, lent) = ThreadState.readsInLine(state)
            guard inLine else { return value(for: key, bound: nil) }
            guard let run = Scope.binding.get().run else {
                guard lent != nil, let state else {
                    return globalValue(for: key, on: state?.takeUnretainedValue() ?? ThreadState.current)
                }
                // A property made in a scope, read outside any: its lookup alone, and its first level in line.
                if let box = state.takeUnretainedValue().lent?.firstBox(for: ObjectIdentifier(key)) {
                    return unbox(box, as: K.Value.self)
                }
                return value(for: key, bound: nil)
            }
            // A property made in the running scope lends the binding's own lookup, which is no lookup of its own.
            if lent != nil, lent != run.id { return value(for: key, bound: run.lookup) }
            // The common scoped read, an override in the running scope, in line. The box is immutable and retained, so
            // its value is copied out after unlocking.
            if let box = run.box(for: ObjectIdentifier(key)) { return unbox(box, as: K.Value.self) }
            return value(for: key, in: run.lookup.rest, lent: nil, root: run.lookup.root, on: ThreadState.current)
        }

        /// Reads a key in a context that lends a lookup, sets one, or is the read half of a write through a key path;
        /// `bound` is the binding's lookup, when the caller has it.
        @inline(never)
        private static func value<K: ReadOnlyInjectionKey>(for key: K.Type, bound: Lookup?) -> K.Value {
            let thread = ThreadState.current
            let context = thread.context
            guard context.readHalf else {
                let (first, second) = Lookup.ordered(lookup(for: .read, in: context, bound: bound), context.lent)
                return value(for: key, in: first, lent: second, root: (second ?? first)?.root, on: thread)
            }
            // The reads a write through a key path makes before its first write through the store are the accessor's
            // getter, which Swift calls before the setter: they, and all they evaluate, are quiet. The first write ends
            // them (`endReadHalf()`); reads that the setter makes after it are its own.
            var quiet = context
            (quiet.readHalf, quiet.quiet) = (false, true)
            return thread.with(quiet) { value(for: key) }
        }

        /// Reads a key through `first`'s levels, until one of them is in `second`, then through `second`'s, and last
        /// from `root`.
        ///
        /// It walks in a loop, so that no length of lookup costs stack, and retains no scope on the way.
        private static func value<K: ReadOnlyInjectionKey>(
            for key: K.Type,
            in first: Lookup?,
            lent second: Lookup?,
            root: Scope?,
            on thread: ThreadState
        ) -> K.Value {
            let id = ObjectIdentifier(key)
            var node = first
            var next = second
            while true {
                if let current = node, let level = current.level {
                    if let lent = next, lent.contains(level) {
                        (node, next) = (lent, nil)
                        continue
                    }
                    if let box = level.box(for: id) { return unbox(box, as: K.Value.self) }
                    node = current.rest
                } else if let lent = next {
                    (node, next) = (lent, nil)
                } else {
                    guard let root else { return globalValue(for: key, on: thread) }
                    return rootValue(for: key, in: root, on: thread)
                }
            }
        }

        /// Reads a key from the global store, through the thread's view of it.
        private static func globalValue<K: ReadOnlyInjectionKey>(
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
        /// records what it found in the thread's view. What a quiet read in a test (the read half of a write through a
        /// key path) builds from a key with no test value is kept as unreported, so that the test's own first read of
        /// the key reports it.
        private static func rootValue<K: ReadOnlyInjectionKey>(
            for key: K.Type,
            in root: Scope,
            on thread: ThreadState
        ) -> K.Value {
            let id = ObjectIdentifier(key)
            let isGlobal = root === global
            // Read before locking: `lifetime` is the key's own code, which may read other dependencies.
            let lifetime = K.lifetime
            // A computed variable's getter that waits for another thread's build lets go of its variable lock while it
            // waits, since that build may write a variable; it takes it back once it has unlocked the root.
            var lentVariableLock = false
            defer { if lentVariableLock { thread.retakeVariableLock() } }
            root.lock.lock()
            while true {
                if let box = root.state.overrides[id] {
                    let value = unbox(box, as: K.Value.self)
                    if isGlobal { thread.addViewEntry(.value(Box(value)), for: id) }
                    root.lock.unlock()
                    return value
                }
                if lifetime == .uncached {
                    // In a process that runs tests, a read outside them may get a test value or be reported.
                    if isGlobal, Store.processPolicy == nil { thread.addViewEntry(.evaluate, for: id) }
                    root.lock.unlock()
                    return defaultValue(for: key, in: root, on: thread)
                }
                switch root.state.root!.cache[id] {
                case .ready(let box, _)?:
                    let value = unbox(box, as: K.Value.self)
                    if !root.state.root!.unreported.isEmpty, !thread.context.quiet,
                        root.state.root!.unreported.remove(id) != nil
                    {
                        // Built by a quiet read: this is the first read that reports it, and the view waits for it.
                        root.lock.unlock()
                        if let policy = root.testPolicy ?? (isGlobal ? processPolicy : nil) {
                            policy.reportMissingTestValue(of: key, inUpdate: thread.context.inUpdate)
                        }
                        return value
                    }
                    if isGlobal, !root.state.root!.unreported.contains(id) {
                        thread.addViewEntry(.value(Box(value)), for: id)
                    }
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
                    if !lentVariableLock { lentVariableLock = thread.lendVariableLock() }
                    root.lock.wait()
                    waits.withLock { thread.endWaiting() }
                case nil:
                    let ticket = BuildTicket(key: key, builder: thread)
                    root.state.root!.cache[id] = .building(ticket)
                    root.lock.unlock()
                    let (value, fromRun) = build(key, in: root, on: thread)
                    root.lock.lock()
                    waits.withLock { ticket.finish() }
                    root.lock.broadcast()
                    guard case .building(let current)? = root.state.root!.cache[id], current === ticket else {
                        // A reset dropped the build while it ran. The caller still gets the value it asked for, but the
                        // cache stays as the reset left it.
                        root.lock.unlock()
                        return value
                    }
                    guard !fromRun || !root.state.root!.ownRunEnded else {
                        // Built from what a run wrote, which has ended meanwhile: the value goes to its caller only.
                        root.state.root!.cache[id] = nil
                        root.lock.unlock()
                        return value
                    }
                    root.state.root!.cache[id] = .ready(Box(value), fromRun: fromRun)
                    if thread.context.quiet, !(key is any TestValueKey.Type),
                        root.testPolicy ?? (isGlobal && !K.currentValueIsVariable ? processPolicy : nil) != nil
                    {
                        root.state.root!.unreported.insert(id)
                        root.lock.unlock()
                        return value
                    }
                // The next turn finds the value ready (or an override written meanwhile) and returns it.
                }
            }
        }

        /// Evaluates a `.cached` key's default for the root that keeps it, outside every scope, and says whether it was
        /// built from what the run of a fresh scope's own level wrote.
        ///
        /// It reads and writes in the root's own lookup (a fresh scope's own level, while the scope lives, and its
        /// root), so that an override made by a nested scope is not baked into an instance every scope shares. What it
        /// makes and captures remembers no scope, and tasks it starts are bound to none: the value is shared by every
        /// scope of the root and outlives them, and a value in a root's cache that remembered the root, or a task that
        /// kept it, would keep it alive. A value built while the fresh scope's run had written something may hold what
        /// the run wrote, which may remember the scope: the root keeps it only while that run lasts.
        private static func build<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            in root: Scope,
            on thread: ThreadState
        ) -> (value: K.Value, fromRun: Bool) {
            let own =
                root === global ? nil : root.withState { $0.root!.own } ?? Lookup(level: nil, rest: nil, root: root)
            let wroteBefore = own?.level?.runHasWritten ?? false
            let value = thread.outsideEveryScope(in: own) { defaultValue(for: key, in: root, on: thread) }
            return (value, wroteBefore || own?.level?.runHasWritten ?? false)
        }

        /// Evaluates a key's default: its `currentValue`, or in a test's root its test value, if it declares one.
        ///
        /// A strict test reports, once per key, a key that has none, unless the read is quiet.
        private static func defaultValue<K: ReadOnlyInjectionKey>(
            for key: K.Type,
            in root: Scope,
            on thread: ThreadState
        ) -> K.Value {
            // An article-style key's variable is the global value itself, which writes assign, so the process's test
            // policy leaves it alone.
            let processPolicy = root === global && !K.currentValueIsVariable ? Store.processPolicy : nil
            guard let policy = root.testPolicy ?? processPolicy else { return thread.evaluate(key) }
            if let testKey = key as? any TestValueKey.Type {
                // The opened key is `K` itself, so its test value is a `K.Value`.
                return thread.evaluateTestValue(of: testKey) as! K.Value
            }
            if !thread.context.quiet { policy.reportMissingTestValue(of: key, inUpdate: thread.context.inUpdate) }
            return thread.evaluate(key)
        }

        // MARK: Writes

        /// Overrides a key where `lookup(for:in:bound:)` says writes go; outside any scope, an `InjectionKey`'s `currentValue`
        /// is assigned instead.
        ///
        /// `box` is a `Box` of `value`, made by the caller.
        @usableFromInline
        static func override<K: ReadOnlyInjectionKey>(_ key: K.Type, with value: K.Value, in box: AnyBox) {
            let context = ThreadState.currentContext
            guard !context.inKeyPathWrite else { return overrideInKeyPathWrite(key, with: value, in: box, context) }
            let id = ObjectIdentifier(key)
            var replaced: AnyBox?
            if let writes = lookup(for: .write, in: context, bound: Scope.binding.get().run?.lookup),
                writes.write(box, for: id, replaced: &replaced)
            {
                // Released here, outside the lock, because a value's deinit is user code.
                withExtendedLifetime(replaced) {}
            } else if let settable = key as? any InjectionKey.Type {
                assign(value, to: settable)
            } else {
                let dropped: [AnyBox] = global.withState { state in
                    var dropped = state.root!.threads.values.compactMap {
                        $0.removeViewEntry(for: id, overridden: true)
                    }
                    if let previous = state.overrides.updateValue(box, forKey: id) { dropped.append(previous) }
                    return dropped
                }
                withExtendedLifetime(dropped) {}
            }
        }

        /// Overrides a key in a write through a key path: the first such write ends the read half, and the getter's
        /// quiet read may have built the live default of the key the setter overrides, which is not kept for the rest
        /// of the test.
        @inline(never)
        private static func overrideInKeyPathWrite<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            with value: K.Value,
            in box: AnyBox,
            _ context: Context
        ) {
            let thread = ThreadState.current
            if context.readHalf { thread.endReadHalf() }
            var inWrite = thread.context
            inWrite.inKeyPathWrite = false
            thread.with(inWrite) { override(key, with: value, in: box) }
            let unused = dropQuietBuild(of: ObjectIdentifier(key), in: context)
            // Released here, outside the lock, because a value's deinit is user code.
            withExtendedLifetime(unused) {}
        }

        /// Drops, from the root a read in `context` reaches, a key's value that a quiet read built and no read has
        /// reported, and returns it, to be released after unlocking.
        @inline(never)
        private static func dropQuietBuild(of id: ObjectIdentifier, in context: Context) -> AnyBox? {
            let (first, second) = Lookup.ordered(
                lookup(for: .read, in: context, bound: Scope.binding.get().run?.lookup),
                context.lent
            )
            let root = (second ?? first)?.root ?? global
            return root.withState { state in
                guard state.root!.unreported.remove(id) != nil else { return nil }
                guard case .ready(let box, _)? = state.root!.cache.removeValue(forKey: id) else { return nil }
                return box
            }
        }

        /// Assigns a settable key's `currentValue`, for a write made outside any scope, so that the store and the key's
        /// own variable stay one value, as in the article.
        ///
        /// `value` is of the key's `Value` type; it comes in as `V` because the key's type was found at run time.
        @inline(never)
        private static func assign<K: InjectionKey, V>(_ value: V, to key: K.Type) {
            let value = value as! K.Value
            let id = ObjectIdentifier(key)
            let replaced: K.Value = variables.writing(key, on: ThreadState.current) {
                let replaced = K.currentValue
                variables.recordOriginal(of: key, replaced)
                K.currentValue = value
                return replaced
            }
            if K.lifetime == .cached {
                // The cached value was built from the default this write replaced.
                let dropped: [AnyBox] = global.withState { state in
                    var dropped = state.root!.threads.values.compactMap {
                        $0.removeViewEntry(for: id, overridden: false)
                    }
                    if case .ready(let box, _)? = state.root!.cache.removeValue(forKey: id) { dropped.append(box) }
                    global.lock.broadcast()
                    return dropped
                }
                withExtendedLifetime(dropped) {}
            }
            // Released here, outside the locks, because a value's deinit is user code.
            withExtendedLifetime(replaced) {}
        }

        /// Drops every override where writes go, and the cache of the root whose own level that is.
        static func reset() {
            let dropped: [AnyBox]
            let context = ThreadState.currentContext
            if context.readHalf { ThreadState.current.endReadHalf() }
            let writes = lookup(for: .write, in: context, bound: Scope.binding.get().run?.lookup)
            if let writes, let scope = writes.scopeToReset() {
                // A fresh scope's own level resets its root too. The root's own lookup is read out of its lock, since
                // the reference read may be the last.
                let own = writes.root.flatMap { root in root.withState { $0.root!.own } }
                let root = scope !== writes.root && own?.level === scope ? writes.root : nil
                dropped = scope.takeAll() + (root?.takeAll() ?? [])
                withExtendedLifetime(own) {}
            } else {
                // A global reset first assigns back what global writes replaced in settable keys' `currentValue`.
                let restored = variables.restoreAll(on: ThreadState.current)
                withExtendedLifetime(restored) {}
                dropped = global.takeAll()
            }
            // Released here, outside the lock, because a value's deinit is user code.
            withExtendedLifetime(dropped) {}
        }
    }
    // MARK: - Threads and cycle tracking

    /// What a thread's view of the global store holds for a key.
    enum ViewEntry: Sendable {
        /// The key's global override or cached value, in a `Box` of this thread's own, so that reading it writes to no
        /// reference count another thread's reads also write to.
        case value(AnyBox)
        /// Nothing overrides the key globally and its lifetime is `.uncached`: evaluate its default.
        case evaluate
    }

    /// The context of the library operation in progress on a thread, beyond the task-local binding.
    ///
    /// A synchronous entry point sets it for its own length and restores it; an operation nested in another starts from
    /// a context of its own, keeping only `quiet` (see `ThreadState.evaluating(_:_:)` and `Scope.Opened`), so that
    /// nothing set for one operation reaches another.
    struct Context: Sendable {
        // `unowned(unsafe)`: whoever sets a context holds these lookups strongly for the whole time it is set, and
        // restores the previous context before letting go of them. Strong references would make every read through a
        // property write to the reference count of a lookup that other threads read through too.
        unowned(unsafe) var base: Lookup?, made: Lookup?, lent: Lookup?
        /// `lent`'s identity, which compares without retaining it; set with it, by `lend(_:)`.
        var lentID: ObjectIdentifier?
        /// The flags below, one bit each, kept in one word so that copying a context copies no more than it needs.
        private var flags: UInt16 = 0

        private func flag(_ bit: UInt16) -> Bool { flags & bit != 0 }

        private mutating func set(_ bit: UInt16, _ value: Bool) {
            flags = value ? flags | bit : flags & ~bit
        }

        /// Whether the context sets `base`, which reads look through and writes go to the first level of, instead of the
        /// binding's lookup; a `nil` that is set is the global store.
        var setsBase: Bool {
            get { flag(1 << 0) }
            set { set(1 << 0, newValue) }
        }
        /// Whether the context sets `made`, what new properties, captures and scopes are made with, instead of where
        /// reads look; a `nil` that is set is no scope.
        var setsMade: Bool {
            get { flag(1 << 1) }
            set { set(1 << 1, newValue) }
        }
        /// Whether a write that has no scope to go to goes to `lent`'s first level: set for a property's own setter.
        var lendsWrites: Bool {
            get { flag(1 << 2) }
            set { set(1 << 2, newValue) }
        }
        /// Whether reads report nothing and, in a test, keep what they build unreported: the read half of a write
        /// through a key path, and everything it evaluates.
        var quiet: Bool {
            get { flag(1 << 3) }
            set { set(1 << 3, newValue) }
        }
        /// Whether reads through the store are the read half of a write through a key path: until its first write.
        var readHalf: Bool {
            get { flag(1 << 4) }
            set { set(1 << 4, newValue) }
        }
        /// Whether a write through a key path is in progress, whose writes drop what its quiet reads built of the keys
        /// they write.
        var inKeyPathWrite: Bool {
            get { flag(1 << 5) }
            set { set(1 << 5, newValue) }
        }
        /// Whether the read is made by an update closure, which a strict test's report says, since Swift writes part of
        /// a dependency (`$0.client.fetch = …`) by reading the whole of it first.
        var inUpdate: Bool {
            get { flag(1 << 6) }
            set { set(1 << 6, newValue) }
        }
        /// Whether scopes opened now are opened on `base`: in a `.cached` default or an article-style initializer, what
        /// is made remembers no scope, but a scope opened there reads where the default does.
        var opensOnBase: Bool {
            get { flag(1 << 7) }
            set { set(1 << 7, newValue) }
        }

        init(quiet: Bool = false) {
            self.quiet = quiet
        }

        /// Whether a read needs nothing of the context but the lent lookup, if any.
        var readsInLine: Bool { !setsBase && !readHalf }

        /// Whether what is made now is made with the binding's lookup alone.
        var makesAsBound: Bool { !setsBase && !setsMade && lentID == nil }

        /// Lends `lookup` to the reads that follow, and with `forWrite`, to the write.
        mutating func lend(_ lookup: Lookup, forWrite: Bool) {
            (lent, lentID) = (lookup, ObjectIdentifier(lookup))
            lendsWrites = forWrite
        }

        /// Ends a lending that followed none.
        mutating func endLending() {
            (lent, lentID) = (nil, nil)
            lendsWrites = false
        }
    }

    final class ThreadState: @unchecked Sendable {
        // `@unchecked Sendable` and `nonisolated(unsafe)`: other threads touch only `view`, holding `lock`, the wait
        // record, holding `Store.waits`, and `variableLock` itself; `own` is read and written only by the thread
        // that owns this state, whose thread-specific data it is.
        // `@exclusivity(unchecked)`: those same rules make every access to `view` and `own` exclusive, and no access
        // spans a call that could reach them again, so the runtime's check, a large part of a read's cost, is skipped.

        private let lock = Lock()
        /// Held while this thread reads an `InjectionKey`'s `currentValue` through the store, and by a writer to one.
        let variableLock = Lock()
        /// What this thread knows of the global store, written while holding both the global store's lock and `lock`,
        /// so that readers need only `lock`.
        @exclusivity(unchecked) private nonisolated(unsafe) var view = View()
        @exclusivity(unchecked) private nonisolated(unsafe) var own = Own()
        /// The build this thread waits for, and its stack when it began waiting.
        private nonisolated(unsafe) var waitingFor: BuildTicket?
        private nonisolated(unsafe) var waitingKeys: [Any.Type] = []

        /// A thread's view of the global store.
        private struct View: Sendable {
            /// Whether the global store's `threads` holds this state, so that writers keep the view up to date.
            var registered = false
            /// Whether the global store overrides any key, so that a read of an `.uncached` key needs no lookup when
            /// it does not.
            var globalOverrides = false
            /// Entries of the global store this thread has looked up: added by this thread only, removed by writers.
            var entries: [ObjectIdentifier: ViewEntry] = [:]
        }

        /// What only the thread that owns this state reads and writes.
        private struct Own: Sendable {
            /// The context of the operation in progress.
            var context = Context()
            /// The keys whose defaults this thread is evaluating, outermost first.
            var stack: [Any.Type] = []
            /// Which variable locks this thread holds.
            var variableLocks = VariableLocks.none
            /// The `InjectionKey`s whose first read (or a write's) has returned, as far as this thread knows.
            var initializedVariables = Keys()
        }

        /// Which variable locks a thread holds.
        enum VariableLocks {
            case none
            /// Its own, while it reads a variable.
            case own
            /// Every registered thread's, while it writes a variable.
            case all
        }

        /// This thread's state, made on first use and released when the thread exits.
        @inline(__always)
        static var current: ThreadState {
            if let state = existing { return state.takeUnretainedValue() }
            makeCurrent()
            return existing!.takeUnretainedValue()
        }

        /// This thread's state, unretained, or `nil` before the thread's first use of the library.
        ///
        /// `Unmanaged`: the thread-specific slot holds a reference to the state from `makeCurrent()` until the thread
        /// exits, and only this thread reads its slot, so the state outlives every use this thread makes of it; reads
        /// need not retain it. Every access to the slot's pointer is here, in `makeCurrent()`, and in the key's
        /// destructor.
        @inline(__always)
        static var existing: Unmanaged<ThreadState>? { pthread_getspecific(threadKey).map { .fromOpaque($0) } }

        /// Makes this thread's state, on its first use of the library, and gives the slot its reference.
        @inline(never)
        static func makeCurrent() {
            // The slot owns one reference, which the key's destructor takes back when the thread exits.
            pthread_setspecific(threadKey, Unmanaged.passRetained(ThreadState()).toOpaque())
        }

        // MARK: Context

        /// The lookup a property lends to this thread's reads, read in place.
        @inline(__always)
        var lent: Lookup? { own.context.lent }

        /// The context of the operation in progress on this thread; read by this thread only.
        var context: Context { own.context }

        /// Whether a read on the thread whose state is `state` needs nothing of its context but the identity of the
        /// lookup lent, if any, which comes with the answer; read in place, without retaining the state.
        @inline(__always)
        static func readsInLine(_ state: Unmanaged<ThreadState>?) -> (Bool, ObjectIdentifier?) {
            guard let context = state?.takeUnretainedValue().own.context else { return (true, nil) }
            return (context.readsInLine, context.lentID)
        }

        /// The context of the operation in progress on the current thread, read without retaining its state.
        @inline(__always)
        static var currentContext: Context {
            // Not `existing?…  ?? Context()`: `??` would copy the context through its type's value witnesses.
            guard let state = existing else { return Context() }
            return state.takeUnretainedValue().own.context
        }

        /// Runs `body` in `context`, then restores the context it replaced.
        @inline(__always)
        func with<T>(_ context: Context, _ body: () throws -> T) rethrows -> T {
            let outer = own.context
            own.context = context
            defer { own.context = outer }
            return try body()
        }

        /// Runs `body`, the read (or, with `forWrite`, the write) of a property that remembers `lookup`, lending it
        /// the lookup.
        @inline(__always)
        static func lending<T>(
            _ lookup: Lookup,
            forWrite: Bool = false,
            _ body: () throws -> T
        ) rethrows -> T {
            // Written out rather than through `with(_:_:)`: a nested closure here would cost each read a lookup of
            // generic metadata. The property that calls this holds `lookup` for the whole call. The state is reached
            // through its unretained reference at each use, which the thread-specific slot keeps alive until the thread
            // exits, so that a read retains nothing for it.
            let state =
                existing
                ?? {
                    makeCurrent()
                    return existing!
                }()
            if state.takeUnretainedValue().own.context.lentID != nil {
                return try lendingAgain(lookup, forWrite, state.takeUnretainedValue().own.context, body)
            }
            // Nothing was lent, so nothing needs restoring but what lending sets.
            state.takeUnretainedValue().own.context.lend(lookup, forWrite: forWrite)
            defer { state.takeUnretainedValue().own.context.endLending() }
            return try body()
        }

        /// Lends `lookup` where a read through another property lends one already, as in a default evaluated for that
        /// read: the reads look through the two lent lookups made into one, the outer one's levels first.
        @inline(never)
        private static func lendingAgain<T>(
            _ lookup: Lookup,
            _ forWrite: Bool,
            _ outer: Context,
            _ body: () throws -> T
        ) rethrows -> T {
            var context = outer
            let lent = Lookup.made(outer.lent, lookup) ?? lookup
            context.lend(lent, forWrite: forWrite)
            return try withExtendedLifetime(lent) { try current.with(context, body) }
        }

        /// Runs `body`, which makes a value that a root keeps for longer than any scope, outside every scope.
        ///
        /// It reads and writes through `lookup` (the root's own, or `nil` for the global store), what it makes and
        /// captures remembers no scope, and tasks it starts are bound to none; only `quiet` is kept.
        func outsideEveryScope<T>(in lookup: Lookup?, _ body: () -> T) -> T {
            var context = Context(quiet: own.context.quiet)
            (context.base, context.inUpdate) = (lookup, own.context.inUpdate)
            (context.setsBase, context.setsMade, context.opensOnBase) = (true, true, true)
            return withExtendedLifetime(lookup) {
                with(context) {
                    guard Scope.binding.get().run != nil else { return body() }
                    return Scope.binding.withValue(Scope.Binding(run: nil), operation: body)
                }
            }
        }

        /// Runs `body`, a write through a key path, noting that its first read through the store belongs to the
        /// write.
        func writingThroughKeyPath(_ body: () -> Void) {
            var context = own.context
            (context.readHalf, context.inKeyPathWrite) = (true, true)
            with(context, body)
        }

        /// Ends the read half of a write through a key path, once its read has returned.
        func endReadHalf() {
            own.context.readHalf = false
        }

        // MARK: View of the global store

        /// What the global store holds for a key, as far as this thread knows; `nil` when the thread must look.
        func viewEntry(for id: ObjectIdentifier, lifetime: InjectionLifetime) -> ViewEntry? {
            lock.withLock {
                if lifetime == .uncached, view.registered, !view.globalOverrides { return .evaluate }
                return view.entries[id]
            }
        }

        /// Records what the global store holds for a key, registering the thread with its writers first if need be.
        ///
        /// Called holding the global store's lock, by this thread, for a key its view has no entry for, so nothing is
        /// replaced.
        func addViewEntry(_ entry: ViewEntry, for id: ObjectIdentifier) {
            let global = Store.global
            if !view.registered {
                global.state.root!.threads[ObjectIdentifier(self)] = self
            }
            lock.withLock {
                if !view.registered {
                    view.registered = true
                    view.globalOverrides = !global.state.overrides.isEmpty || Store.processPolicy != nil
                }
                view.entries[id] = entry
            }
        }

        /// Removes a key's entry after a global write, and returns the value removed, if any, to be released after
        /// unlocking.
        ///
        /// Called holding the global store's lock.
        func removeViewEntry(for id: ObjectIdentifier, overridden: Bool) -> AnyBox? {
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
        func removeViewEntries() -> [AnyBox] {
            let removed = lock.withLock {
                defer {
                    view.entries = [:]
                    view.globalOverrides = Store.processPolicy != nil
                }
                return view.entries
            }
            return removed.values.compactMap { entry in
                guard case .value(let box) = entry else { return nil }
                return box
            }
        }

        /// Called when the thread exits.
        func unregister() {
            Store.global.withState { state in
                if view.registered { state.root!.threads[ObjectIdentifier(self)] = nil }
            }
            Store.variables.unregister(self)
        }

        // MARK: Defaults

        /// Evaluates a key's `currentValue` with the key on the stack, stopping the process if the key is already being
        /// evaluated on this thread.
        ///
        /// An `InjectionKey`'s variable is read holding this thread's variable lock.
        func evaluate<K: ReadOnlyInjectionKey>(_ key: K.Type) -> K.Value {
            evaluating(key) { K.currentValueIsVariable ? readVariable(key) : K.currentValue }
        }

        /// Evaluates a key's test value, with the key on the stack as `evaluate(_:variable:)` puts it.
        ///
        /// It returns `Any`, because its caller knows the key only at run time.
        func evaluateTestValue<K: TestValueKey>(of key: K.Type) -> Any {
            evaluating(key) { K.testValue }
        }

        /// Runs `body`, which evaluates one of `key`'s defaults, with the key on the stack, stopping the process if the
        /// key is already being evaluated on this thread.
        ///
        /// The default is part of the read that asked for it, so it reads where that read looks and its properties
        /// remember what that read's would; but it is a read of its own, not the read half of a write, and its writes
        /// go where a plain write would.
        @inline(__always)
        private func evaluating<T>(_ key: Any.Type, _ body: () -> T) -> T {
            if let index = own.stack.firstIndex(where: { $0 == key }) {
                dependencyCycle(Array(own.stack[index...]) + [key])
            }
            own.stack.append(key)
            let outer = own.context
            own.context.readHalf = false
            own.context.inKeyPathWrite = false
            own.context.lendsWrites = false
            defer {
                own.stack.removeLast()
                own.context = outer
            }
            return body()
        }

        // MARK: Article-style variables

        /// Reads an `InjectionKey`'s variable, holding this thread's variable lock, so that no write through the store
        /// assigns it meanwhile.
        ///
        /// The first read of a key on this thread may be the variable's first access, which runs its initializer: that
        /// read holds no lock, and `Store.variables` keeps writers off the key until it returns.
        func readVariable<K: ReadOnlyInjectionKey>(_ key: K.Type) -> K.Value {
            guard case .none = own.variableLocks else {
                // A getter, setter or observer of a variable, which runs holding the locks already.
                return K.currentValue
            }
            let id = ObjectIdentifier(key)
            if !own.initializedVariables.contains(id) { return firstReadOfVariable(key, id) }
            variableLock.lock()
            own.variableLocks = .own
            defer {
                own.variableLocks = .none
                variableLock.unlock()
            }
            return K.currentValue
        }

        /// Reads a key's variable for the first time on this thread: without a lock if it is the first read anywhere,
        /// and else as every later read is.
        ///
        /// Kept out of line, so that the common path does not look up the metadata of an optional of the value's type.
        @inline(never)
        private func firstReadOfVariable<K: ReadOnlyInjectionKey>(
            _ key: K.Type,
            _ id: ObjectIdentifier
        ) -> K.Value {
            let value = Store.variables.firstRead(key, on: self) { outsideEveryScope(in: nil) { K.currentValue } }
            own.initializedVariables.insert(id)
            if let value { return value }
            return readVariable(key)
        }

        /// Which variable locks this thread holds; read by this thread only.
        var variableLocks: VariableLocks {
            get { own.variableLocks }
            set { own.variableLocks = newValue }
        }

        /// Lets go of this thread's own variable lock, if it holds it (in a computed getter), before it waits for another
        /// thread, which may be writing a variable; returns whether it did.
        func lendVariableLock() -> Bool {
            guard case .own = own.variableLocks else { return false }
            own.variableLocks = .none
            variableLock.unlock()
            return true
        }

        /// Takes back the variable lock that `lendVariableLock()` let go of, holding no other lock.
        func retakeVariableLock() {
            variableLock.lock()
            own.variableLocks = .own
        }

        /// Notes that a key's variable has been read, so that this thread reads it under its lock from now on.
        func noteInitialized(_ id: ObjectIdentifier) {
            own.initializedVariables.insert(id)
        }

        // MARK: Waiting for builds

        /// The cycle that waiting for `ticket` would close, or `nil` when waiting is safe.
        ///
        /// Called holding `Store.waits`.
        ///
        /// A ticket that is not finished has a builder that is still evaluating the ticket's key. Following builders
        /// that wait for unfinished tickets, every step is a real read: each key on a builder's stack read the next
        /// one, and the innermost key of a waiting thread read the key of the ticket it waits for. If the chain comes
        /// back to this thread, those reads form a cycle; a finished ticket, or a builder that is not waiting, ends the
        /// chain.
        ///
        /// The walk ends: every thread waits for one ticket at most, and no chain of waits loops without this thread,
        /// because each thread checked, under this same lock, that it closed no loop when it began waiting.
        func cycle(waitingFor ticket: BuildTicket) -> [Any.Type]? {
            var chain: [Any.Type] = []
            var next = ticket
            while next.builder !== self {
                guard let blocker = next.builder.waitingFor, !blocker.finished else { return nil }
                chain += next.builder.waitingKeys.drop(while: { $0 != next.key })
                next = blocker
            }
            return Array(stack(before: ticket).drop(while: { $0 != next.key })) + chain + [next.key]
        }

        /// This thread's stack, less `ticket`'s key at its top: a thread that waits for another's first read of a
        /// variable has put the variable's key on its stack already, which a build's waiter has not.
        private func stack(before ticket: BuildTicket) -> ArraySlice<Any.Type> {
            ticket.isFirstRead && own.stack.last == ticket.key ? own.stack.dropLast() : own.stack[...]
        }

        /// The cycle that a read or write of `key` closes on this thread, which is evaluating it already.
        func cycle(closingAt key: Any.Type) -> [Any.Type] {
            Array(own.stack.drop(while: { $0 != key })) + [key]
        }

        /// Records that this thread waits for another thread's build.
        ///
        /// Called holding `Store.waits`.
        func beginWaiting(for ticket: BuildTicket) {
            waitingFor = ticket
            waitingKeys = Array(stack(before: ticket))
        }

        /// Records that this thread no longer waits.
        ///
        /// Called holding `Store.waits`.
        func endWaiting() {
            waitingFor = nil
            waitingKeys = []
        }
    }

    /// The article-style variables' side of the store: which threads read them, which have been initialized, and what
    /// global writes replaced.
    ///
    /// A big-reader lock. A thread reads a variable through the store holding its own `variableLock`; a writer holds
    /// every registered thread's, which it takes one at a time holding nothing else, and only one writer runs at once
    /// (`writer`). A variable's first read, which may run its initializer, holds no lock at all, so that an initializer
    /// that waits for another thread waits holding nothing. One thread makes it (`firstReaders`); another thread that
    /// reads or writes the variable meanwhile waits for it as for a build, in the wait graph, so that an initializer
    /// in a cycle of defaults across threads stops the process with the cycle instead of hanging.
    final class Variables: Sendable {
        /// What `lock` guards.
        private struct State: Sendable {
            /// The threads that read variables through the store, whose variable locks a writer takes.
            var readers: [ObjectIdentifier: ThreadState] = [:]
            /// The keys whose first read has returned.
            var initialized: Swift.Set<ObjectIdentifier> = []
            /// For each key whose first read is in progress, its ticket: the thread making it, and the key.
            var firstReaders: [ObjectIdentifier: BuildTicket] = [:]
            /// The thread that writes variables now, if any.
            var writer: ThreadState?
            /// For each settable key that global writes assigned since the last reset, what its `currentValue` held
            /// before the first of them.
            var originals: [ObjectIdentifier: any Restoring] = [:]
        }

        /// What a thread does about a variable, decided holding `lock`.
        private enum Step {
            /// Read it for the first time, as the ticket's builder.
            case read(BuildTicket)
            /// Wait for another thread's first read.
            case wait(BuildTicket)
            /// It has been read before.
            case initialized
            /// Write it, holding these readers' locks.
            case write([ThreadState])
        }

        private let lock = Lock(State())

        /// Registers `thread` as a reader, and, unless the key has been read before, runs `read`, its first read,
        /// holding no lock; returns what `read` returned, or `nil` if it did not run.
        ///
        /// While another thread makes the key's first read, this one waits for it, holding no lock.
        func firstRead<V>(_ key: Any.Type, on thread: ThreadState, _ read: () -> V) -> V? {
            let id = ObjectIdentifier(key)
            while true {
                // A thread that is not yet a reader waits for the writer, which did not take its lock.
                let step = lock.withLock(
                    waitingUntil: { $0.readers[ObjectIdentifier(thread)] != nil || $0.writer == nil }
                ) { state -> Step in
                    state.readers[ObjectIdentifier(thread)] = thread
                    if state.initialized.contains(id) { return .initialized }
                    if let ticket = state.firstReaders[id] { return .wait(ticket) }
                    let ticket = BuildTicket(key: key, builder: thread, isFirstRead: true)
                    state.firstReaders[id] = ticket
                    return .read(ticket)
                }
                switch step {
                case .read(let ticket):
                    let value = read()
                    lock.withLock { state in
                        state.initialized.insert(id)
                        state.firstReaders[id] = nil
                        Store.waits.withLock { ticket.finish() }
                        lock.broadcast()
                    }
                    return value
                case .wait(let ticket):
                    waitForFirstRead(ticket, on: thread)
                case .initialized, .write:
                    return nil
                }
            }
        }

        /// Waits, holding no lock, for another thread's first read of a variable, recorded in the wait graph; stops the
        /// process if waiting would close a cycle.
        private func waitForFirstRead(_ ticket: BuildTicket, on thread: ThreadState) {
            let id = ObjectIdentifier(ticket.key)
            Store.waits.lock()
            if let cycle = thread.cycle(waitingFor: ticket) {
                Store.waits.unlock()
                dependencyCycle(cycle)
            }
            thread.beginWaiting(for: ticket)
            Store.waits.unlock()
            let lent = thread.lendVariableLock()
            lock.withLock(waitingUntil: { $0.firstReaders[id] !== ticket }) { _ in }
            if lent { thread.retakeVariableLock() }
            Store.waits.withLock { thread.endWaiting() }
        }

        /// Runs `body`, which assigns `key`'s variable, holding every reader's variable lock.
        ///
        /// It first makes sure that the variable has been read once, running its initializer holding no lock, and
        /// waits, holding no lock, for a first read in progress and for another writer. A write made by a setter or
        /// observer that a write runs, which holds the locks already, runs at once. A write made while this thread
        /// reads a variable (in a computed getter, or a default it builds) lets go of its own lock while it runs.
        func writing<K: InjectionKey, R>(_ key: K.Type, on thread: ThreadState, _ body: () -> R) -> R {
            switch thread.variableLocks {
            case .all:
                return thread.with(Context(), body)
            case .own:
                // Taking every reader's lock while holding its own would wait for itself.
                thread.variableLocks = .none
                thread.variableLock.unlock()
                defer {
                    thread.variableLock.lock()
                    thread.variableLocks = .own
                }
                return writing(key, on: thread, body)
            case .none:
                break
            }
            let id = ObjectIdentifier(key)
            while true {
                let step = lock.withLock(
                    waitingUntil: { state in
                        state.firstReaders[id] != nil || state.writer == nil || !state.initialized.contains(id)
                    }
                ) { state -> Step in
                    if let ticket = state.firstReaders[id] { return .wait(ticket) }
                    guard state.initialized.contains(id) else { return .initialized }
                    state.writer = thread
                    return .write(Array(state.readers.values))
                }
                switch step {
                case .wait(let ticket) where ticket.builder === thread:
                    // This thread is making the variable's first read: its initializer, or a default that reads, writes
                    // the variable it is the initial value of.
                    dependencyCycle(thread.cycle(closingAt: key))
                case .wait(let ticket):
                    waitForFirstRead(ticket, on: thread)
                case .initialized:
                    // Not read yet: read it once, so that no write starts its initializer.
                    _ = firstRead(key, on: thread) { thread.outsideEveryScope(in: nil) { K.currentValue } }
                    thread.noteInitialized(id)
                case .write(let locked):
                    return exclusively(on: thread, holding: locked, body)
                case .read:
                    preconditionFailure("InjectedValues: a writer never makes a first read here")
                }
            }
        }

        /// Assigns back every original, and returns the values replaced, to be released after unlocking.
        func restoreAll(on thread: ThreadState) -> [Any] {
            switch thread.variableLocks {
            case .all:
                return restoreOriginals()
            case .own:
                thread.variableLocks = .none
                thread.variableLock.unlock()
                defer {
                    thread.variableLock.lock()
                    thread.variableLocks = .own
                }
                return restoreAll(on: thread)
            case .none:
                break
            }
            let locked = lock.withLock(waitingUntil: { $0.writer == nil }) { state in
                state.writer = thread
                return Array(state.readers.values)
            }
            return exclusively(on: thread, holding: locked) { restoreOriginals() }
        }

        /// Records what a key's variable held before the store's first write since the last reset.
        ///
        /// Called by a writer, holding every reader's variable lock.
        func recordOriginal<K: InjectionKey>(of key: K.Type, _ original: K.Value) {
            lock.withLock { state in
                let id = ObjectIdentifier(key)
                guard state.originals[id] == nil else { return }
                state.originals[id] = Original<K>(value: original)
            }
        }

        /// Called when a thread exits.
        func unregister(_ thread: ThreadState) {
            lock.withLock { $0.readers[ObjectIdentifier(thread)] = nil }
        }

        /// Runs `body` as the writer, holding every lock in `locked`, the registered readers' variable locks, in a
        /// context of its own.
        ///
        /// Called once this thread has become the writer; returns having stopped being it.
        private func exclusively<R>(
            on thread: ThreadState,
            holding locked: [ThreadState],
            _ body: () -> R
        ) -> R {
            // One writer at a time takes readers' locks, so the order among them does not matter; a reader holds only
            // its own. A reader registered from now on waits for this writer first.
            for reader in locked { reader.variableLock.lock() }
            thread.variableLocks = .all
            let result = thread.with(Context(), body)
            thread.variableLocks = .none
            for reader in locked { reader.variableLock.unlock() }
            lock.withLock { state in
                state.writer = nil
                lock.broadcast()
            }
            return result
        }

        /// Assigns back every original; called by a writer.
        private func restoreOriginals() -> [Any] {
            let restores = lock.withLock { state in
                defer { state.originals = [:] }
                return Array(state.originals.values)
            }
            return restores.map { $0.restore() }
        }

        /// What a settable key's variable held before the store's first write to it since the last reset.
        private struct Original<K: InjectionKey>: Restoring {
            let value: K.Value

            func restore() -> Any {
                let current = K.currentValue
                K.currentValue = value
                return current
            }
        }
    }

    /// A value that assigns something back and returns what it replaced.
    protocol Restoring: Sendable {
        func restore() -> Any
    }

    /// A set of keys, kept as a short list while it is short: most apps have a few article-style keys, and searching a
    /// few identifiers costs a read less than hashing one.
    struct Keys: Sendable {
        private var few: [ObjectIdentifier] = []
        private var many: Swift.Set<ObjectIdentifier> = []
        private static let listLimit = 16

        @inline(__always)
        func contains(_ id: ObjectIdentifier) -> Bool {
            guard many.isEmpty else { return many.contains(id) }
            for key in few where key == id { return true }
            return false
        }

        mutating func insert(_ id: ObjectIdentifier) {
            guard !contains(id) else { return }
            guard many.isEmpty, few.count < Self.listLimit else {
                many.formUnion(few)
                few = []
                many.insert(id)
                return
            }
            few.append(id)
        }
    }

    /// One thread's build of one `.cached` key in one root.
    final class BuildTicket: Sendable {
        let key: Any.Type
        let builder: ThreadState
        /// Whether it stands for a variable's first read, whose waiters have put the key on their stacks already, as a
        /// `.cached` build's waiters have not.
        let isFirstRead: Bool
        /// Whether the builder has its value; from then on nobody waits for this ticket.
        ///
        /// Set, once, holding `Store.waits`, so that a thread holding `Store.waits` sees every ticket as it is.
        private let state = Lock(false)

        init(key: Any.Type, builder: ThreadState, isFirstRead: Bool = false) {
            self.key = key
            self.builder = builder
            self.isFirstRead = isFirstRead
        }

        var finished: Bool { state.withLock { $0 } }

        /// Called holding `Store.waits`.
        func finish() {
            state.withLock { $0 = true }
        }
    }

    /// The thread-specific data key under which each thread keeps its `ThreadState`.
    private static let threadKey: pthread_key_t = {
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
    private static func missingTestValueMessage(for key: Any.Type) -> String {
        """
        InjectedValues: the test read \(key), which nothing overrides and which has no test value, so it used the \
        live default. To fix it, override the dependency in the test's update closure \
        (.injectedValues { $0.… = mock }), which sets it without evaluating the live one, or give the key a value \
        for every test: extension \(key): TestValueKey { static var testValue: … { … } }. (.injecting(\\.…, mock) \
        sets it too, but first builds the live one once, since Swift reads a key path before writing through it.)
        """
    }

    /// What a strict test reports about a key its update closure read with neither an override nor a test value: most
    /// often the read Swift makes to write part of a dependency.
    private static func partialWriteMessage(for key: Any.Type) -> String {
        """
        InjectedValues: the test's update closure read \(key), which nothing overrides and which has no test value, so \
        it used the live default. Writing part of a dependency, as $0.client.fetch = … does, reads the whole \
        dependency first. To fix it, set the whole dependency in the update closure, as $0.client = \
        Client(fetch: …), or give the key a value for every test: \
        extension \(key): TestValueKey { static var testValue: … { … } }.
        """
    }

    /// What a strict test reports about a key read outside every test's scope with neither an override nor a test
    /// value.
    private static func escapingReadMessage(for key: Any.Type) -> String {
        """
        InjectedValues: work outside every test's scope (a Dispatch queue, a Thread, a detached task, a callback) \
        read \(key), which nothing overrides and which has no test value, so it used the live default. To fix it, \
        give the key a value for every test: extension \(key): TestValueKey { static var testValue: … { … } }, or \
        run the work in the test's scope: capture it with InjectedValues.capture() where the work is handed off, \
        and call scope.run { … } where it runs.
        """
    }

    /// Stops the process because defaults read each other in a cycle.
    private static func dependencyCycle(_ keys: [Any.Type]) -> Never {
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

    /// A POSIX mutex and condition variable, and the state they guard.
    ///
    /// `State` is `Void` for a lock whose owner keeps the state it guards in its own stored properties.
    final class Lock<State: Sendable>: @unchecked Sendable {
        // `@unchecked Sendable` and `nonisolated(unsafe)`: `state` is read and written only in `withLock`, holding the
        // mutex, which the lock destroys only in `deinit`, when no thread can be holding or waiting on it.
        private let plain = PlainLock()
        private nonisolated(unsafe) var state: State

        init(_ state: State) {
            self.state = state
        }

        deinit {
            plain.destroy()
        }

        func lock() {
            plain.lock()
        }

        func unlock() {
            plain.unlock()
        }

        /// Runs `body` holding the lock, with the state it guards, once `ready` says the state is ready for it.
        ///
        /// Until then it waits, giving up the lock, for another thread to call `broadcast()`. The state is only ever
        /// touched here, never across a wait, which is why waiting is part of this method and not of `body`.
        func withLock<R>(
            waitingUntil ready: (State) -> Bool = { _ in true },
            _ body: (inout State) throws -> R
        ) rethrows -> R {
            plain.lock()
            defer { plain.unlock() }
            while !ready(state) { plain.wait() }
            return try body(&state)
        }

        /// Wakes every thread waiting for the state to be ready.
        ///
        /// Called holding the lock.
        func broadcast() {
            plain.broadcast()
        }
    }

    /// A POSIX mutex and condition variable, for an owner that keeps the state they guard in its own stored
    /// properties, as a scope does, and destroys them in its `deinit`.
    ///
    /// A struct, so that an owner needs no second object for its lock. Copies refer to the same mutex.
    struct PlainLock {
        // The pointer: a POSIX mutex and condition variable are made to be used from many threads. They live together in
        // memory allocated here, so their addresses never change. A lock of its own is destroyed only by its owner's
        // `deinit`, when no thread can be holding or waiting on it: every use of a copy is made while the owner is
        // held, as `self`, an argument, or a local a closure captures for the call. A stripe is never destroyed.
        private nonisolated(unsafe) let primitives: UnsafeMutablePointer<Primitives>

        /// The mutex and the condition variable, side by side in one allocation.
        private struct Primitives {
            var mutex = pthread_mutex_t()
            var condition = pthread_cond_t()
        }

        /// A lock of its own, which its owner destroys in its `deinit`.
        init() {
            self.init(count: 1)
        }

        /// The first of `count` locks, side by side in one allocation.
        private init(count: Int) {
            primitives = .allocate(capacity: count)
            for offset in 0..<count { PlainLock(self, offset: offset).initialize() }
        }

        /// The lock `offset` places after `base`.
        private init(_ base: PlainLock, offset: Int) {
            primitives = base.primitives + offset
        }

        /// The stripe that an object's address picks, among 256 locks shared by every scope and never destroyed.
        static func stripe(for object: AnyObject) -> PlainLock {
            let address = UInt(bitPattern: ObjectIdentifier(object))
            return PlainLock(stripes, offset: Int((address >> 4 ^ address >> 12) & 255))
        }

        /// The scopes' locks, the first of them.
        static let stripes = PlainLock(count: 256)

        /// Makes the mutex and the condition variable.
        private func initialize() {
            primitives.initialize(to: Primitives())
            let mutexStatus = pthread_mutex_init(&primitives.pointee.mutex, nil)
            precondition(mutexStatus == 0, "InjectedValues: pthread_mutex_init failed with \(mutexStatus)")
            let conditionStatus = pthread_cond_init(&primitives.pointee.condition, nil)
            precondition(conditionStatus == 0, "InjectedValues: pthread_cond_init failed with \(conditionStatus)")
        }

        /// Destroys the mutex and condition variable of a lock of its own, from the owner's `deinit`.
        func destroy() {
            pthread_cond_destroy(&primitives.pointee.condition)
            pthread_mutex_destroy(&primitives.pointee.mutex)
            primitives.deinitialize(count: 1)
            primitives.deallocate()
        }

        func lock() {
            pthread_mutex_lock(&primitives.pointee.mutex)
        }

        func unlock() {
            pthread_mutex_unlock(&primitives.pointee.mutex)
        }

        /// Runs `body` holding the lock.
        @inline(__always)
        func withLock<R>(_ body: () throws -> R) rethrows -> R {
            lock()
            defer { unlock() }
            return try body()
        }

        /// Gives up the lock until another thread calls `broadcast()`, then takes it again.
        ///
        /// Called holding the lock. Callers check their condition again afterwards, as a wake-up may be spurious.
        func wait() {
            pthread_cond_wait(&primitives.pointee.condition, &primitives.pointee.mutex)
        }

        /// Wakes every thread waiting in `wait()`.
        ///
        /// Called holding the lock.
        func broadcast() {
            pthread_cond_broadcast(&primitives.pointee.condition)
        }
    }
}

nonisolated extension InjectedValues.Lock where State == Void {
    convenience init() {
        self.init(())
    }

    /// Runs `body` holding the lock.
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        try plain.withLock(body)
    }
}
