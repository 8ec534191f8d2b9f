import InjectedTesting
import Testing

/// An advance moves a test clock's time as far as it is told, and wakes only the sleepers it reaches.
@Suite("Test clock: advancing part of the way")
struct TestClockAdvanceTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a new clock is at zero, with no one asleep")
    func startsAtZero() {
        let clock = TestClock()
        #expect(clock.now == .zero)
        #expect(clock.now.offset == .zero)
        #expect(clock.sleeperCount == 0)
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("advancing part of the way wakes the sleepers it reaches and leaves the others asleep")
    func partialAdvance() async {
        let clock = TestClock()
        let woken = Log<Int>()
        await serially {
            await withTaskGroup(of: Void.self) { group in
                for seconds in [1, 5] {
                    group.addTask {
                        try? await clock.sleep(for: .seconds(seconds))
                        woken.append(seconds)
                    }
                }
                await clock.waitForSleepers(2)

                await clock.advance(by: .seconds(2))
                #expect(woken.entries == [1])
                #expect(clock.now == .zero.advanced(by: .seconds(2)))
                #expect(clock.sleeperCount == 1)

                await clock.advance(by: .milliseconds(2_999))
                #expect(woken.entries == [1])
                #expect(clock.sleeperCount == 1)

                await clock.advance(by: .milliseconds(1))
                #expect(woken.entries == [1, 5])
                #expect(clock.sleeperCount == 0)
                group.cancelAll()  // ends a sleeper that a faulty clock left asleep
            }
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("advancing to an instant moves the time there, and never back")
    func advanceToAnInstant() async {
        let clock = TestClock()
        await clock.advance(to: .zero.advanced(by: .seconds(4)))
        #expect(clock.now == .zero.advanced(by: .seconds(4)))
        await clock.advance(to: .zero.advanced(by: .seconds(1)))
        #expect(clock.now == .zero.advanced(by: .seconds(4)))
        await clock.advance(by: .seconds(-1))
        #expect(clock.now == .zero.advanced(by: .seconds(4)))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a sleep is measured from the clock's time when it starts")
    func sleepFromTheCurrentTime() async {
        let clock = TestClock()
        let woken = Log<Duration>()
        await clock.advance(by: .seconds(10))
        await serially {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    try? await clock.sleep(for: .seconds(3))
                    woken.append(clock.now.offset)
                }
                await clock.waitForSleepers()
                await clock.advance(by: .seconds(2))
                #expect(woken.entries.isEmpty)
                await clock.advance(by: .seconds(1))
                #expect(woken.entries == [.seconds(13)])
                group.cancelAll()  // ends a sleeper that a faulty clock left asleep
            }
        }
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a sleep until an instant the clock has reached returns at once")
    func pastDeadline() async throws {
        let clock = TestClock()
        await clock.advance(by: .seconds(5))
        try await clock.sleep(until: .zero.advanced(by: .seconds(2)))
        try await clock.sleep(until: .zero.advanced(by: .seconds(5)))
        try await clock.sleep(for: .zero)
        #expect(clock.sleeperCount == 0)
        #expect(clock.now == .zero.advanced(by: .seconds(5)))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a sleeper is not woken by real time passing, only by an advance")
    func realTimeDoesNotCount() async throws {
        let clock = TestClock()
        let sleeping = Task { try await clock.sleep(for: .milliseconds(1)) }
        await clock.waitForSleepers()
        try await Task.sleep(for: .milliseconds(50))
        #expect(clock.sleeperCount == 1)
        await clock.advance(by: .milliseconds(1))
        try await sleeping.value
        #expect(clock.sleeperCount == 0)
    }
}
