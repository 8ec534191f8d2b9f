import Foundation
import Injected
import Testing

/// What a third fresh-context review of the derived defaults found, each a test that failed before its fix: a value a
/// store keeps for a derived default is handed only to a read that sees the same inputs, ending at the same root.
@Suite("A derived default follows its inputs: third review")
struct DerivedDefaultThirdReviewTests {
    @Test("a global reset drops what a running scope built from the global override the reset removed")
    func globalResetDropsWhatAScopeBuiltFromTheGlobalStore() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.badgeUser] = "alice"
            withInjectedValues {
                $0.badgeDirectory = "/sandbox"
            } operation: {
                precondition(InjectedValues[\.badge].label == "alice@/sandbox")
                let reset = Thread { InjectedValues.reset() }
                reset.start()
                while !reset.isFinished { usleep(1_000) }
                let label = InjectedValues[\.badge].label
                precondition(label == "anon@/sandbox", "read \(label) after the reset")
            }
        }
    }

    @Test("a global reset drops what an object of an ended scope built from the global override the reset removed")
    func globalResetDropsWhatAnObjectBuiltFromTheGlobalStore() async {
        await #expect(processExitsWith: .success) {
            let model = withInjectedValues {
                $0.badgeDirectory = "/sandbox"
            } operation: {
                BadgeModel()
            }
            InjectedValues[\.badgeUser] = "bob"
            precondition(model.badge.label == "bob@/sandbox")
            InjectedValues.reset()
            precondition(model.badge.label == "anon@/sandbox", "read \(model.badge.label) after the reset")
        }
    }

    @Test(
        "an object a helper made in a fresh scope that has ended keeps its overrides in a test that overrides another"
    )
    func objectOfAnEndedFreshScopeKeepsItsOverridesInATest() {
        withTestInjectedValues(strict: nil) {
            $0.badgeDirectory = "/test"
        } operation: {
            let model = withInjectedValues(fresh: true) {
                $0.badgeUser = "mock"
            } operation: {
                BadgeModel()
            }
            #expect(model.user == "mock")
            #expect(model.badge.label == "mock@/test")
        }
    }

    @Test("a strict test is not told of a key the helper's fresh scope overrides, and builds from the helper's value")
    func strictTestIsNotToldOfTheHelpersOverride() {
        let reports = StringLog()
        withTestInjectedValues(strict: true, reportingTo: reports.append) {
            $0.badgeDirectory = "/strict-test"
        } operation: {
            let model = withInjectedValues(fresh: true) {
                $0.badgeUser = "mock"
            } operation: {
                BadgeModel()
            }
            #expect(model.badge.label == "mock@/strict-test")
        }
        #expect(BadgeLedger.builds(endingWith: "mock@/strict-test") == 1)
        // The badge itself is read live, which is reported; the user is the helper's.
        #expect(!reports.entries.contains { $0.contains("BadgeUserKey") }, "\(reports.entries)")
    }

    @Test("a fresh scope's own read does not get a value an object's read built from the global store")
    func freshScopeDoesNotGetTheGlobalStoresValue() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.badgeUser] = "global"
            let model = withInjectedValues {
                $0.badgeTag = "any"
            } operation: {
                BadgeModel()
            }
            withInjectedValues(fresh: true) {
                $0.badgeDirectory = "/fresh"
            } operation: {
                precondition(model.badge.label == "global@/fresh")
                let label = InjectedValues[\.badge].label
                precondition(label == "anon@/fresh", "the fresh scope's own read got \(label)")
            }
        }
    }

    @Test("an object of a plain scope read in a fresh scope does not get the fresh scope's own value")
    func objectDoesNotGetTheFreshScopesValue() {
        let model = withInjectedValues {
            $0.badgeUser = "remembered"
        } operation: {
            BadgeModel()
        }
        withInjectedValues(fresh: true) {
            $0.badgeDirectory = "/fresh"
        } operation: {
            #expect(InjectedValues[\.badge].label == "anon@/fresh")
            #expect(model.badge.label == "remembered@/fresh")
            #expect(InjectedValues[\.badge].label == "anon@/fresh")
        }
    }

    @Test("a nested scope that overrides another input leaves the outer scope its instance")
    func nestedScopeLeavesTheOuterScopeItsInstance() {
        withInjectedValues(fresh: true) { _ in
        } operation: {
            _ = InjectedValues[\.badge]
            withInjectedValues {
                $0.badgeDirectory = "/outer-d8"
            } operation: {
                let first = InjectedValues[\.badge]
                for _ in 0..<10 {
                    withInjectedValues {
                        $0.badgeUser = "inner"
                    } operation: {
                        #expect(InjectedValues[\.badge].label == "inner@/outer-d8")
                    }
                    #expect(InjectedValues[\.badge] === first)
                }
            }
        }
        #expect(BadgeLedger.builds(endingWith: "anon@/outer-d8") == 1)
    }

    @Test("objects of an ended scope that made a value each keep no value once they are gone, while another lives")
    func droppedObjectsOfAnEndedScopeKeepNoValues() {
        var readers: [BadgeModel] = []
        let keeper = withInjectedValues {
            $0.badgeDirectory = "/request-d6"
        } operation: {
            let keeper = BadgeModel()
            for index in 0..<1_000 {
                InjectedValues[\.badgeUser] = "u\(index)"
                readers.append(BadgeModel())
            }
            return keeper
        }
        for reader in readers { _ = reader.badge }
        #expect(BadgeLedger.builds(endingWith: "@/request-d6") == 1_000)
        readers.removeAll()
        let alive = BadgeLedger.alive(endingWith: "@/request-d6")
        #expect(alive <= 16, "\(alive) values alive")
        withExtendedLifetime(keeper) {}
    }

    @Test("a factory default that reads another object's .cached property does not build it again on each read")
    func factoryReadingAnObjectsPropertyBuildsOnce() {
        let shared = withInjectedValues {
            $0.badgeDirectory = "/relay-d4"
        } operation: {
            BadgeModel()
        }
        let reader = withInjectedValues {
            $0.badgeTag = "reader"
            $0.badgeSource = BadgeSource(model: shared)
        } operation: {
            BadgeRelayModel()
        }
        let first = reader.badge
        let reads = (0..<100).map { _ in reader.badge }
        #expect(reads.allSatisfy { $0 === first })
        #expect(BadgeLedger.builds(endingWith: "@/relay-d4") == 1)
    }
}

