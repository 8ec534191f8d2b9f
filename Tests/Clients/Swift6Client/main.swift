#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// A Swift 6 mode app that copied Injected's single file, with Sendable services, a cached singleton, scopes
// across tasks, and a detached task reading through a remembered scope.
// Tests/Clients/run.sh compiles it together with Sources/Injected/Injected.swift and runs it.

protocol Clock: Sendable {
    var now: Int { get }
}

struct SystemClock: Clock {
    var now: Int { 1_000 }
}

struct FixedClock: Clock {
    let now: Int
}

final class Database: Sendable {
    let name: String

    init(name: String) {
        self.name = name
    }
}

private enum ClockKey: ReadOnlyInjectionKey {
    static var currentValue: any Clock { SystemClock() }
}

private enum DatabaseKey: ReadOnlyInjectionKey {
    static var currentValue: Database { Database(name: "main") }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    var clock: any Clock {
        get { Self[ClockKey.self] }
        set { Self[ClockKey.self] = newValue }
    }

    var database: Database {
        get { self[DatabaseKey.self] }
        set { self[DatabaseKey.self] = newValue }
    }
}

struct Report: Sendable {
    @Injected(\.clock) var clock
    @Injected(\.database) var database
}

actor Journal {
    @Injected(\.clock) var clock

    func stamp() -> Int { clock.now }
}

func check(_ condition: Bool, _ message: String) {
    if !condition {
        print("swift6 client: FAILED: \(message)")
        exit(1)
    }
}

check(Report().clock.now == 1_000, "the default clock")
check(Report().database === Report().database, "a cached singleton is built once")

let stamps = await withInjectedValues {
    $0.clock = FixedClock(now: 42)
} operation: {
    async let child = Journal().stamp()
    let fromTask = await Task { Report().clock.now }.value
    let report = Report()
    let fromDetached = await Task.detached { report.clock.now }.value
    return [await child, fromTask, fromDetached]
}
check(stamps == [42, 42, 42], "a scope reaches async let, Task {} and a remembered scope: \(stamps)")
check(await Task.detached { InjectedValues[\.clock].now }.value == 1_000, "a detached task sees the global store")

let counts = await withTaskGroup(of: Bool.self) { group in
    for index in 0..<100 {
        group.addTask {
            withInjectedValues {
                $0.clock = FixedClock(now: index)
            } operation: {
                Report().clock.now == index
            }
        }
    }
    var matches = 0
    for await matched in group where matched { matches += 1 }
    return matches
}
check(counts == 100, "100 concurrent scopes see their own clock")
print("swift6 client: ok")
