import Foundation
import Injected
import Testing

/// An article-style key's stored variable, whose initializer Swift runs once on its first read, in a cycle of
/// defaults or under a write: the cycle stops the process with its keys, on one thread or across two, and a write
/// made while a variable's computed getter runs finishes.
///
/// Each test runs in a child process (an exit test), so that a cycle can end it and a hang cannot hang the run.
@Suite("Article-style variables in cycles and under writes")
struct VariableCycleTests {
    @Test("a cycle through a variable's initializer, raced from both ends on two threads, stops with its keys")
    func cycleThroughAnInitializerAcrossThreads() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Thread { _ = InjectedValues[\.initializerA] }.start()
            usleep(50_000)
            Thread { _ = InjectedValues[\.cachedB] }.start()
            // The cycle ends the process; if it hangs instead, exit normally so that the test fails.
            try await Task.sleep(for: .seconds(30))
        }
        let message = standardError(of: result)
        #expect(
            message.contains("dependency cycle: InitializerAKey → CachedBKey → InitializerAKey.")
                || message.contains("dependency cycle: CachedBKey → InitializerAKey → CachedBKey."),
            "\(message)"
        )
    }

    @Test("a variable's initializer whose default writes that same variable stops with the chain, on one thread")
    func initializerWritingItsOwnVariable() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Thread { _ = InjectedValues[\.selfWriting] }.start()
            try await Task.sleep(for: .seconds(30))
        }
        #expect(
            standardError(of: result).contains("dependency cycle: SelfWritingKey → SelfWriterKey → SelfWritingKey."),
            "\(standardError(of: result))"
        )
    }

    @Test("a computed getter waiting for another thread's build, whose default writes a variable, does not hang")
    func getterWaitingForABuildThatWrites() async {
        await #expect(processExitsWith: .success) {
            _ = InjectedValues[\.slowClient]
            InjectedValues.reset()
            let done = DispatchGroup()
            done.enter()
            done.enter()
            // One thread builds the configuration, whose default writes a variable; the other reads the computed
            // variable, whose getter waits for that build, holding its variable lock until it lets go of it.
            Thread {
                _ = InjectedValues[\.slowConfiguration]
                done.leave()
            }.start()
            Thread {
                usleep(2_000)
                _ = InjectedValues[\.slowClient]
                done.leave()
            }.start()
            precondition(done.wait(timeout: .now() + 20) == .success, "the threads hung")
            precondition(InjectedValues[\.slowLogLevel] == 2, "the default's write was lost")
        }
    }

    @Test("a write made while a variable's computed getter runs, through a default the getter builds, finishes")
    func writeFromAComputedGetter() async {
        await #expect(processExitsWith: .success) {
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = InjectedValues[\.computedClient]
                InjectedValues.reset()
                // The reset dropped the cached configuration, so this read builds it again, inside the getter.
                _ = InjectedValues[\.computedClient]
                done.signal()
            }.start()
            precondition(done.wait(timeout: .now() + 20) == .success, "the read hung")
            precondition(InjectedValues[\.logLevel] == 2, "the default's write was lost")
        }
    }
}

// MARK: - A computed getter waiting for another thread's build that writes

private final class SlowConfiguration: Sendable {
    init() {
        usleep(20_000)
        InjectedValues[\.slowLogLevel] = 2
    }
}

private enum SlowConfigurationKey: ReadOnlyInjectionKey {
    static var currentValue: SlowConfiguration { SlowConfiguration() }
}

private struct SlowLogLevelKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = 0
}

private struct SlowClientKey: InjectionKey {
    nonisolated(unsafe) static var stored: String?

    static var currentValue: String {
        get { stored ?? "client for \(ObjectIdentifier(InjectedValues[\.slowConfiguration]))" }
        set { stored = newValue }
    }
}

extension InjectedValues {
    fileprivate var slowConfiguration: SlowConfiguration {
        get { Self[SlowConfigurationKey.self] }
        set { Self[SlowConfigurationKey.self] = newValue }
    }

    fileprivate var slowLogLevel: Int {
        get { Self[SlowLogLevelKey.self] }
        set { Self[SlowLogLevelKey.self] = newValue }
    }

    fileprivate var slowClient: String {
        get { Self[SlowClientKey.self] }
        set { Self[SlowClientKey.self] = newValue }
    }
}

// MARK: - A cycle through an initializer, across two threads

/// Its initializer waits, so that the other thread starts building `CachedB`, then reads it.
private final class InitializerA: Sendable {
    init() {
        usleep(200_000)
        _ = InjectedValues[\.cachedB]
    }
}

/// Its default waits, then reads `InitializerA`, whose initializer the first thread is running.
private final class CachedB: Sendable {
    init() {
        usleep(50_000)
        _ = InjectedValues[\.initializerA]
    }
}

private struct InitializerAKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = InitializerA()
}

private enum CachedBKey: ReadOnlyInjectionKey {
    static var currentValue: CachedB { CachedB() }
}

// MARK: - An initializer whose default writes its own variable

private final class SelfWriting: Sendable {
    init(readsWriter: Bool) {
        if readsWriter { _ = InjectedValues[\.selfWriter] }
    }
}

private final class SelfWriter: Sendable {
    init() {
        InjectedValues[SelfWritingKey.self] = SelfWriting(readsWriter: false)
    }
}

private struct SelfWritingKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = SelfWriting(readsWriter: true)
}

private enum SelfWriterKey: ReadOnlyInjectionKey {
    static var currentValue: SelfWriter { SelfWriter() }
}

// MARK: - A computed variable whose getter builds a default that writes

private final class Configuration: Sendable {
    init() {
        InjectedValues[\.logLevel] = 2
    }
}

private enum ConfigurationKey: ReadOnlyInjectionKey {
    static var currentValue: Configuration { Configuration() }
}

private struct LogLevelKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = 0
}

private struct ComputedClientKey: InjectionKey {
    nonisolated(unsafe) static var stored: String?

    static var currentValue: String {
        get { stored ?? "client for \(ObjectIdentifier(InjectedValues[\.configuration]))" }
        set { stored = newValue }
    }
}

extension InjectedValues {
    fileprivate var initializerA: InitializerA {
        get { Self[InitializerAKey.self] }
        set { Self[InitializerAKey.self] = newValue }
    }

    fileprivate var cachedB: CachedB {
        get { Self[CachedBKey.self] }
        set { Self[CachedBKey.self] = newValue }
    }

    fileprivate var selfWriting: SelfWriting {
        get { Self[SelfWritingKey.self] }
        set { Self[SelfWritingKey.self] = newValue }
    }

    fileprivate var selfWriter: SelfWriter {
        get { Self[SelfWriterKey.self] }
        set { Self[SelfWriterKey.self] = newValue }
    }

    fileprivate var configuration: Configuration {
        get { Self[ConfigurationKey.self] }
        set { Self[ConfigurationKey.self] = newValue }
    }

    fileprivate var logLevel: Int {
        get { Self[LogLevelKey.self] }
        set { Self[LogLevelKey.self] = newValue }
    }

    fileprivate var computedClient: String {
        get { Self[ComputedClientKey.self] }
        set { Self[ComputedClientKey.self] = newValue }
    }
}
