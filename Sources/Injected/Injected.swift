// Injected: environment-style dependency injection for Swift, race-free under Swift 6.
//
// This file is the whole library. It imports only the standard library and the platform's C module, so it can be
// copied into an app or a package as it is. It compiles without warnings in Swift 6 language mode with complete
// concurrency checking and in Swift 5 language mode, with a Swift 6.0 or newer compiler.

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

/// A key that names one dependency in ``InjectedValues`` and supplies its default value.
///
/// Declare a key for each dependency, usually as a `private` type, and expose the dependency through a computed
/// accessor in an extension of ``InjectedValues``. The accessor is what code reads and overrides; the key stays
/// hidden, so the module that owns the dependency decides its default.
///
/// ```swift
/// private enum NetworkProviderKey: InjectionKey {
///     static var currentValue: any NetworkProviding { NetworkProvider() }
///     static var lifetime: InjectionLifetime { .cached }
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
/// `currentValue` only has to be readable, so every common declaration conforms: a stored `static var` (in Swift 6
/// mode marked `nonisolated(unsafe)`), a `static let`, an optional with no initial value, a computed property, or a
/// service type that is its own key. ``Value`` has no `Sendable` requirement: the store that holds overrides and
/// cached values is protected by a lock, whatever the values are.
///
/// > Important: While nothing overrides the key, what a read returns depends on ``lifetime``. With the default,
/// > ``InjectionLifetime/uncached``, every read asks `currentValue` again, so a computed `currentValue` makes a new
/// > instance per read. See ``InjectionLifetime``.
public protocol InjectionKey {
    /// The type of the dependency this key stands for.
    associatedtype Value

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

extension InjectionKey {
    /// The default lifetime, ``InjectionLifetime/uncached``: every read asks the key's `currentValue`.
    public static var lifetime: InjectionLifetime { .uncached }
}

/// How often a key's default value is evaluated while nothing overrides the key.
///
/// Choose the lifetime that matches the key's `currentValue`:
///
/// | Declaration | `.uncached` | `.cached` |
/// |---|---|---|
/// | `static var currentValue = Service()` | one shared instance, made on first read | the same |
/// | `static var currentValue: Service { Service() }` | a new instance per read (a factory) | one instance, made on first read |
///
/// `.cached` is the Swift 6 way to have a lazily created singleton of a type that is not `Sendable`: a computed
/// `currentValue` needs no `nonisolated(unsafe)`, and the store builds it exactly once.
public enum InjectionLifetime: Sendable, Hashable {
    /// Every read asks the key's `currentValue`.
    ///
    /// The key's declaration decides what a read returns: a stored static is one shared instance, a computed property
    /// makes a new instance per read, and a direct write to `Key.currentValue` is what the next read returns.
    case uncached

