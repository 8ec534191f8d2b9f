import InjectedTesting
import Testing

/// A test waits for code to fall asleep on a test clock before it advances the clock.
@Suite("Test clock: waiting for sleepers")
struct TestClockWaitTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("waiting for sleepers returns once that many tasks are asleep")
    func waitsForTheCount() async {
        let clock = TestClock()
        let counted = Log<Int>()
        let waiting = Task {
            await clock.waitForSleepers(2)
            counted.append(clock.sleeperCount)
        }
        let first = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        #expect(counted.entries.isEmpty)
        let second = Task { try await clock.sleep(for: .seconds(1)) }
        await waiting.value
        #expect(counted.entries == [2])
        await clock.advance(by: .seconds(1))
        _ = await (first.result, second.result)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("waiting for sleepers returns at once when enough are asleep already")
    func enoughAlready() async {
        let clock = TestClock()
        await clock.waitForSleepers(0)
        let sleeping = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        await clock.waitForSleepers(1)
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .seconds(1))
        _ = await sleeping.result
    }
}
