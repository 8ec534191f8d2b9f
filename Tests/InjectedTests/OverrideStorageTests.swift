import Injected
import Testing

/// A scope keeps its first two overrides in line, up to eight in a list, and more in a dictionary; each size must read,
/// replace, keep and release its values alike, also after the scope's operation has returned.
@Suite("Override storage")
struct OverrideStorageTests {
    @Test(
        "a scope with any number of overrides reads each back, replaces each, and resets them all",
        arguments: [1, 2, 3, 8, 9, 12]
    )
    func readsReplacesAndResets(count: Int) {
        inFreshScope {
            withInjectedValues {
                for index in 0..<count { write(slots[index], index, in: &$0) }
            } operation: {
                #expect(slots.indices.map { read(slots[$0]) } == slots.indices.map { $0 < count ? $0 : -1 })
                // Replaced in reverse, so that the last one written is not always the one replaced.
                for index in (0..<count).reversed() { write(slots[index], 100 + index) }
                #expect(slots.indices.map { read(slots[$0]) } == slots.indices.map { $0 < count ? 100 + $0 : -1 })
                InjectedValues.reset()
                #expect(slots.map(read) == Array(repeating: -1, count: slots.count))
            }
        }
    }

    @Test(
        "what the update closure set, in any number, is what the scope keeps after its operation",
        arguments: [1, 2, 3, 9]
    )
    func keepsTheUpdateClosuresValues(count: Int) {
        inFreshScope {
            let scope = withInjectedValues {
                for index in 0..<count { write(slots[index], index, in: &$0) }
            } operation: {
                // Since core v5 a capture keeps the scope as it was when it was made: a later write is not in it.
                let captured = InjectedValues.capture()
                write(slots[0], 500)
                return captured
            }
            let kept = scope.run { slots.map(read) }
            #expect(kept == slots.indices.map { $0 < count ? $0 : -1 })
        }
    }

    @Test(
        "values that overrides replace, or a reset drops, are released in any size of scope",
        arguments: [1, 2, 3, 9]
    )
    func releasesWhatItReplaces(count: Int) {
        inFreshScope {
            var replaced: [() -> Instance?] = []
            var dropped: [() -> Instance?] = []
            withInjectedValues { _ in
            } operation: {
                for index in 0..<count {
                    let first = Instance("\(index)")
                    replaced.append { [weak first] in first }
                    write(instanceSlots[index], first)
                }
                for index in 0..<count {
                    let second = Instance("\(index)")
                    dropped.append { [weak second] in second }
                    write(instanceSlots[index], second)
                }
                #expect(replaced.allSatisfy { $0() == nil }, "a replaced value is still alive")
                #expect(dropped.allSatisfy { $0() != nil })
                InjectedValues.reset()
                #expect(dropped.allSatisfy { $0() == nil }, "a value dropped by the reset is still alive")
            }
        }
    }
}

/// Twelve distinct keys of `Int`, each `-1` by default.
private var slots: [any SlotKey.Type] {
    [
        Slot<S0>.self, Slot<S1>.self, Slot<S2>.self, Slot<S3>.self, Slot<S4>.self, Slot<S5>.self,
        Slot<S6>.self, Slot<S7>.self, Slot<S8>.self, Slot<S9>.self, Slot<S10>.self, Slot<S11>.self,
    ]
}

/// Nine distinct keys of `Instance`.
private var instanceSlots: [any InstanceSlotKey.Type] {
    [
        InstanceSlot<S0>.self, InstanceSlot<S1>.self, InstanceSlot<S2>.self, InstanceSlot<S3>.self,
        InstanceSlot<S4>.self, InstanceSlot<S5>.self, InstanceSlot<S6>.self, InstanceSlot<S7>.self,
        InstanceSlot<S8>.self,
    ]
}

private protocol SlotKey: ReadOnlyInjectionKey where Value == Int {}
private protocol InstanceSlotKey: ReadOnlyInjectionKey where Value == Instance {}

/// Reads a slot where a read goes now.
private func read(_ key: any SlotKey.Type) -> Int {
    func read<Key: SlotKey>(_ key: Key.Type) -> Int { InjectedValues[key] }
    return read(key)
}

/// Writes a slot where a write goes now.
private func write(_ key: any SlotKey.Type, _ value: Int) {
    func write<Key: SlotKey>(_ key: Key.Type) { InjectedValues[key] = value }
    write(key)
}

/// Writes a slot in an update closure's values.
private func write(_ key: any SlotKey.Type, _ value: Int, in values: inout InjectedValues) {
    func write<Key: SlotKey>(_ key: Key.Type) { values[key] = value }
    write(key)
}

private func write(_ key: any InstanceSlotKey.Type, _ value: Instance) {
    func write<Key: InstanceSlotKey>(_ key: Key.Type) { InjectedValues[key] = value }
    write(key)
}

private enum Slot<Tag>: SlotKey {
    static var currentValue: Int { -1 }
}

private enum InstanceSlot<Tag>: InstanceSlotKey {
    static var currentValue: Instance { Instance("default") }
}

private enum S0 {}
private enum S1 {}
private enum S2 {}
private enum S3 {}
private enum S4 {}
private enum S5 {}
private enum S6 {}
private enum S7 {}
private enum S8 {}
private enum S9 {}
private enum S10 {}
private enum S11 {}
