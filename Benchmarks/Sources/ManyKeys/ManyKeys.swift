// Up to 10,000 distinct injection keys, made at run time, for measuring whether a read's cost depends on how many keys
// are in use. The harness and instructions.sh both build this module, so the two measure the same keys.
import Injected

/// An injection key of this module's family, which stands for an `Int`.
public protocol IndexedInjectionKey: ReadOnlyInjectionKey where Value == Int {}

/// Key number `index`, as its type: `IndexedKey<Pair<Pair<Pair<Pair<Root, D0>, D4>, D2>, D7>>` for 427.
///
/// Every index gets its own type, so each one is a distinct key to the store. The key comes back as an existential
/// so that a read through it passes the conformance along, as a read of a key declared in source does. Reading
/// through `IndexedKey<Tag>` inside a function generic over `Tag` would instead look the conformance up in the
/// Swift runtime's caches on every read, and those caches grow with the number of key types made.
public func indexedKey(_ index: Int) -> any IndexedInjectionKey.Type {
    precondition((0..<10_000).contains(index), "indexedKey takes 0..<10_000")
    let path = [index / 1_000 % 10, index / 100 % 10, index / 10 % 10, index % 10]
    return extend(Root.self, path[...])
}

/// Overrides keys 0..<count in the global store, key `n` with the value `n`.
public func overrideIndexedKeys(count: Int) {
    for index in 0..<count { write(indexedKey(index), index) }
}

/// Overrides `key` with `value` in the values a scope's update closure is given.
public func overrideIndexedKey(_ key: any IndexedInjectionKey.Type, with value: Int, in values: inout InjectedValues) {
    func write<Key: IndexedInjectionKey>(_ key: Key.Type) { values[key] = value }
    write(key)
}

private func write<Key: IndexedInjectionKey>(_ key: Key.Type, _ value: Int) {
    InjectedValues[key] = value
}

private struct IndexedKey<Tag>: IndexedInjectionKey {
    static var currentValue: Int { -1 }
}

private enum Root {}
private enum Pair<Prefix, Digit> {}
private enum D0 {}
private enum D1 {}
private enum D2 {}
private enum D3 {}
private enum D4 {}
private enum D5 {}
private enum D6 {}
private enum D7 {}
private enum D8 {}
private enum D9 {}

private let digits: [Any.Type] = [
    D0.self, D1.self, D2.self, D3.self, D4.self, D5.self, D6.self, D7.self, D8.self, D9.self,
]

/// Appends the path's digits to `prefix` one at a time, then makes the key for the whole type.
private func extend<Prefix>(_ prefix: Prefix.Type, _ path: ArraySlice<Int>) -> any IndexedInjectionKey.Type {
    guard let digit = path.first else { return IndexedKey<Prefix>.self }
    func step<Digit>(_ digit: Digit.Type) -> any IndexedInjectionKey.Type {
        extend(Pair<Prefix, Digit>.self, path.dropFirst())
    }
    return _openExistential(digits[digit], do: step)
}
