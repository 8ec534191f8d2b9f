import Foundation
import Injected
import Testing

/// A fixed set of threads that run rounds of work together, for races that must start over many times.
///
/// Each round hands every thread the same closure, releases them together, and waits for all of them with a
/// watchdog: a round that does not finish in time reports it, instead of hanging the test run.
final class RaceThreads: @unchecked Sendable {
    // `@unchecked Sendable`: `work` and `stopping` are written by the coordinating thread before it signals `start`, and
    // read by a worker after it waits on it; the semaphore orders the two.
    let count: Int
    private let start: [DispatchSemaphore]
    private let done = DispatchSemaphore(value: 0)
    private var work: @Sendable (Int) -> Void = { _ in }
    private var stopping = false
    private var pending = 0

    init(_ count: Int) {
        self.count = count
        start = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        for index in 0..<count {
            Thread { [self] in
                while true {
                    start[index].wait()
                    if stopping { return }
                    work(index)
                    done.signal()
                }
            }.start()
        }
    }

    /// Runs `body` on every thread at once, passing each its index, and waits for all of them.
    ///
    /// - Returns: `true` if every thread finished within `timeout` seconds; `false` means something hung.
    func round(timeout: TimeInterval = 30, _ body: @escaping @Sendable (Int) -> Void) -> Bool {
        begin(body)
        return finish(timeout: timeout)
    }

    /// Starts `body` on every thread at once, and returns while they run; `finish(timeout:)` waits for them.
    func begin(_ body: @escaping @Sendable (Int) -> Void) {
        precondition(pending == 0 && !stopping, "a round is still running, or one hung")
        work = body
        pending = count
        for semaphore in start { semaphore.signal() }
    }

    /// Waits for the round that `begin(_:)` started.
    ///
    /// - Returns: `true` if every thread finished within `timeout` seconds; `false` means something hung, and the
    ///   threads are not used again.
    func finish(timeout: TimeInterval = 30) -> Bool {
        let deadline = DispatchTime.now() + timeout
        while pending > 0 {
            if done.wait(timeout: deadline) == .timedOut { return false }
            pending -= 1
        }
        return true
    }

    /// Lets the threads exit once they are not running a round.
    ///
    /// Call it when done with them.
    func stop() {
        guard !stopping else { return }
        stopping = true
        if pending == 0 {
            for semaphore in start { semaphore.signal() }
        }
    }
}

/// Races threads through generations of the race keys, and returns what went wrong.
///
/// Each generation resets the active scope (or the global store), puts `log` back in it, has each of `threads`
/// threads read one node with `read` at once, and checks that every race key was built exactly once, in `log`'s
/// context, and that every reader got the one instance of each. A generation that hangs records an issue and ends the
/// race.
func raceThroughGenerations(
    _ generations: Int,
    threads count: Int,
    log: BuildLog,
    read: @escaping @Sendable (Int) -> Node
) -> [String] {
    let threads = RaceThreads(count)
    defer { threads.stop() }
    let record = GenerationRecord()
    var problems: [String] = []
    for generation in 0..<generations {
        // A reset drops the scope's overrides too, so the log goes back in.
        InjectedValues.reset()
        InjectedValues[\.buildLog] = log
        guard threads.round({ index in record.record(read(index)) }) else {
            Issue.record("generation \(generation) did not finish within 30 seconds: a build deadlocked")
            return problems
        }
        let builds = log.take()
        if builds != everyRaceKeyOnce { problems.append("generation \(generation) built \(builds)") }
        problems += record.problems(expectingLog: log).map { "generation \(generation): \($0)" }
    }
    return problems
}

/// Counts the builds of each key, so that a test can tell how often each default ran, and in which scope.
///
/// A race test overrides `\.buildLog` in the scope or store it works in; the race keys' defaults read it, so a node
/// built in that scope's context carries that log.
final class BuildLog: @unchecked Sendable {
    // `@unchecked Sendable`: `counts` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var counts: [String: Int] = [:]

    func record(_ key: String) {
        lock.withLock { counts[key, default: 0] += 1 }
    }

    /// The counts so far, which it then clears.
    func take() -> [String: Int] {
        lock.withLock {
            defer { counts = [:] }
            return counts
        }
    }
}

/// A built dependency: the log of the scope it was built in, and the dependencies its default read.
final class Node: Sendable {
    let key: String
    let log: BuildLog
    let children: [Node]

    init(_ key: String, children: [Node] = []) {
        self.key = key
        self.log = InjectedValues[\.buildLog]
        self.children = children
        log.record(key)
        // A few hundred microseconds, as a real client's initializer takes, so that builds overlap.
        usleep(200)
    }
}

/// The names of every race key: a chain `top → middle → leaf`, and a diamond `apex → left, right → base`.
let raceKeyNames = ["top", "middle", "leaf", "apex", "left", "right", "base"]

/// What a race test expects a generation's log to hold: every key built once.
let everyRaceKeyOnce = Dictionary(uniqueKeysWithValues: raceKeyNames.map { ($0, 1) })

extension InjectedValues {
    var buildLog: BuildLog {
        get { self[BuildLogKey.self] }
        set { self[BuildLogKey.self] = newValue }
    }

    var top: Node { self[TopKey.self] }
    var middle: Node { self[MiddleKey.self] }
    var leaf: Node { self[LeafKey.self] }
    var apex: Node { self[ApexKey.self] }
    var left: Node { self[LeftKey.self] }
    var right: Node { self[RightKey.self] }
    var base: Node { self[BaseKey.self] }
}

/// Where a race test has not overridden the log: builds are counted here, which no test checks.
private let strayLog = BuildLog()

private enum BuildLogKey: ReadOnlyInjectionKey {
    static var currentValue: BuildLog { strayLog }
}

private enum TopKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("top", children: [InjectedValues[\.middle]]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum MiddleKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("middle", children: [InjectedValues[\.leaf]]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum LeafKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("leaf") }
    static var lifetime: InjectionLifetime { .cached }
}

private enum ApexKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("apex", children: [InjectedValues[\.left], InjectedValues[\.right]]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum LeftKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("left", children: [InjectedValues[\.base]]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum RightKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("right", children: [InjectedValues[\.base]]) }
    static var lifetime: InjectionLifetime { .cached }
}

private enum BaseKey: ReadOnlyInjectionKey {
    static var currentValue: Node { Node("base") }
    static var lifetime: InjectionLifetime { .cached }
}

/// Collects the nodes that threads read in one generation, and checks them against each other.
final class GenerationRecord: @unchecked Sendable {
    // `@unchecked Sendable`: `nodes` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var nodes: [Node] = []

    func record(_ node: Node) {
        lock.withLock { nodes.append(node) }
    }

    /// What is wrong with the nodes recorded since the last call, which it then forgets.
    ///
    /// It lists nodes not built with `log`, and keys with two instances; it is empty when all is well.
    func problems(expectingLog log: BuildLog) -> [String] {
        let recorded = lock.withLock {
            defer { nodes = [] }
            return nodes
        }
        var problems: [String] = []
        var instances: [String: ObjectIdentifier] = [:]
        var pending = recorded
        while let node = pending.popLast() {
            if node.log !== log { problems.append("\(node.key) was built in another scope's context") }
            let identity = ObjectIdentifier(node)
            if let seen = instances[node.key], seen != identity {
                problems.append("two instances of \(node.key)")
            }
            instances[node.key] = identity
            pending += node.children
        }
        return problems
    }
}
