import InjectedTesting
import Testing

/// A sleeper cancelled before its deadline throws `CancellationError` at once and is forgotten by the clock.
@Suite("Test clock: cancellation")
struct TestClockCancellationTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a sleeper cancelled before its deadline throws CancellationError, and the clock forgets it")
    func cancelledSleeper() async {
        let clock = TestClock()
        let sleeping = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForSleepers()
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == .zero)
        // Nothing is left to wake: an advance past the old deadline resumes no one a second time.
        await clock.advance(by: .seconds(10))
        #expect(clock.now == .zero.advanced(by: .seconds(10)))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a task cancelled before it sleeps throws at once, without falling asleep")
    func cancelledBeforeSleeping() async {
        let clock = TestClock()
        let sleeping = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(clock.sleeperCount == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("cancelling one sleeper leaves the others to wake in order")
    func othersStillWake() async {
        let clock = TestClock()
        let woken = Log<Int>()
        let executor = SerialTaskExecutor()
        let sleepers = (1...3).map { seconds in
            Task(executorPreference: executor) {
                try await clock.sleep(for: .seconds(seconds))
                woken.append(seconds)
            }
        }
        await clock.waitForSleepers(3)
        sleepers[1].cancel()
        #expect(clock.sleeperCount == 2)
        await withTaskExecutorPreference(executor) {
            await clock.advance(by: .seconds(3))
        }
        for sleeper in sleepers {
            sleeper.cancel()  // ends a sleeper that a faulty clock left asleep
            _ = await sleeper.result
        }
        #expect(woken.entries == [1, 3])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("waiting for sleepers ends when the waiting task is cancelled")
    func cancelledWait() async {
        let clock = TestClock()
        let waiting = Task { await clock.waitForSleepers(1) }
        waiting.cancel()
        await waiting.value
        #expect(clock.sleeperCount == 0)
    }
}