/// What a review of the fix for the third review found, each a test that failed before its fix.
@Suite("A derived default follows its inputs: review of the third review's fix")
struct DerivedDefaultThirdReviewFixTests {
    @Test("a value with a property of its own, built for an object of an ended scope, is released with the object")
    func valueWithAPropertyIsReleasedWithTheObject() {
        weak var built: BadgeService?
        do {
            let model = withInjectedValues {
                $0.badgeDirectory = "/released"
            } operation: {
                BadgeServiceModel()
            }
            built = model.service
            #expect(built?.directory.wrappedValue == "/released")
        }
        #expect(built == nil)
    }

    @Test("a fresh scope's own instance stays its own while it reads objects of nine other scopes")
    func freshScopesInstanceSurvivesReadsThroughOtherObjects() {
        let models = (0..<9).map { index in
            withInjectedValues(fresh: true) {
                $0.badgeDirectory = "/other-\(index)"
            } operation: {
                BadgeModel()
            }
        }
        withInjectedValues(fresh: true) {
            $0.badgeUser = "own-fresh"
        } operation: {
            let first = InjectedValues[\.badge]
            for model in models { _ = model.badge }
            #expect(InjectedValues[\.badge] === first)
        }
        #expect(BadgeLedger.builds(endingWith: "own-fresh@/live") == 1)
    }

    @Test("a scope's own instance stays its own while it reads objects of nine other scopes")
    func scopesInstanceSurvivesReadsThroughOtherObjects() {
        inFreshScope {
            let models = (0..<9).map { index in
                withInjectedValues {
                    $0.badgeDirectory = "/elsewhere-\(index)"
                } operation: {
                    BadgeModel()
                }
            }
            withInjectedValues {
                $0.badgeUser = "own-plain"
            } operation: {
                let first = InjectedValues[\.badge]
                for model in models { _ = model.badge }
                #expect(InjectedValues[\.badge] === first)
            }
        }
        #expect(BadgeLedger.builds(endingWith: "own-plain@/live") == 1)
    }

