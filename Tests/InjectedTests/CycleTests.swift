import Foundation
import Injected
import Testing

/// Misuse stops the process with a message that names what went wrong and how to fix it.
///
/// Each test runs the misuse in a child process (an exit test) and checks the message it printed.
@Suite("Process-ending misuse")
struct CycleTests {
    @Test("a cycle among cached defaults stops the process and names the chain")
    func cachedCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = InjectedValues[\.alpha]
        }
        let message = standardError(of: result)
        #expect(message.contains("InjectedValues: dependency cycle: AlphaKey → BetaKey → AlphaKey."))
        #expect(message.contains("To fix it, break the cycle"))
    }

    @Test("a cycle among uncached computed defaults stops the process and names every key in order")
    func uncachedCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = InjectedValues[\.gamma]
        }
        #expect(standardError(of: result).contains("dependency cycle: GammaKey → DeltaKey → EpsilonKey → GammaKey."))
    }

    @Test("a default that reads itself stops the process")
    func selfCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = InjectedValues[\.ouroboros]
        }
        #expect(standardError(of: result).contains("dependency cycle: OuroborosKey → OuroborosKey."))
    }

    @Test("a cycle split across two threads stops the process instead of deadlocking")
    func crossThreadCycle() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            Thread { _ = InjectedValues[\.east] }.start()
            Thread { _ = InjectedValues[\.west] }.start()
            // The cycle ends the process; if it deadlocked instead, exit normally so the test fails.
            try await Task.sleep(for: .seconds(30))
        }
        let message = standardError(of: result)
        #expect(
            message.contains("dependency cycle: EastKey → WestKey → EastKey.")
                || message.contains("dependency cycle: WestKey → EastKey → WestKey.")
        )
    }

    @Test("writing through a read-only wrapper stops the process and names the declaration, never an address")
    func readOnlyWrapperWrite() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let holder = ReadOnlyHolder()
            holder.setDerived("nowhere to go")
        }
        let message = standardError(of: result)
        #expect(
            message.contains(
                "Injected: cannot assign to the read-only @Injected property declared at InjectedTests/CycleTests.swift:"
            )
        )
        #expect(message.contains(", of type String: its accessor in the InjectedValues extension"))
        #expect(message.contains("To fix it, give that accessor a setter"))
        // The stack trace after the message prints addresses; the message itself must not.
        let firstLine = message.split(separator: "\n").first ?? ""
        #expect(!firstLine.contains("0x"), "the message names an address: \(firstLine)")
    }
}

private struct ReadOnlyHolder {
    @Injected(\.derived) var derived

    func setDerived(_ value: String) {
        derived = value
    }
}

/// Lets the two threads of `crossThreadCycle` start their builds before either reads the other's key, so that
/// each thread waits on the other's build rather than finding the cycle on its own stack.
private let eastStarted = DispatchSemaphore(value: 0)
private let westStarted = DispatchSemaphore(value: 0)

private enum AlphaKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.beta] }
    static var lifetime: InjectionLifetime { .cached }
}

private enum BetaKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.alpha] }
    static var lifetime: InjectionLifetime { .cached }
}

private enum GammaKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.delta] }
}

private enum DeltaKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.epsilon] }
}

private enum EpsilonKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.gamma] }
}

private enum OuroborosKey: ReadOnlyInjectionKey {
    static var currentValue: String { InjectedValues[\.ouroboros] }
}

private enum EastKey: ReadOnlyInjectionKey {
    static var currentValue: String {
        eastStarted.signal()
        westStarted.wait()
        return InjectedValues[\.west]
    }
    static var lifetime: InjectionLifetime { .cached }
}

private enum WestKey: ReadOnlyInjectionKey {
    static var currentValue: String {
        westStarted.signal()
        eastStarted.wait()
        return InjectedValues[\.east]
    }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var alpha: String { Self[AlphaKey.self] }
    fileprivate var beta: String { Self[BetaKey.self] }
    fileprivate var gamma: String { Self[GammaKey.self] }
    fileprivate var delta: String { self[DeltaKey.self] }
    fileprivate var epsilon: String { Self[EpsilonKey.self] }
    fileprivate var ouroboros: String { Self[OuroborosKey.self] }
    fileprivate var east: String { Self[EastKey.self] }
    fileprivate var west: String { Self[WestKey.self] }
    fileprivate var derived: String { "derived from " + placementFree }
    fileprivate var placementFree: String { "nothing" }
}
