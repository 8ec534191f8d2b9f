import InjectedTesting
import Testing

/// An immediate clock's sleeps return at once, moving its time on by the amount slept.
@Suite("Immediate clock")
struct ImmediateClockTests {
    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test("a sleep returns at once and moves the time on by the amount slept")
    func sleepReturnsAtOnce() async throws {
        let clock = ImmediateClock()
        let started = ContinuousClock.now
        try await clock.sleep(for: .seconds(60))
        #expect(clock.now == .zero.advanced(by: .seconds(60)))
        try await clock.sleep(for: .seconds(2))
        #expect(clock.now == .zero.advanced(by: .seconds(62)))
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test("a loop of long sleeps runs through without waiting")
    func loopOfSleeps() async throws {
        let clock = ImmediateClock()
        for _ in 1...1_000 {
            try await clock.sleep(for: .seconds(3_600))
        }
        #expect(clock.now == .zero.advanced(by: .seconds(3_600_000)))
    }

    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test("a sleep until an instant the clock has passed leaves the time as it is")
    func pastDeadline() async throws {
        let clock = ImmediateClock()
        try await clock.sleep(until: .zero.advanced(by: .seconds(5)))
        try await clock.sleep(until: .zero.advanced(by: .seconds(1)))
        #expect(clock.now == .zero.advanced(by: .seconds(5)))
    }

    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test("a cancelled task's sleep throws CancellationError and leaves the time as it is")
    func cancelledSleep() async {
        let clock = ImmediateClock()
        let sleeping = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(clock.now == .zero)
    }

    @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
    @Test("code that waits on any Clock<Duration> runs on it", arguments: [1, 3])
    func throughTheExistential(retries: Int) async throws {
        let clock: any Clock<Duration> = ImmediateClock()
        for _ in 0..<retries {
            try await clock.sleep(for: .milliseconds(500))
        }
        #expect((clock as? ImmediateClock)?.now == .zero.advanced(by: .milliseconds(500 * retries)))
    }
}
