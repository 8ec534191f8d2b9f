// The baseline: the environment-style pattern exactly as the article builds it, with its unprotected static
// storage, so the benchmarks can compare a read with Injected against the code projects copied. It is not safe
// to use from several threads, which is the point of comparison, and it is compiled in Swift 5 mode, which is the
// only mode that accepts its storage.

/// A key whose default lives in a settable static, as in the article.
public protocol ArticleInjectionKey {
    associatedtype Value
    static var currentValue: Value { get set }
}

/// The article's store: a static instance used only to project key paths.
public struct ArticleInjectedValues {
    private static var current = ArticleInjectedValues()

    /// Reads or assigns a key's static storage.
    public static subscript<K: ArticleInjectionKey>(key: K.Type) -> K.Value {
        get { key.currentValue }
        set { key.currentValue = newValue }
    }

    /// Reads or assigns a dependency through its accessor.
    public static subscript<T>(_ keyPath: WritableKeyPath<ArticleInjectedValues, T>) -> T {
        get { current[keyPath: keyPath] }
        set { current[keyPath: keyPath] = newValue }
    }
}

/// The article's property wrapper.
@propertyWrapper
public struct ArticleInjected<T> {
    private let keyPath: WritableKeyPath<ArticleInjectedValues, T>

    /// The dependency, read through the store on every access.
    public var wrappedValue: T {
        get { ArticleInjectedValues[keyPath] }
        set { ArticleInjectedValues[keyPath] = newValue }
    }

    /// Creates a property for the dependency at a key path.
    public init(_ keyPath: WritableKeyPath<ArticleInjectedValues, T>) {
        self.keyPath = keyPath
    }
}