    @Test("a scope's instance that an object's read on a thread built first stays while it reads nine other objects")
    func instanceAnObjectBuiltFirstStaysTheScopes() {
        inFreshScope {
            let models = (0..<9).map { index in
                withInjectedValues {
                    $0.badgeUser = "someone-\(index)"
                } operation: {
                    BadgeModel()
                }
            }
            withInjectedValues {
                $0.badgeDirectory = "/object-first"
            } operation: {
                let model = BadgeModel()
                let first = BadgeSlot()
                #expect(runOnThreads(1) { _ in first.badge = model.badge })
                let own = InjectedValues[\.badge]
                #expect(own === first.badge)
                for other in models { _ = other.badge }
                let again = BadgeSlot()
                #expect(runOnThreads(1) { _ in again.badge = model.badge })
                #expect(again.badge === own)
                #expect(InjectedValues[\.badge] === own)
            }
        }
        #expect(BadgeLedger.builds(endingWith: "anon@/object-first") == 1)
    }

    @Test("a scope keeps its instance after a scope inside it is built on another object's scope")
    func scopeFromAnotherObjectLeavesTheInstance() {
        inFreshScope {
            let other = withInjectedValues {
                $0.badgeUser = "from-other"
            } operation: {
                BadgeModel()
            }
            withInjectedValues {
                $0.badgeDirectory = "/kept-from"
            } operation: {
                let first = InjectedValues[\.badge]
                withInjectedValues(from: other.$badge) {
                    #expect(InjectedValues[\.badge].label == "from-other@/kept-from")
                }
                #expect(InjectedValues[\.badge] === first)
            }
        }
        #expect(BadgeLedger.builds(endingWith: "anon@/kept-from") == 1)
    }

    @Test("a write to an input in an outer scope while a nested scope builds from it leaves no stale value")
    func outerWriteDuringANestedBuildIsNotKept() {
        inFreshScope {
            _ = InjectedValues[\.slowBadge]
            withInjectedValues {
                $0.badgeUser = "first"
            } operation: {
                let outer = BadgeModel()
                withInjectedValues {
                    $0.badgeDirectory = "/during"
                    $0.slowBadgeGate = SlowBadgeGate()
                } operation: {
                    let gate = InjectedValues[\.slowBadgeGate]!
                    let writer = Thread {
                        _ = gate.userRead.wait(timeout: .now() + 10)
                        outer.user = "second"
                        gate.written.signal()
                    }
                    writer.start()
                    #expect(InjectedValues[\.slowBadge].label == "first@/during")
                    while !writer.isFinished { usleep(500) }
                    #expect(InjectedValues[\.slowBadge].label == "second@/during")
                }
            }
        }
    }

    @Test("a build of the key in another scope, which reads other inputs, leaves a running scope its instance")
    func anotherScopesBuildLeavesTheInstance() {
        inFreshScope {
            withInjectedValues {
                $0.badgeTag = "x"
            } operation: {
                withInjectedValues {
                    $0.badgeUser = "split"
                } operation: {
                    _ = InjectedValues[\.dynamicBadge]
                    let first = InjectedValues[\.dynamicBadge]
                    #expect(runOnThreads(1) { _ in inFreshScope { _ = InjectedValues[\.dynamicBadge] } })
                    #expect(InjectedValues[\.dynamicBadge] === first)
                }
            }
        }
    }

    @Test("a nested scope's reads get one instance when the key reads an input the store did not know of")
    func inputTheStoreDidNotKnowOfGetsOneInstance() {
        inFreshScope {
            withInjectedValues {
                $0.badgeTag = "x"
            } operation: {
                withInjectedValues {
                    $0.badgeUser = "unknown-input"
                } operation: {
                    let first = InjectedValues[\.flaggedBadge]
                    #expect(InjectedValues[\.flaggedBadge] === first)
                }
            }
        }
        #expect(BadgeLedger.builds(endingWith: "flagged:x-unknown-input") == 1)
    }