    /// The first read evaluates `currentValue`, and every later read returns that same instance until
    /// ``InjectedValues/reset()``.
    ///
    /// The value is built exactly once, even when many threads read it for the first time at the same moment: one
    /// thread builds it while the others wait. It is cached in the global store, or in the fresh scope that is
    /// active (see ``withInjectedValues(fresh:_:operation:)``), and it is built in that store's context, so an
    /// override made by a nested scope never leaks into a shared instance.
    case cached
}

// MARK: - Values

/// The store of dependencies: read, override and reset them through its static subscripts.
///
/// Each dependency is an accessor declared in an extension of `InjectedValues`, backed by an ``InjectionKey``.
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
///   ``InjectionKey/lifetime``. A fresh scope ends the search at itself.
/// - A **write** overrides the key in the innermost active scope, or in the global store when no scope is active.
///   Every later read in that scope sees it, including reads through objects created before the write.
///
/// An accessor may be written with the static subscript, `Self[Key.self]`, as in the article that introduced the
/// pattern, or with the instance subscript, `self[Key.self]`, as in SwiftUI. Both behave identically.
///
/// > Important: Writing `InjectedValues[Key.self] = value` overrides the key in the store. It does not assign
/// > `Key.currentValue`, so the key's own default is untouched and ``reset()`` brings it back.
public struct InjectedValues: Sendable {
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
    /// the innermost active scope, or in the global store when no scope is active.
    ///
    /// - Parameter key: The key of the dependency.
    public static subscript<K: InjectionKey>(key: K.Type) -> K.Value {
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
    /// with the result.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of `InjectedValues`.
    public static subscript<T>(_ keyPath: WritableKeyPath<InjectedValues, T>) -> T {
        get { InjectedValues()[keyPath: keyPath] }
        set {
            var values = InjectedValues()
            values[keyPath: keyPath] = newValue
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
    /// It behaves exactly like the static subscript `InjectedValues[Key.self]`: an instance carries no state of its own.
    ///
    /// - Parameter key: The key of the dependency.
    public subscript<K: InjectionKey>(key: K.Type) -> K.Value {
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
    /// ```swift
    /// InjectedValues[\.networkProvider] = MockedNetworkProvider()
    /// InjectedValues.reset()   // reads return the key's default again
    /// ```
    public static func reset() {
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
/// In such a class, read the dependency in a computed property instead:
/// `var clock: any Clock { InjectedValues[\.clock] }`.
///
/// > Important: The property remembers the scope that was active when it was created. When it is read or written by
/// > code running outside any scope, such as a callback on another thread or a detached task, it resolves in that
/// > remembered scope while the scope's operation is running. Once the operation has returned, and inside any
/// > scope, it resolves where it is used.
@propertyWrapper
public struct Injected<Value> {
    private let keyPath: KeyPath<InjectedValues, Value>
    /// The scope active at creation, reachable while that scope's operation runs; `nil` outside any scope.
    private let anchor: ScopeAnchor?
    /// Where a read-only property was declared, for the message when code writes to it; `nil` for writable ones.
    private let readOnlyDeclaration: ReadOnlyDeclaration?

    /// Creates a property that reads and writes the dependency at a key path.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of ``InjectedValues``.
    public init(_ keyPath: WritableKeyPath<InjectedValues, Value>) {
        self.keyPath = keyPath
        self.anchor = InjectionScope.current?.anchor
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
    public init(_ keyPath: KeyPath<InjectedValues, Value>, file: StaticString = #fileID, line: UInt = #line) {
        self.keyPath = keyPath
        self.anchor = InjectionScope.current?.anchor
        self.readOnlyDeclaration = ReadOnlyDeclaration(file: file, line: line)
    }

    /// The dependency, resolved on every access.
    ///
    /// Setting it overrides the dependency in the innermost active scope (or the remembered scope, when set from
    /// outside any scope while that scope's operation runs), exactly like writing `InjectedValues[keyPath] = newValue`.
    public var wrappedValue: Value {
        get {
            guard anchor != nil else { return InjectedValues[keyPath] }
            // Rather than look up the current scope here and again in the store, the property lends its anchor to
            // the reads its key path makes, and the store uses it only where no scope is active.
            return ThreadState.current._withUnsafeGuaranteedRef { thread in
                thread.remembering(anchor.map(Unmanaged.passUnretained)) { InjectedValues[keyPath] }
            }
        }
        nonmutating set {
            guard let writable = keyPath as? WritableKeyPath<InjectedValues, Value> else {
                fatalError(readOnlyWriteMessage())
            }
            // A write goes to the active scope, which the store takes from the task-local binding alone, so from
            // outside any scope the property binds its remembered scope itself, while that scope's operation runs.
            guard let anchor, InjectionScope.current == nil, let scope = anchor.scope else {
                InjectedValues[writable] = newValue
                return
            }
            InjectionScope.$current.withValue(scope) { InjectedValues[writable] = newValue }
        }
    }

    private func readOnlyWriteMessage() -> String {
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
    let file: StaticString
    let line: UInt

    init(file: StaticString, line: UInt) {
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
/// `Task.detached` or other threads. An ``Injected`` property created inside the scope resolves there when read from
/// outside any scope while the operation runs.
///
/// - Parameters:
///   - fresh: Whether the scope starts from nothing. A fresh scope ignores the global store and every scope around
///     it, so reads start from the keys' defaults, and it has its own cache of ``InjectionLifetime/cached`` values.
///     Tests use fresh scopes to be independent of each other. The default is `false`.
///   - update: A closure that overrides dependencies in the new scope.
///   - operation: The code to run in the new scope.
/// - Returns: The value the operation returns.
@discardableResult
public func withInjectedValues<R>(
    fresh: Bool = false,
    _ update: (inout InjectedValues) throws -> Void,
    operation: () throws -> R
) rethrows -> R {
    let scope = InjectionScope.makeNested(fresh: fresh)
    defer { scope.end() }
    return try InjectionScope.$current.withValue(scope) {
        var values = InjectedValues()
        try update(&values)
        return try operation()
    }
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
///   - update: A closure that overrides dependencies in the new scope.
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
    let scope = InjectionScope.makeNested(fresh: fresh)
    defer { scope.end() }
    return try await InjectionScope.$current.withValue(scope) {
        var values = InjectedValues()
        try update(&values)
        return try await operation()
    }
}

// MARK: - Storage

/// One level of overrides: the global store, or a scope opened by `withInjectedValues`.
///
/// A scope's `parent` is the scope that was active when it was opened. The global store and fresh scopes have no
/// parent; they are the roots, and they hold the cache of `.cached` values for every scope below them.
final class InjectionScope: @unchecked Sendable {
    // `@unchecked Sendable`: the dictionaries behind `overrides` and `cache` are read only under a thread's shared
    // hold of `InjectionStore.lock` and written only under its exclusive hold; every stored property is immutable.

    /// The innermost active scope of the current task, or `nil` when only the global store is active.
    ///
    /// `nil` rather than the global store itself, because reading a bound object retains it: on the common path,
    /// with no scope, every read on every thread would then write to the global store's reference count.
    @TaskLocal static var current: InjectionScope?

    /// The innermost active scope, or the global store.
    static var active: InjectionScope { current ?? InjectionStore.global }

    let parent: InjectionScope?
    /// What `@Injected` properties created in this scope hold; `nil` for the global store.
    let anchor: ScopeAnchor?
    /// Overridden values, each retained once, by hand.
    ///
    /// `Unmanaged`, so that reading one on the hot path touches no reference count that other threads' reads also
    /// touch. `takeAll()` and `deinit` release them.
    ///
    /// The dictionary lives behind a pointer, allocated with the scope, for the same reason: a dictionary stored in
    /// a class property is copied out to be read, which retains its storage, while `pointee` lends it in place.
    let overrides: UnsafeMutablePointer<[ObjectIdentifier: Unmanaged<Slot>]>
    /// Values of `.cached` keys built in this root, behind a pointer like `overrides`.
    let cache: UnsafeMutablePointer<[ObjectIdentifier: CacheSlot]>

    init(parent: InjectionScope?, isGlobal: Bool = false) {
        self.parent = parent
        self.anchor = isGlobal ? nil : ScopeAnchor()
        overrides = .allocate(capacity: 1)
        overrides.initialize(to: [:])
        cache = .allocate(capacity: 1)
        cache.initialize(to: [:])
        anchor?.storedScope = self
    }

    deinit {
        for slot in takeAll() { slot.release() }
        overrides.deinitialize(count: 1)
        overrides.deallocate()
        cache.deinitialize(count: 1)
        cache.deallocate()
    }

    /// Removes every override and cached value, and returns their slots, to be released once the lock is given up
    /// because a value's `deinit` is user code.
    func takeAll() -> [Unmanaged<Slot>] {
        var slots = Array(overrides.pointee.values)
        for case .ready(let slot) in cache.pointee.values { slots.append(slot) }
        overrides.pointee = [:]
        cache.pointee = [:]
        return slots
    }

    /// Ends the scope's operation: properties created in it stop resolving here from outside any scope, and the
    /// link between the scope and its anchor is broken, so neither keeps the other alive.
    func end() {
        _ = anchor?.clear()
    }

    /// A scope for `withInjectedValues`, nested in the innermost active one unless it is fresh.
    static func makeNested(fresh: Bool) -> InjectionScope {
        InjectionScope(parent: fresh ? nil : active)
    }
}

/// What an `@Injected` property remembers of the scope it was created in.
///
/// A weak reference to the scope would give the scope a side table, which makes every retain and release of it,
/// on every read, take the runtime's slow path. Instead the scope points its anchor at itself while its operation
/// runs, and `InjectionScope.end()` clears it.
final class ScopeAnchor: @unchecked Sendable {
    // `@unchecked Sendable`: `storedScope` is set before the anchor is shared, and afterwards read and cleared only
    // while holding the lock's registry mutex.
    @exclusivity(unchecked) var storedScope: InjectionScope?

    /// The scope, while its operation runs.
    var scope: InjectionScope? {
        InjectionStore.lock.withRegistry { storedScope }
    }

    /// Forgets the scope, and returns it so that the caller releases it outside the lock.
    func clear() -> InjectionScope? {
        InjectionStore.lock.withRegistry {
            defer { storedScope = nil }
            return storedScope
        }
    }
}

/// A value in the store, held in memory of its own so that reading it needs only the key's value type, not the
/// metadata of a generic box.
final class Slot {
    private let storage: UnsafeMutableRawPointer
    private let destroy: (UnsafeMutableRawPointer) -> Void

    init<Value>(_ value: Value) {
        let typed = UnsafeMutablePointer<Value>.allocate(capacity: 1)
        typed.initialize(to: value)
        storage = UnsafeMutableRawPointer(typed)
        destroy = { storage in
            storage.assumingMemoryBound(to: Value.self).deinitialize(count: 1)
            storage.deallocate()
        }
    }

    deinit {
        destroy(storage)
    }

    /// The value; `Value` must be the type the slot was created with, which the key's identity guarantees.
    func value<Value>(as type: Value.Type) -> Value {
        storage.assumingMemoryBound(to: Value.self).pointee
    }
}

/// The state of a `.cached` key in a root's cache.
enum CacheSlot {
    /// A thread is evaluating the key's `currentValue`; readers wait for it.
    case building(BuildTicket)
    /// The value, retained once by the cache, by hand.
    case ready(Unmanaged<Slot>)
}

/// The global store and the operations on every scope, all behind one lock.
enum InjectionStore {
    /// The one lock that guards every scope's `overrides` and `cache`, and the wait state of each `ThreadState`.
    ///
    /// No user code (a key's `currentValue`, a value's `deinit`, a closure) ever runs while it is held.
    static let lock = InjectionLock()

    /// Overrides made while no scope is active, and the process-wide cache of `.cached` values.
    static let global = InjectionScope(parent: nil, isGlobal: true)

    static func value<K: InjectionKey>(for key: K.Type) -> K.Value {
        ThreadState.current._withUnsafeGuaranteedRef { value(for: key, on: $0) }
    }

    private static func value<K: InjectionKey>(for key: K.Type, on thread: ThreadState) -> K.Value {
        let id = ObjectIdentifier(key)
        let lifetime = K.lifetime
        // Nothing here is retained: the innermost scope is kept alive by its task-local binding for the whole of this
        // synchronous read, every scope keeps its parent alive, the global store lives forever, and the slots are
        // `Unmanaged`. A retain here would make every read, on every thread, write to the same reference count.
        unowned(unsafe) var scope: InjectionScope
        if let current = InjectionScope.current {
            scope = current
        } else if let anchor = thread.rememberedAnchor {
            return value(for: key, rememberedBy: anchor, on: thread)
        } else {
            scope = InjectionStore.global
        }
        thread.lockShared()
        while true {
            if !scope.overrides.pointee.isEmpty, let slot = scope.overrides.pointee[id] {
                let value = slot._withUnsafeGuaranteedRef { $0.value(as: K.Value.self) }
                thread.unlockShared()
                return value
            }
            guard let parent = scope.parent else { break }
            scope = parent
        }
        switch lifetime {
        case .uncached:
            thread.unlockShared()
            return thread.evaluate(key)
        case .cached:
            if case .ready(let slot)? = scope.cache.pointee[id] {
                let value = slot._withUnsafeGuaranteedRef { $0.value(as: K.Value.self) }
                thread.unlockShared()
                return value
            }
            thread.unlockShared()
            return cachedValue(for: key, in: scope, on: thread)
        }
    }

    /// Reads a key for an `@Injected` property that was created in a scope and is read from outside any scope: while
    /// that scope's operation runs, the read resolves there, as if it ran inside it.
    ///
    /// The anchor is forgotten for the read: when the scope is still running, its task-local binding takes the
    /// anchor's place for everything the read evaluates; when it has ended, the read resolves as if no property had
    /// lent an anchor. Kept out of line, so that the common path stays small.
    @inline(never)
    private static func value<K: InjectionKey>(
        for key: K.Type,
        rememberedBy anchor: Unmanaged<ScopeAnchor>,
        on thread: ThreadState
    ) -> K.Value {
        thread.remembering(nil) {
            guard let remembered = anchor.takeUnretainedValue().scope else { return value(for: key, on: thread) }
            return InjectionScope.$current.withValue(remembered) { value(for: key, on: thread) }
        }
    }

    /// Returns the cached value of a key in a root, building it if no thread has, or waiting for the thread that is.
    private static func cachedValue<K: InjectionKey>(
        for key: K.Type,
        in root: InjectionScope,
        on thread: ThreadState
    ) -> K.Value {
        let id = ObjectIdentifier(key)
        lock.lockExclusive()
        while true {
            switch root.cache.pointee[id] {
            case .ready(let slot):
                let value = slot._withUnsafeGuaranteedRef { $0.value(as: K.Value.self) }
                lock.unlockExclusive()
                return value
            case .building(let ticket):
                if let cycle = thread.cycle(waitingFor: ticket) {
                    lock.unlockExclusive()
                    dependencyCycle(cycle)
                }
                thread.beginWaiting(for: ticket)
                lock.waitExclusive()
                thread.endWaiting()
            case nil:
                let ticket = BuildTicket(key: key, builder: thread)
                root.cache.pointee[id] = .building(ticket)
                lock.unlockExclusive()
                let value = build(key, in: root, on: thread)
                let slot = Unmanaged.passRetained(Slot(value))
                lock.lockExclusive()
                var stored = false
                if case .building(let current) = root.cache.pointee[id], current === ticket {
                    root.cache.pointee[id] = .ready(slot)
                    stored = true
                }
                // Otherwise a reset dropped the slot while the value was being built. The caller still gets the value
                // it asked for, but the cache stays as the reset left it.
                lock.broadcast()
                lock.unlockExclusive()
                if !stored { slot.release() }
                return value
            }
        }
    }

    /// Evaluates a `.cached` key's default in the context of the root that caches it, so that an override made in a
    /// nested scope is not baked into an instance every scope shares.
    private static func build<K: InjectionKey>(
        _ key: K.Type,
        in root: InjectionScope,
        on thread: ThreadState
    ) -> K.Value {
        if InjectionScope.active === root {
            return thread.evaluate(key)
        }
        return InjectionScope.$current.withValue(root) { thread.evaluate(key) }
    }

    static func override<K: InjectionKey>(_ key: K.Type, with value: K.Value) {
        let slot = Unmanaged.passRetained(Slot(value))
        let scope = InjectionScope.active
        lock.lockExclusive()
        let previous = scope.overrides.pointee.updateValue(slot, forKey: ObjectIdentifier(key))
        lock.unlockExclusive()
        // The previous value is released here, outside the lock, because its deinit is user code.
        previous?.release()
    }

    static func reset() {
        let scope = InjectionScope.active
        lock.lockExclusive()
        let dropped = scope.takeAll()
        lock.unlockExclusive()
        // The dropped values are released here, outside the lock, because their deinits are user code.
        for slot in dropped { slot.release() }
    }
}

// MARK: - Threads and cycle tracking

/// What the library keeps for each thread that uses it: the thread's read mutex, and the keys whose defaults it is
/// evaluating.
///
/// A key's `currentValue` is synchronous, so a chain of defaults reading each other runs on one thread, and a key
/// that appears twice in `keys` is a cycle. A cycle that crosses threads shows up as threads waiting for each other's
/// `.cached` builds; `waitingFor` records those waits so that the last thread to join the cycle can see it.
final class ThreadState: @unchecked Sendable {
    // `@unchecked Sendable`: the fields behind `own`, other than the mutex, are touched only by the thread that owns
    // this state (it is thread-specific data); `waitingFor` and `waitingKeys` only under the exclusive hold of the
    // lock; `mutex` is a pthread mutex, made to be shared.
    // `@exclusivity(unchecked)`: each of those rules already makes every access exclusive.

    /// What a thread writes while it reads: its mutex, the keys it is evaluating, and the anchor it was lent.
    ///
    /// They live in a block of their own, aligned to and padded to `blockSize` bytes, rather than in the object:
    /// two threads' states allocated side by side would otherwise share a cache line, and every read on one thread
    /// would evict it from the other's cache. The key stack gets blocks of that size for the same reason.
    private struct OwnFields {
        var mutex = pthread_mutex_t()
        var keys: UnsafeMutablePointer<Any.Type>
        var depth = 0
        var capacity: Int
        /// The anchor of the `@Injected` property whose read is in progress on this thread, if it was created in a
        /// scope.
        ///
        /// Unretained: it is set only for the duration of that read, during which the property holds the anchor.
        var rememberedAnchor: Unmanaged<ScopeAnchor>?
    }

    /// A multiple of the cache line on the processors Swift runs on, also covering the pair of lines that some of
    /// them fetch together.
    private static let blockSize = 128

    private let own: UnsafeMutablePointer<OwnFields>
    /// This thread's share of `InjectionStore.lock`: taken alone to read, taken by writers with every other one.
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @exclusivity(unchecked) private var waitingFor: BuildTicket?
    @exclusivity(unchecked) private var waitingKeys: [Any.Type] = []

    private init() {
        let capacity = Self.blockSize / MemoryLayout<Any.Type>.stride
        own = Self.allocateBlocks(of: OwnFields.self, count: 1)
        own.initialize(to: OwnFields(keys: Self.allocateBlocks(of: Any.Type.self, count: capacity), capacity: capacity))
        mutex = own.pointer(to: \.mutex)!
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "InjectedValues: pthread_mutex_init failed with \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        UnsafeMutableRawPointer(own.pointee.keys).deallocate()
        own.deinitialize(count: 1)
        UnsafeMutableRawPointer(own).deallocate()
    }

    /// Allocates room for `count` values of type `T` in whole blocks of `blockSize` bytes, aligned to a block.
    private static func allocateBlocks<T>(of type: T.Type, count: Int) -> UnsafeMutablePointer<T> {
        let bytes = (MemoryLayout<T>.stride * count + blockSize - 1) / blockSize * blockSize
        return UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: blockSize)
            .bindMemory(to: T.self, capacity: count)
    }

    /// The anchor of the `@Injected` property whose read is in progress on this thread, if it was created in a scope.
    var rememberedAnchor: Unmanaged<ScopeAnchor>? {
        own.pointee.rememberedAnchor
    }

    /// This thread's state, created and registered with the lock on first use, and unregistered when the thread
    /// exits.
    ///
    /// Unretained: the thread-specific slot holds a strong reference until the thread exits, so the state outlives
    /// anything the thread does with it, and a retain would cost every read an atomic write.
    static var current: Unmanaged<ThreadState> {
        if let pointer = pthread_getspecific(threadKey) {
            return Unmanaged<ThreadState>.fromOpaque(pointer)
        }
        let state = Unmanaged.passRetained(ThreadState())
        InjectionStore.lock.register(state.takeUnretainedValue())
        pthread_setspecific(threadKey, state.toOpaque())
        return state
    }

    /// Runs `body` with `anchor` as the remembered anchor, then restores the one before.
    @inline(__always)
    func remembering<T>(_ anchor: Unmanaged<ScopeAnchor>?, _ body: () -> T) -> T {
        let outer = own.pointee.rememberedAnchor
        own.pointee.rememberedAnchor = anchor
        defer { own.pointee.rememberedAnchor = outer }
        return body()
    }

    func lockShared() {
        pthread_mutex_lock(mutex)
    }

    func unlockShared() {
        pthread_mutex_unlock(mutex)
    }

    /// Evaluates a key's `currentValue` with the key on the stack, stopping the process if the key is already being
    /// evaluated on this thread.
    func evaluate<K: InjectionKey>(_ key: K.Type) -> K.Value {
        let id = ObjectIdentifier(key)
        let stack = evaluating
        if let index = stack.firstIndex(where: { ObjectIdentifier($0) == id }) {
            dependencyCycle(Array(stack[index...]) + [key])
        }
        if stack.count == own.pointee.capacity {
            let capacity = stack.count * 2
            let larger = Self.allocateBlocks(of: Any.Type.self, count: capacity)
            larger.moveInitialize(from: own.pointee.keys, count: stack.count)
            UnsafeMutableRawPointer(own.pointee.keys).deallocate()
            own.pointee.keys = larger
            own.pointee.capacity = capacity
        }
        (own.pointee.keys + stack.count).initialize(to: key)
        own.pointee.depth += 1
        defer { own.pointee.depth -= 1 }
        return K.currentValue
    }

    /// The keys whose defaults this thread is evaluating, outermost first.
    private var evaluating: UnsafeBufferPointer<Any.Type> {
        UnsafeBufferPointer(start: own.pointee.keys, count: own.pointee.depth)
    }

    /// The cycle that waiting for `ticket` would close, or `nil` when waiting is safe.
    ///
    /// Called under the exclusive hold of the lock.
    func cycle(waitingFor ticket: BuildTicket) -> [Any.Type]? {
        var chain: [Any.Type] = []
        var next = ticket
        var hops = 0
        while true {
            if next.builder === self {
                let mine = evaluating
                return Array(mine.drop(while: { $0 != next.key })) + chain + [next.key]
            }
            chain += next.builder.waitingKeys.drop(while: { $0 != next.key })
            guard let following = next.builder.waitingFor else { return nil }
            next = following
            hops += 1
            // Each thread waits for at most one build, so a chain longer than the number of waiting threads would
            // have to revisit one; this bound only guards against a bug in that reasoning.
            precondition(hops < 100_000, "InjectedValues: internal error: unbounded wait chain")
        }
    }

    /// Records that this thread waits for another thread's build.
    ///
    /// Called under the exclusive hold of the lock.
    func beginWaiting(for ticket: BuildTicket) {
        waitingFor = ticket
        waitingKeys = Array(evaluating)
    }

    /// Records that this thread no longer waits.
    ///
    /// Called under the exclusive hold of the lock.
    func endWaiting() {
        waitingFor = nil
        waitingKeys = []
    }
}

/// One thread's build of one `.cached` key in one root.
final class BuildTicket: @unchecked Sendable {
    // `@unchecked Sendable`: both properties are immutable; `builder` is only inspected under the exclusive hold of
    // the lock.
    let key: Any.Type
    let builder: ThreadState

    init(key: Any.Type, builder: ThreadState) {
        self.key = key
        self.builder = builder
    }
}

/// The thread-specific data key under which each thread keeps its `ThreadState`.
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
        #if canImport(Darwin)
        let state = Unmanaged<ThreadState>.fromOpaque(pointer)
        #else
        guard let pointer else { return }
        let state = Unmanaged<ThreadState>.fromOpaque(pointer)
        #endif
        InjectionStore.lock.unregister(state.takeUnretainedValue())
        state.release()
    }
    precondition(status == 0, "InjectedValues: pthread_key_create failed with \(status)")
    return key
}()

/// Stops the process because defaults read each other in a cycle.
private func dependencyCycle(_ keys: [Any.Type]) -> Never {
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

/// The lock behind all of the library's shared state: a big-reader lock made of POSIX mutexes.
///
/// Every thread that uses the store has a mutex of its own in its `ThreadState`. Reading takes only that mutex
/// (`lockShared`), so readers on different threads never write to shared memory and scale with the number of
/// cores. Writing (`lockExclusive`) takes the registry mutex and then every registered thread's mutex, so it excludes
/// all readers. Writes are rare: overrides, resets and the first build of a `.cached` value.
final class InjectionLock: @unchecked Sendable {
    // `@unchecked Sendable`: `readers` is read and written only while holding `registry`; the pthread mutex and
    // condition variable are made for use from many threads and live in heap memory of their own, so their
    // addresses never change.

    private let registry: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    @exclusivity(unchecked) private var readers: [ThreadState] = []

    init() {
        registry = .allocate(capacity: 1)
        registry.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let mutexStatus = pthread_mutex_init(registry, nil)
        precondition(mutexStatus == 0, "InjectedValues: pthread_mutex_init failed with \(mutexStatus)")
        let conditionStatus = pthread_cond_init(condition, nil)
        precondition(conditionStatus == 0, "InjectedValues: pthread_cond_init failed with \(conditionStatus)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(registry)
        registry.deallocate()
    }

    /// Runs `body` holding the registry mutex alone, for state that readers on the hot path never touch.
    func withRegistry<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(registry)
        defer { pthread_mutex_unlock(registry) }
        return body()
    }

    /// Adds a thread's mutex to those a writer takes.
    func register(_ thread: ThreadState) {
        pthread_mutex_lock(registry)
        readers.append(thread)
        pthread_mutex_unlock(registry)
    }

    /// Removes an exiting thread's mutex.
    func unregister(_ thread: ThreadState) {
        pthread_mutex_lock(registry)
        readers.removeAll { $0 === thread }
        pthread_mutex_unlock(registry)
    }

    /// Excludes every reader and every other writer.
    func lockExclusive() {
        pthread_mutex_lock(registry)
        for reader in readers { pthread_mutex_lock(reader.mutex) }
    }

    func unlockExclusive() {
        for reader in readers { pthread_mutex_unlock(reader.mutex) }
        pthread_mutex_unlock(registry)
    }

    /// Gives up the exclusive hold until another thread calls `broadcast()`, then takes it again.
    ///
    /// Callers re-check their condition afterwards, as a wake-up may be spurious.
    func waitExclusive() {
        for reader in readers { pthread_mutex_unlock(reader.mutex) }
        pthread_cond_wait(condition, registry)
        for reader in readers { pthread_mutex_lock(reader.mutex) }
    }

    /// Wakes every thread waiting in `waitExclusive()`.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
