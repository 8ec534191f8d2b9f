import Foundation
import Injected
import Testing

extension ProcessGlobalStateTests {
    /// Races in the process-global store: builds, resets, global writes and scopes on many threads at once.
    ///
    /// They reset and write the global store, so they live in the serialized global-state suite. Each round of
    /// threads has a watchdog, and CI runs them in a release build and under ThreadSanitizer with `halt_on_error=1`.
    @Suite("Races in the global store")
    struct GlobalRaceTests {
        static let generations = 1_000

        @Test("16 threads entering a chain and a diamond of slow cached defaults build each once, over 1,000 resets")
        func chainAndDiamondAcrossResets() {
            defer { InjectedValues.reset() }
            let log = BuildLog()
            // The threads enter by five keys in turn, as launch code touching services that share dependencies does:
            // the chain at its top or middle, the diamond at its apex or either side.
            let problems = raceThroughGenerations(Self.generations, threads: 16, log: log) { index in
                switch index % 5 {
                case 0: InjectedValues[\.top]
                case 1: InjectedValues[\.middle]
                case 2: InjectedValues[\.apex]
                case 3: InjectedValues[\.left]
                default: InjectedValues[\.right]
                }
            }
            #expect(problems.count == 0, "the first problems: \(problems.prefix(5))")
        }

        @Test("after a global write or reset returns, each of 8 threads' next read sees it, 1,000 times")
        func globalWritesReachEveryThread() {
            defer { InjectedValues.reset() }
            let threads = RaceThreads(8)
            defer { threads.stop() }
            let stale = Counter()
            for generation in 0..<Self.generations {
                // Every fourth generation resets instead of writing, so reads fall back to the default, 0.
                let expected = generation % 4 == 3 ? 0 : generation + 1
                if expected == 0 {
                    InjectedValues.reset()
                } else {
                    InjectedValues[\.raceValue] = expected
                }
                let finished = threads.round { _ in
                    // Twice: the first read may fill the thread's view of the store, the second reads it.
                    for _ in 0..<2 where InjectedValues[\.raceValue] != expected { stale.increment() }
                }
                guard finished else {
                    Issue.record("generation \(generation) did not finish within 30 seconds")
                    return
                }
            }
            #expect(stale.value == 0)
        }

        @Test(
            "4 threads entering scopes and building in fresh ones while 4 others write and reset globally, 1,000 each"
        )
        func scopesWhileOthersWriteGlobally() {
            defer { InjectedValues.reset() }
            let mismatches = Counter()
            let finished = runOnThreads(8, timeout: 120) { thread in
                for operation in 0..<Self.generations {
                    if thread >= 4 {
                        // A global writer: writes, reads back something valid, and now and then resets.
                        InjectedValues[\.raceValue] = thread
                        if !(0..<8).contains(InjectedValues[\.raceValue]) { mismatches.increment() }
                        if operation % 100 == 99 { InjectedValues.reset() }
                        continue
                    }
                    let tag = -(thread * Self.generations + operation) - 1
                    withInjectedValues {
                        $0.raceValue = tag
                    } operation: {
                        if InjectedValues[\.raceValue] != tag { mismatches.increment() }
                        withInjectedValues { _ in
                        } operation: {
                            InjectedValues[\.raceValue] = tag - 1
                            if InjectedValues[\.raceValue] != tag - 1 { mismatches.increment() }
                        }
                        if InjectedValues[\.raceValue] != tag { mismatches.increment() }
                    }
                    if operation % 50 == 0 {
                        let log = BuildLog()
                        withInjectedValues(fresh: true) {
                            $0.buildLog = log
                        } operation: {
                            if InjectedValues[\.raceValue] != 0 { mismatches.increment() }
                            if InjectedValues[\.top].children.first !== InjectedValues[\.middle] {
                                mismatches.increment()
                            }
                        }
                        if log.take() != ["top": 1, "middle": 1, "leaf": 1] { mismatches.increment() }
                    }
                }
            }
            #expect(finished, "a thread did not finish within 120 seconds: something deadlocked")
            #expect(mismatches.value == 0)
        }
    }
}

extension InjectedValues {
    fileprivate var raceValue: Int {
        get { self[RaceValueKey.self] }
        set { self[RaceValueKey.self] = newValue }
    }
}

private enum RaceValueKey: ReadOnlyInjectionKey {
    static var currentValue: Int { 0 }
}