    @Test("a write in an outer scope to an input the store did not know of, while a nested scope builds, is not kept")
    func outerWriteToAnUnknownInputDuringABuildIsNotKept() {
        inFreshScope {
            #expect(InjectedValues[\.gatedDynamicBadge].label == "dyn:none")
            withInjectedValues {
                $0.badgeUser = "first"
            } operation: {
                let outer = BadgeModel()
                withInjectedValues {
                    $0.badgeTag = "x"
                    $0.slowBadgeGate = SlowBadgeGate()
                } operation: {
                    let gate = InjectedValues[\.slowBadgeGate]!
                    let writer = Thread {
                        _ = gate.userRead.wait(timeout: .now() + 10)
                        outer.user = "second"
                        gate.written.signal()
                    }
                    writer.start()
                    #expect(InjectedValues[\.gatedDynamicBadge].label == "dyn:x-first")
                    while !writer.isFinished { usleep(500) }
                    #expect(InjectedValues[\.gatedDynamicBadge].label == "dyn:x-second")
                }
            }
        }
    }

    @Test("a write to an input in an outer scope releases what a nested scope built from the old value")
    func outerWriteReleasesTheNestedScopesStaleValue() {
        weak var old: Badge?
        inFreshScope {
            withInjectedValues {
                $0.badgeUser = "before"
            } operation: {
                let outer = BadgeModel()
                withInjectedValues {
                    $0.badgeDirectory = "/nested-stale"
                } operation: {
                    old = InjectedValues[\.badge]
                    let writer = Thread { outer.user = "after" }
                    writer.start()
                    while !writer.isFinished { usleep(500) }
                    #expect(InjectedValues[\.badge].label == "after@/nested-stale")
                    #expect(old == nil)
                }
            }
        }
    }
}

// MARK: - Fixtures

/// How many badges were built with each label, and how many are alive: each test uses labels of its own.
enum BadgeLedger {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var builds: [String: Int] = [:]
    nonisolated(unsafe) private static var alive: [String: Int] = [:]

    static func made(_ label: String) {
        lock.withLock {
            (builds[label, default: 0], alive[label, default: 0]) = (
                builds[label, default: 0] + 1, alive[label, default: 0] + 1
            )
        }
    }

    static func gone(_ label: String) { lock.withLock { alive[label, default: 0] -= 1 } }

    /// The builds of the labels that end with `suffix`.
    static func builds(endingWith suffix: String) -> Int {
        lock.withLock { builds.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }

    /// The badges alive whose labels end with `suffix`.
    static func alive(endingWith suffix: String) -> Int {
        lock.withLock { alive.filter { $0.key.hasSuffix(suffix) }.values.reduce(0, +) }
    }
}

final class Badge: Sendable {
    let label: String

    init(label: String) {
        self.label = label
        BadgeLedger.made(label)
    }

