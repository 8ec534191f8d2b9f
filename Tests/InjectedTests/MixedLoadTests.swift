import Injected
import Testing

extension ProcessGlobalStateTests {
    /// The published mixed-load figure: 8 threads × 20,000 operations mixing reads, global writes, scoped overrides
    /// and global resets.
    ///
    /// It resets the global store, so it lives in the serialized global-state suite. CI also runs it under
    /// ThreadSanitizer with `halt_on_error=1`, where a data race ends the run.
    @Suite("Mixed load")
    struct MixedLoadTests {
        static let threads = 8
        static let operationsPerThread = 20_000

        @Test("8 threads × 20,000 mixed operations: every scoped read sees its scope's value")
        func mixedLoad() {
            defer { InjectedValues.reset() }
            let scopedMismatches = Counter()
            let invalidGlobalReads = Counter()
            let operations = Counter()
            let finished = runOnThreads(Self.threads, timeout: 300) { thread in
                var done = 0
                for operation in 0..<Self.operationsPerThread {
                    switch operation % 8 {
                    case 0, 1, 2:
                        // A global read sees the default or some thread's global write, never anything else.
                        if !(0...Self.threads).contains(InjectedValues[\.loadValue]) { invalidGlobalReads.increment() }
                    case 3:
                        InjectedValues[\.loadValue] = thread + 1
                    case 4, 5:
                        let tag = -(thread * Self.operationsPerThread + operation) - 1
                        withInjectedValues {
                            $0.loadValue = tag
                        } operation: {
                            if InjectedValues[\.loadValue] != tag { scopedMismatches.increment() }
                            InjectedValues[\.loadValue] = tag - 1
                            if InjectedValues[\.loadValue] != tag - 1 { scopedMismatches.increment() }
                        }
                    case 6:
                        _ = InjectedValues[\.loadService]
                    default:
                        if operation % 400 == 7 { InjectedValues.reset() }
                    }
                    done += 1
                }
                operations.add(done)
            }
            #expect(finished, "the mixed load did not finish within 300 seconds")
            #expect(operations.value == Self.threads * Self.operationsPerThread)
            #expect(scopedMismatches.value == 0)
            #expect(invalidGlobalReads.value == 0)
        }
    }
}

private enum LoadValueKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}

private enum LoadServiceKey: ReadOnlyInjectionKey {
    static var currentValue: Instance { Instance("load") }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var loadValue: Int {
        get { Self[LoadValueKey.self] }
        set { Self[LoadValueKey.self] = newValue }
    }

    fileprivate var loadService: Instance {
        get { Self[LoadServiceKey.self] }
        set { Self[LoadServiceKey.self] = newValue }
    }
}
