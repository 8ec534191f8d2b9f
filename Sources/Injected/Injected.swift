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
/// > remembered scope for as long as the scope exists. Inside a scope, the active scope always wins.
@propertyWrapper
public struct Injected<Value> {
    private let keyPath: KeyPath<InjectedValues, Value>
    /// The scope active at creation.
    ///
    /// Weak, so that a value stored in a scope whose properties captured that same scope does not keep it alive
    /// forever.
    private weak var scope: InjectionScope?
    /// Where a read-only property was declared, for the message when code writes to it; `nil` for writable ones.
    private let readOnlyDeclaration: ReadOnlyDeclaration?

    /// Creates a property that reads and writes the dependency at a key path.
    ///
    /// - Parameter keyPath: A key path to an accessor declared in an extension of ``InjectedValues``.
    public init(_ keyPath: WritableKeyPath<InjectedValues, Value>) {
        self.keyPath = keyPath
        self.scope = InjectionScope.current
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
        self.scope = InjectionScope.current
        self.readOnlyDeclaration = ReadOnlyDeclaration(file: file, line: line)
    }

    /// The dependency, resolved on every access.
    ///
    /// Setting it overrides the dependency in the innermost active scope (or the remembered scope, when set from
    /// outside any scope), exactly like writing `InjectedValues[keyPath] = newValue`.
    public var wrappedValue: Value {
        get {
            guard let scope, InjectionScope.current == nil else {
                return InjectedValues[keyPath]
            }
            return InjectionScope.$current.withValue(scope) { InjectedValues[keyPath] }
        }
        nonmutating set {
            guard let writable = keyPath as? WritableKeyPath<InjectedValues, Value> else {
                fatalError(readOnlyWriteMessage())
            }
            guard let scope, InjectionScope.current == nil else {
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
// capture nothing. The weak scope reference is only read, and `InjectionScope` is itself `Sendable`.
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
/// `Task.detached` or other threads. An ``Injected`` property created inside the scope keeps resolving there when
/// read from outside any scope.
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
    try InjectionScope.$current.withValue(InjectionScope.makeNested(fresh: fresh)) {
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
    try await InjectionScope.$current.withValue(InjectionScope.makeNested(fresh: fresh)) {
        var values = InjectedValues()
        try update(&values)
        return try await operation()
    }
}

// MARK: - Storage

/// One level of overrides: the global store, or a scope opened by `withInjectedValues`.
///
/// A scope's `parent` is the scope that was active when it was opened, or the global store. The global store and
/// fresh scopes have no parent; they are the roots, and they hold the cache of `.cached` values for every scope
/// below them.
final class InjectionScope: @unchecked Sendable {
    // `@unchecked Sendable`: `overrides` and `cache` are read and written only while holding `InjectionStore.lock`,
    // and `parent` is immutable.

    /// The innermost active scope of the current task, or `nil` when only the global store is active.
    @TaskLocal static var current: InjectionScope?

    let parent: InjectionScope?
    var overrides: [ObjectIdentifier: AnyObject] = [:]
    var cache: [ObjectIdentifier: CacheSlot] = [:]

    init(parent: InjectionScope?) {
        self.parent = parent
    }

    /// A scope for `withInjectedValues`, nested in the innermost active one unless it is fresh.
    static func makeNested(fresh: Bool) -> InjectionScope {
        InjectionScope(parent: fresh ? nil : (current ?? InjectionStore.global))
    }
}

/// A value in the store, boxed once when it is written so that reads need no dynamic cast.
final class Box<Value> {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// The state of a `.cached` key in a root's cache.
enum CacheSlot {
    /// A thread is evaluating the key's `currentValue`; readers wait for it.
    case building(BuildTicket)
    /// The value, a `Box<Key.Value>`.
    case ready(AnyObject)
}

/// The global store and the operations on every scope, all behind one lock.
enum InjectionStore {
    /// The one lock that guards every scope's `overrides` and `cache`, and the wait state of `ResolutionStack`s.
    ///
    /// No user code (a key's `currentValue`, a value's `deinit`, a closure) ever runs while it is held.
    static let lock = InjectionLock()

    /// Overrides made while no scope is active, and the process-wide cache of `.cached` values.
    static let global = InjectionScope(parent: nil)

    static func value<K: InjectionKey>(for key: K.Type) -> K.Value {
        let id = ObjectIdentifier(key)
        let lifetime = K.lifetime
        var scope = InjectionScope.current ?? global
        lock.lock()
        while true {
            if let box = scope.overrides[id] {
                lock.unlock()
                return unsafeDowncast(box, to: Box<K.Value>.self).value
            }
            guard let parent = scope.parent else { break }
            scope = parent
        }
        switch lifetime {
        case .uncached:
            lock.unlock()
            return ResolutionStack.current.evaluate(key)
        case .cached:
            return cachedValue(for: key, in: scope)
        }
    }

    /// Returns the cached value of a key in a root, building it if no thread has.
    ///
    /// Called with `lock` held; returns with it released.
    private static func cachedValue<K: InjectionKey>(for key: K.Type, in root: InjectionScope) -> K.Value {
        let id = ObjectIdentifier(key)
        let stack = ResolutionStack.current
        while true {
            switch root.cache[id] {
            case .ready(let box):
                lock.unlock()
                return unsafeDowncast(box, to: Box<K.Value>.self).value
            case .building(let ticket):
                if let cycle = stack.cycle(waitingFor: ticket) {
                    lock.unlock()
                    dependencyCycle(cycle)
                }
                stack.beginWaiting(for: ticket)
                lock.wait()
                stack.endWaiting()
            case nil:
                let ticket = BuildTicket(key: key, builder: stack)
                root.cache[id] = .building(ticket)
                lock.unlock()
                let value = build(key, in: root, on: stack)
                let box = Box(value)
                lock.lock()
                let replaced: CacheSlot?
                if case .building(let current) = root.cache[id], current === ticket {
                    replaced = root.cache.updateValue(.ready(box), forKey: id)
                } else {
                    // A reset dropped the slot while the value was being built. The caller still gets the value it
                    // asked for, but the cache stays as the reset left it.
                    replaced = nil
                }
                lock.broadcast()
                lock.unlock()
                _ = replaced
                return value
            }
        }
    }

    /// Evaluates a `.cached` key's default in the context of the root that caches it, so that an override made in a
    /// nested scope is not baked into an instance every scope shares.
    private static func build<K: InjectionKey>(
        _ key: K.Type,
        in root: InjectionScope,
        on stack: ResolutionStack
    ) -> K.Value {
        if InjectionScope.current === root || (InjectionScope.current == nil && root === global) {
            return stack.evaluate(key)
        }
        return InjectionScope.$current.withValue(root) { stack.evaluate(key) }
    }

    static func override<K: InjectionKey>(_ key: K.Type, with value: K.Value) {
        let box = Box(value)
        let scope = InjectionScope.current ?? global
        lock.lock()
        let previous = scope.overrides.updateValue(box, forKey: ObjectIdentifier(key))
        lock.unlock()
        // The previous value is released here, outside the lock, because its deinit is user code.
        _ = previous
    }

    static func reset() {
        let scope = InjectionScope.current ?? global
        lock.lock()
        let overrides = scope.overrides
        let cache = scope.cache
        scope.overrides = [:]
        scope.cache = [:]
        lock.unlock()
        // The dropped values are released here, outside the lock, because their deinits are user code.
        _ = (overrides, cache)
    }
}

// MARK: - Cycle tracking

/// The keys whose defaults the current thread is evaluating, innermost last.
///
/// A key's `currentValue` is synchronous, so a chain of defaults reading each other runs on one thread, and a key
/// that appears twice in this stack is a cycle. A cycle that crosses threads shows up as threads waiting for each
/// other's `.cached` builds; `waitingFor` records those waits so that the last thread to join the cycle can see it.
final class ResolutionStack: @unchecked Sendable {
    // `@unchecked Sendable`: `keys` is touched only by the thread that owns this stack (it is thread-specific data);
    // `waitingFor` and `waitingKeys` are read and written only while holding `InjectionStore.lock`.

    private var keys: [Any.Type] = []
    private var waitingFor: BuildTicket?
    private var waitingKeys: [Any.Type] = []

    /// This thread's stack, created on first use and released when the thread exits.
    static var current: ResolutionStack {
        if let pointer = pthread_getspecific(threadKey) {
            return Unmanaged<ResolutionStack>.fromOpaque(pointer).takeUnretainedValue()
        }
        let stack = ResolutionStack()
        stack.keys.reserveCapacity(8)
        pthread_setspecific(threadKey, Unmanaged.passRetained(stack).toOpaque())
        return stack
    }

    /// Evaluates a key's `currentValue` with the key on the stack, stopping the process if the key is already being
    /// evaluated on this thread.
    func evaluate<K: InjectionKey>(_ key: K.Type) -> K.Value {
        if let index = keys.firstIndex(where: { $0 == key }) {
            dependencyCycle(Array(keys[index...]) + [key])
        }
        keys.append(key)
        defer { keys.removeLast() }
        return K.currentValue
    }

    /// The cycle that waiting for `ticket` would close, or `nil` when waiting is safe.
    ///
    /// Called with the lock held.
    func cycle(waitingFor ticket: BuildTicket) -> [Any.Type]? {
        var chain: [Any.Type] = []
        var next = ticket
        var hops = 0
        while true {
            if next.builder === self {
                return Array(keys.drop(while: { $0 != next.key })) + chain + [next.key]
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
    /// Called with the lock held.
    func beginWaiting(for ticket: BuildTicket) {
        waitingFor = ticket
        waitingKeys = keys
    }

    /// Records that this thread no longer waits.
    ///
    /// Called with the lock held.
    func endWaiting() {
        waitingFor = nil
        waitingKeys = []
    }
}

/// One thread's build of one `.cached` key in one root.
final class BuildTicket: @unchecked Sendable {
    // `@unchecked Sendable`: both properties are immutable; `builder` is only inspected while holding the lock.
    let key: Any.Type
    let builder: ResolutionStack

    init(key: Any.Type, builder: ResolutionStack) {
        self.key = key
        self.builder = builder
    }
}

/// The thread-specific data key under which each thread keeps its `ResolutionStack`.
private let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { pointer in
        #if canImport(Darwin)
        Unmanaged<ResolutionStack>.fromOpaque(pointer).release()
        #else
        if let pointer { Unmanaged<ResolutionStack>.fromOpaque(pointer).release() }
        #endif
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

/// A mutex with a condition variable: the one lock behind all of the library's shared state.
final class InjectionLock: @unchecked Sendable {
    // `@unchecked Sendable`: the pthread mutex and condition variable are made for use from many threads; they live
    // in heap memory of their own, so their addresses never change.

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        let mutexStatus = pthread_mutex_init(mutex, nil)
        precondition(mutexStatus == 0, "InjectedValues: pthread_mutex_init failed with \(mutexStatus)")
        let conditionStatus = pthread_cond_init(condition, nil)
        precondition(conditionStatus == 0, "InjectedValues: pthread_cond_init failed with \(conditionStatus)")
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func lock() {
        pthread_mutex_lock(mutex)
    }

    func unlock() {
        pthread_mutex_unlock(mutex)
    }

    /// Releases the lock until another thread calls `broadcast()`, then takes it again.
    ///
    /// Callers re-check their condition afterwards, as a wake-up may be spurious.
    func wait() {
        pthread_cond_wait(condition, mutex)
    }

    /// Wakes every thread waiting in `wait()`.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}