    deinit { BadgeLedger.gone(label) }
}

/// A `.cached` default derived from two inputs, the user and the directory, as a favorites store is.
private enum BadgeKey: ReadOnlyInjectionKey {
    static var currentValue: Badge {
        Badge(label: InjectedValues[\.badgeUser] + "@" + InjectedValues[\.badgeDirectory])
    }
}

/// A `.cached` service with a property of its own, which remembers where it was built.
final class BadgeService: Sendable {
    let directory = Injected(\.badgeDirectory)
}

private enum BadgeServiceKey: ReadOnlyInjectionKey {
    static var currentValue: BadgeService {
        _ = InjectedValues[\.badgeDirectory]
        return BadgeService()
    }
}

private enum BadgeUserKey: ReadOnlyInjectionKey {
    static var currentValue: String { "anon" }
}

private enum BadgeDirectoryKey: ReadOnlyInjectionKey {
    static var currentValue: String { "/live" }
}

private enum BadgeTagKey: ReadOnlyInjectionKey {
    static var currentValue: String { "none" }
}

/// A place a thread puts the badge it read.
final class BadgeSlot: @unchecked Sendable {
    // `@unchecked Sendable`: written by one thread, read by the test after that thread has finished.
    var badge: Badge?
}

/// Makes `SlowBadgeKey`'s build wait, after it reads the user, until the test has written it.
final class SlowBadgeGate: Sendable {
    let userRead = DispatchSemaphore(value: 0)
    let written = DispatchSemaphore(value: 0)
}

private enum SlowBadgeGateKey: ReadOnlyInjectionKey {
    static var currentValue: SlowBadgeGate? { nil }
}

/// A `.cached` default that reads the user, waits at the gate if there is one, then reads the directory.
private enum SlowBadgeKey: ReadOnlyInjectionKey {
    static var currentValue: Badge {
        let user = InjectedValues[\.badgeUser]
        if let gate = InjectedValues[\.slowBadgeGate] {
            gate.userRead.signal()
            _ = gate.written.wait(timeout: .now() + 10)
        }
        return Badge(label: user + "@" + InjectedValues[\.badgeDirectory])
    }
}

/// A `.cached` default that reads the user only where the tag is "x", as a default with a feature flag does.
private enum DynamicBadgeKey: ReadOnlyInjectionKey {
    static var currentValue: Badge {
        let tag = InjectedValues[\.badgeTag]
        return Badge(label: tag == "x" ? "dyn:x-" + InjectedValues[\.badgeUser] : "dyn:" + tag)
    }
}

/// The same, for one test alone, so that no other test teaches the store that it reads the user.
private enum FlaggedBadgeKey: ReadOnlyInjectionKey {
    static var currentValue: Badge {
        let tag = InjectedValues[\.badgeTag]
        return Badge(label: tag == "x" ? "flagged:x-" + InjectedValues[\.badgeUser] : "flagged:" + tag)
    }
}

/// The same, which waits at the gate after reading the user: its own key, so that no other test teaches the store
/// that it reads the user.
private enum GatedDynamicBadgeKey: ReadOnlyInjectionKey {
    static var currentValue: Badge {
        let tag = InjectedValues[\.badgeTag]
        guard tag == "x" else { return Badge(label: "dyn:" + tag) }
        let user = InjectedValues[\.badgeUser]
        if let gate = InjectedValues[\.slowBadgeGate] {
            gate.userRead.signal()
            _ = gate.written.wait(timeout: .now() + 10)
        }
        return Badge(label: "dyn:x-" + user)
    }
}

/// Where `BadgeRelayKey`'s factory reads its value: another object's property.
struct BadgeSource: Sendable {
    let model: BadgeModel?
}

private enum BadgeSourceKey: TestValueKey {
    static var currentValue: BadgeSource { BadgeSource(model: nil) }
    static var testValue: BadgeSource { BadgeSource(model: nil) }
}

/// A factory that reads another object's `.cached` property.
private enum BadgeRelayKey: ReadOnlyInjectionKey {
    static var lifetime: InjectionLifetime { .uncached }
    static var currentValue: Badge { InjectedValues[\.badgeSource].model!.badge }
}

extension InjectedValues {
    var badge: Badge {
        get { Self[BadgeKey.self] }
        set { Self[BadgeKey.self] = newValue }
    }

    var badgeService: BadgeService { Self[BadgeServiceKey.self] }

    var badgeUser: String {
        get { Self[BadgeUserKey.self] }
        set { Self[BadgeUserKey.self] = newValue }
    }

    var badgeDirectory: String {
        get { Self[BadgeDirectoryKey.self] }
        set { Self[BadgeDirectoryKey.self] = newValue }
    }

    var badgeTag: String {
        get { Self[BadgeTagKey.self] }
        set { Self[BadgeTagKey.self] = newValue }
    }

    var badgeSource: BadgeSource {
        get { Self[BadgeSourceKey.self] }
        set { Self[BadgeSourceKey.self] = newValue }
    }

    var badgeRelay: Badge { Self[BadgeRelayKey.self] }

    var slowBadge: Badge { Self[SlowBadgeKey.self] }

    var dynamicBadge: Badge { Self[DynamicBadgeKey.self] }

    var gatedDynamicBadge: Badge { Self[GatedDynamicBadgeKey.self] }

    var flaggedBadge: Badge { Self[FlaggedBadgeKey.self] }

    var slowBadgeGate: SlowBadgeGate? {
        get { Self[SlowBadgeGateKey.self] }
        set { Self[SlowBadgeGateKey.self] = newValue }
    }
}

struct BadgeModel: Sendable {
    @Injected(\.badge) var badge
    @Injected(\.badgeUser) var user
}

struct BadgeServiceModel: Sendable {
    @Injected(\.badgeService) var service
}

struct BadgeRelayModel: Sendable {
    @Injected(\.badgeRelay) var badge
}
