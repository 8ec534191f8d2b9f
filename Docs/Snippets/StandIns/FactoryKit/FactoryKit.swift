// A stand-in for FactoryKit, for the documentation's code that uses it beside Injected. It has the few names the
// example uses, with the shapes FactoryKit gives them: a container that factories are declared on, and a property
// wrapper named `Injected` that resolves a factory when the property is made.

/// The container that factories are declared on, in extensions.
public final class Container: Sendable {
    /// The shared container, which `@Injected` resolves from.
    public static let shared = Container()

    /// A container.
    public init() {}

    /// A factory that makes its value with `make`.
    public func callAsFunction<T>(_ make: @escaping @Sendable () -> T) -> Factory<T> {
        Factory(make: make)
    }
}

/// Makes one kind of value.
public struct Factory<T>: Sendable {
    let make: @Sendable () -> T

    /// The value.
    public func callAsFunction() -> T { make() }
}

/// Resolves a factory of the shared container when the property is made.
@propertyWrapper
public struct Injected<T> {
    /// The resolved value.
    public var wrappedValue: T

    /// Resolves the factory at `keyPath`.
    public init(_ keyPath: KeyPath<Container, Factory<T>>) {
        wrappedValue = Container.shared[keyPath: keyPath]()
    }
}
