import Foundation
import Injected
import Testing

extension ProcessGlobalStateTests {
    /// Article-style keys, whose `currentValue` is a variable the store assigns, read and written through the store
    /// from many threads at once.
    ///
    /// They write the global store, so they live in the serialized global-state suite. CI runs them in a release build
    /// and under ThreadSanitizer with `halt_on_error=1`, where a read racing a write ends the run.
    @Suite("Article-style keys under concurrent writes")
    struct ArticleKeyRaceTests {
        @Test("8 threads × 20,000 mixed reads and global writes of article-style keys never race or lose a value")
        func mixedReadsAndWrites() {
            defer { InjectedValues.reset() }
            let threads = RaceThreads(8)
            defer { threads.stop() }
            let unexpected = Counter()
            let finished = threads.round(timeout: 120) { index in
                for step in 0..<20_000 {
                    let stamp = index * 100_000 + step
                    if step % 4 == 0 {
                        // A class value and an existential, whose reads retain what a write may release.
                        InjectedValues[\.racedSetting] = RacedSetting(stamp)
                        InjectedValues[\.racedProvider] = RacedProvider(stamp: stamp)
                    } else {
                        if InjectedValues[\.racedSetting].stamp < 0 { unexpected.increment() }
                        if InjectedValues[\.racedProvider].stamp < 0 { unexpected.increment() }
                    }
                }
            }
            #expect(finished, "a round did not finish within 120 seconds")
            #expect(unexpected.value == 0)
        }

        @Test(
            "reads through a generic ReadOnlyInjectionKey parameter take turns with global writes, 4 threads × 20,000"
        )
        func genericReadsTakeTurns() {
            defer { InjectedValues.reset() }
            _ = genericRead(RacedSettingKey.self)
            let threads = RaceThreads(4)
            defer { threads.stop() }
            let unexpected = Counter()
            let finished = threads.round(timeout: 120) { index in
                for step in 0..<20_000 {
                    if index == 0 {
                        InjectedValues[\.racedSetting] = RacedSetting(step)
                    } else if genericRead(RacedSettingKey.self).stamp < -1 {
                        unexpected.increment()
                    }
                }
            }
            #expect(finished, "a round did not finish within 120 seconds")
            #expect(unexpected.value == 0)
        }

        @Test("a reset racing reads of an article-style key assigns back the original, and no read races it")
        func resetsRacingReads() {
            defer { InjectedValues.reset() }
            let original = InjectedValues[\.racedSetting]
            let threads = RaceThreads(4)
            defer { threads.stop() }
            let finished = threads.round(timeout: 120) { index in
                for step in 0..<5_000 {
                    switch (index, step % 8) {
                    case (0, 0): InjectedValues.reset()
                    case (_, 0): InjectedValues[\.racedSetting] = RacedSetting(step)
                    default: _ = InjectedValues[\.racedSetting].stamp
                    }
                }
            }
            #expect(finished, "a round did not finish within 120 seconds")
            InjectedValues.reset()
            #expect(InjectedValues[\.racedSetting] === original)
        }

        @Test("a key-path write whose read builds a cached default reading an article-style key does not hang")
        func keyPathWriteBuildingWhileAnInitializerWaits() {
            // Thread 1 writes `\.waitedConfig`; Swift reads the accessor first, which builds its `.cached` default,
            // which reads the article-style `\.racedSetting`. Meanwhile thread 2 writes the article-style
            // `\.lazySetting` globally; that is its variable's first access, whose initializer reads
            // `\.waitedConfig` and waits for thread 1's build. No one waits for anything thread 2 holds, so both finish.
            _ = InjectedValues[\.racedSetting]
            let done = DispatchGroup()
            let bodies: [@Sendable () -> Void] = [
                // Through a nested path, whose getter reads (and so builds) the whole configuration.
                { InjectedValues[\.waitedConfig.setting] = RacedSetting(-1) },
                {
                    HangProbe.buildStarted.wait()
                    InjectedValues[\.lazySetting] = RacedSetting(2)
                },
            ]
            for body in bodies {
                done.enter()
                Thread {
                    body()
                    done.leave()
                }.start()
            }
            let finished = done.wait(timeout: .now() + 20) == .success
            #expect(finished, "the two writes deadlocked")
            // After a deadlock, a reset would wait for the stuck threads too.
            guard finished else { return }
            #expect(InjectedValues[\.lazySetting].stamp == 2)
            InjectedValues.reset()
        }
    }
}

/// Signals that order the two threads of the hang test: thread 1's build has started; thread 2's initializer runs.
private enum HangProbe {
    static let buildStarted = DispatchSemaphore(value: 0)
    static let initializerRunning = DispatchSemaphore(value: 0)
    /// How many times the `.cached` default has run: only the first, thread 1's, waits for thread 2.
    static let builds = Counter()
}

final class RacedSetting: Sendable {
    let stamp: Int

    init(_ stamp: Int) {
        self.stamp = stamp
    }
}

protocol RacedProviding: Sendable {
    var stamp: Int { get }
}

private struct RacedProvider: RacedProviding {
    let stamp: Int
    /// A reference, so that copying the existential retains it.
    let box = RacedSetting(0)
}

struct WaitedConfig: Sendable {
    var setting: RacedSetting
}

private enum RacedSettingKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = RacedSetting(0)
}

private enum RacedProviderKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: any RacedProviding = RacedProvider(stamp: 0)
}

/// A `.cached` dependency whose default, once thread 2's initializer is waiting for it, reads an article-style key.
private enum WaitedConfigKey: ReadOnlyInjectionKey {
    static var currentValue: WaitedConfig {
        HangProbe.builds.increment()
        if HangProbe.builds.value == 1 {
            HangProbe.buildStarted.signal()
            _ = HangProbe.initializerRunning.wait(timeout: .now() + 2)
        }
        return WaitedConfig(setting: InjectedValues[\.racedSetting])
    }
    static var lifetime: InjectionLifetime { .cached }
}

/// Reads a key the way generic code does, knowing only that it is a `ReadOnlyInjectionKey`.
private func genericRead<K: ReadOnlyInjectionKey>(_ key: K.Type) -> K.Value {
    InjectedValues[key]
}

/// An article-style key whose variable's initializer reads the `.cached` dependency above.
private enum LazySettingKey: InjectionKey {
    nonisolated(unsafe) static var currentValue: RacedSetting = {
        HangProbe.initializerRunning.signal()
        return InjectedValues[\.waitedConfig].setting
    }()
}

extension InjectedValues {
    var racedSetting: RacedSetting {
        get { Self[RacedSettingKey.self] }
        set { Self[RacedSettingKey.self] = newValue }
    }

    fileprivate var racedProvider: any RacedProviding {
        get { Self[RacedProviderKey.self] }
        set { Self[RacedProviderKey.self] = newValue }
    }

    fileprivate var waitedConfig: WaitedConfig {
        get { Self[WaitedConfigKey.self] }
        set { Self[WaitedConfigKey.self] = newValue }
    }

    fileprivate var lazySetting: RacedSetting {
        get { Self[LazySettingKey.self] }
        set { Self[LazySettingKey.self] = newValue }
    }
}
