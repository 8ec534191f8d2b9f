import InjectedTesting
import Testing

/// A test clock wakes its sleepers earliest deadline first, each with the clock at its own deadline.
@Suite("Test clock: the order of wake-ups")
struct TestClockWakeOrderTests {
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("an advance wakes sleepers in deadline order, whatever order they fell asleep in")
    func deadlineOrder() async {
        let clock = TestClock()
        let woken = Log<Int>()
        await serially {
            await withTaskGroup(of: Void.self) { group in
                for seconds in [3, 1, 2] {
                    group.addTask {
                        try? await clock.sleep(for: .seconds(seconds))
                        woken.append(seconds)
                    }
                }
                await clock.waitForSleepers(3)
                await clock.advance(by: .seconds(3))
                group.cancelAll()  // ends a sleeper that a faulty clock left asleep
            }
        }
        #expect(woken.entries == [1, 2, 3])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("each sleeper wakes with the clock at its own deadline, not at the end of the advance")
    func timeAtEachWakeUp() async {
        let clock = TestClock()
        let woken = Log<Duration>()
        await serially {
            await withTaskGroup(of: Void.self) { group in
                for seconds in [2, 5] {
                    group.addTask {
                        try? await clock.sleep(for: .seconds(seconds))
                        woken.append(clock.now.offset)
                    }
                }
                await clock.waitForSleepers(2)
                await clock.advance(by: .seconds(10))
                group.cancelAll()  // ends a sleeper that a faulty clock left asleep
            }
        }
        #expect(woken.entries == [.seconds(2), .seconds(5)])
        #expect(clock.now == .zero.advanced(by: .seconds(10)))
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("sleepers with the same deadline wake in the order they fell asleep")
    func sameDeadline() async {
        let clock = TestClock()
        let woken = Log<String>()
        await serially {
            await withTaskGroup(of: Void.self) { group in
                for (index, name) in ["first", "second", "third"].enumerated() {
                    group.addTask {
                        try? await clock.sleep(for: .seconds(1))
                        woken.append(name)
                    }
                    // The next sleeper starts only once this one sleeps, so the order of falling asleep is known.
                    await clock.waitForSleepers(index + 1)
                }
                await clock.advance(by: .seconds(1))
                group.cancelAll()  // ends a sleeper that a faulty clock left asleep
            }
        }
        #expect(woken.entries == ["first", "second", "third"])
    }

    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    @Test("a sleeper that sleeps again within an advance wakes again, before later deadlines")
    func sleepingAgainWithinAnAdvance() async {
        let clock = TestClock()
        let woken = Log<String>()
        await serially {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for tick in 1...3 {
                        try? await clock.sleep(for: .seconds(1))
                        woken.append("tick \(tick)")
                    }
                }
                group.addTask {
                    try? await clock.sleep(for: .milliseconds(2_500))
                    woken.append("alarm")
                }
                await clock.waitForSleepers(2)
                await clock.advance(by: .seconds(3))
                group.cancelAll()  // ends a sleeper that a faulty clock left asleep
            }
        }
        #expect(woken.entries == ["tick 1", "tick 2", "alarm", "tick 3"])
    }
}
