import Foundation
import Testing

@testable import Injected

/// What the fourth fresh-context review of the derived defaults left open, each a test that failed before its fix: a
/// scope's own instance of a derived default stays its own, wherever the store keeps it, however many values other
/// reads in the scope build.
@Suite("A derived default's instance stays the reading scope's own")
struct DerivedDefaultOwnerTests {
    @Test("a scope's instance first built inside another default's build stays while it reads nine other objects")
    func instanceBuiltInsideAnotherBuildStays() {
        inFreshScope {
            let models = nineModels(overriding: \.badgeDirectory, "/nested-elsewhere")
            withInjectedValues {
                $0.badgeUser = "own-nested"
            } operation: {
                let frame = InjectedValues[\.badgeFrame]
                for model in models { _ = model.badge }
                #expect(InjectedValues[\.badge] === frame.badge)
                #expect(InjectedValues[\.badgeFrame] === frame)
            }
        }
        #expect(BadgeLedger.builds(endingWith: "own-nested@/live") == 1)
    }

    @Test("a scope opened on an ended scope's object keeps its instance while it reads nine other objects")
    func scopeOpenedOnAnEndedScopesObjectKeepsItsInstance() {
        inFreshScope {
            let source = withInjectedValues {
                $0.badgeDirectory = "/ended-from"
            } operation: {
                BadgeModel()
            }
            let models = nineModels(overriding: \.badgeUser, "from-elsewhere")
            withInjectedValues(from: source.$badge) {
                $0.badgeTag = "from"
            } operation: {
                let first = InjectedValues[\.badge]
                for model in models { _ = model.badge }
                #expect(InjectedValues[\.badge] === first)
            }
        }
        #expect(BadgeLedger.builds(endingWith: "anon@/ended-from") == 1)
    }

    @Test("a captured scope's run, once the scope has ended, keeps its instance while it reads nine other objects")
    func runOfAnEndedCaptureKeepsItsInstance() {
        inFreshScope {
            let captured = withInjectedValues {
                $0.badgeDirectory = "/ended-capture"
            } operation: {
                InjectedValues.capture()
            }
            let models = nineModels(overriding: \.badgeUser, "capture-elsewhere")
            captured.run {
                let first = InjectedValues[\.badge]
                for model in models { _ = model.badge }
                #expect(InjectedValues[\.badge] === first)
            }
        }
        #expect(BadgeLedger.builds(endingWith: "anon@/ended-capture") == 1)
    }

    @Test("a fresh scope's own read gets the instance a nested scope's read kept in the fresh scope while it built")
    func freshScopesOwnReadTakesTheInstanceKeptMeanwhile() async {
        await #expect(processExitsWith: .success) {
            readAsPremium { InjectedValues[\.gatedTierService] }
            withInjectedValues(fresh: true) {
                $0.tierUser = "basic"
            } operation: {
                let fresh = InjectedValues.capture()
                Thread {
                    guard TierGate.ownBuildStarted.wait(timeout: .now() + 10) == .success else { exit(4) }
                    fresh.run {
                        withInjectedValues {
                            $0.tierTag = "nested"
                        } operation: {
                            _ = InjectedValues[\.gatedTierService]
                        }
                    }
                    TierGate.nestedReadDone.signal()
                }.start()
                let first = InjectedValues[\.gatedTierService]
                let second = InjectedValues[\.gatedTierService]
                precondition(first === second, "two instances: the scope's own read kept one, the next got another")
            }
        }
    }

    @Test("a fresh scope keeps the instance its own read took while a later nested read keeps another after a write")
    func freshScopeKeepsItsOwnInstanceOverALaterNestedOne() async {
        await #expect(processExitsWith: .success) {
            readAsPremium { InjectedValues[\.relayTierService] }
            withInjectedValues(fresh: true) {
                $0.tierUser = "basic"
            } operation: {
                let fresh = InjectedValues.capture()
                let first = readNested(in: fresh, tag: "first", relay: "first") { InjectedValues[\.relayTierService] }
                RelayGate.awaitArrival(of: "first")
                InjectedValues[\.tierNote] = "a key the service never reads"
                let second = readNested(in: fresh, tag: "second", relay: "second") {
                    InjectedValues[\.relayTierService]
                }
                RelayGate.awaitArrival(of: "second")
                Thread {
                    RelayGate.awaitArrival(of: "own")
                    RelayGate.release("first")
                    RelayGate.wait(first)
                    RelayGate.release("own")
                }.start()
                Thread.current.threadDictionary["relay"] = "own"
                let own = InjectedValues[\.relayTierService]
                Thread.current.threadDictionary["relay"] = nil
                RelayGate.release("second")
                RelayGate.wait(second)
                let again = InjectedValues[\.relayTierService]
                precondition(own === again, "the scope's own read got another instance with no write in between")
            }
        }
    }

    @Test("a fresh scope keeps its own read's instance, for nested reads too, though another key was written meanwhile")
    func ownInstanceSurvivesAnUnrelatedWriteDuringItsBuild() async {
        await #expect(processExitsWith: .success) {
            readAsPremium { InjectedValues[\.relayTierService] }
            withInjectedValues(fresh: true) {
                $0.tierUser = "basic"
            } operation: {
                let fresh = InjectedValues.capture()
                let note = Injected(\.tierNote)
                let nested = ServiceSlot()
                let nestedDone = DispatchSemaphore(value: 0)
                Thread {
                    RelayGate.awaitArrival(of: "own")
                    note.wrappedValue = "a key the service never reads"
                    _ = readNested(in: fresh, tag: "nested", relay: "nested") {
                        InjectedValues[\.relayTierService]
                    } then: {
                        nested.service = $0
                        nestedDone.signal()
                    }
                    RelayGate.awaitArrival(of: "nested")
                    RelayGate.release("own")
                }.start()
                Thread.current.threadDictionary["relay"] = "own"
                let own = InjectedValues[\.relayTierService]
                Thread.current.threadDictionary["relay"] = nil
                RelayGate.release("nested")
                RelayGate.wait(nestedDone)
                precondition(InjectedValues[\.relayTierService] === own, "the scope's next read got another instance")
                precondition(nested.service === own, "the nested read, which overrides nothing it reads, kept another")
            }
        }
    }

    @Test("a fresh scope's own reads get one frame when two nested builds of it finish around the first")
    func freshScopesOwnReadsGetOneFrameBetweenTwoNestedBuilds() async {
        await #expect(processExitsWith: .success) {
            readAsPremium { InjectedValues[\.relayFrame] }
            withInjectedValues {
                $0.tierUser = "basic-warm"
            } operation: {
                _ = InjectedValues[\.tierService]
            }
            withInjectedValues(fresh: true) {
                $0.tierUser = "basic"
            } operation: {
                let fresh = InjectedValues.capture()
                let first = readNested(in: fresh, tag: "first", relay: "first frame") { InjectedValues[\.relayFrame] }
                RelayGate.awaitArrival(of: "first frame")
                let second = readNested(in: fresh, tag: "second", relay: "second frame") {
                    InjectedValues[\.relayFrame]
                }
                RelayGate.awaitArrival(of: "second frame")
                RelayGate.release("first frame")
                RelayGate.wait(first)
                let own = InjectedValues[\.relayFrame]
                RelayGate.release("second frame")
                RelayGate.wait(second)
                precondition(InjectedValues[\.relayFrame] === own, "the scope's own reads got two frames")
                precondition(own.service === InjectedValues[\.tierService], "the frame holds another service")
            }
        }
    }

    @Test("a frame a nested read builds while the scope writes its user holds the service the scope reads after")
    func frameBuiltDuringTheScopesWriteHoldsItsService() async {
        await #expect(processExitsWith: .success) {
            readAsPremium { InjectedValues[\.releasedFrame] }
            withInjectedValues(fresh: true) {
                $0.tierUser = "basic"
            } operation: {
                let fresh = InjectedValues.capture()
                _ = InjectedValues[\.releasedService]
                ReleaseGate.arm()
                let done = DispatchSemaphore(value: 0)
                Thread {
                    ReleaseGate.awaitRelease()
                    _ = readNested(in: fresh, tag: "n", relay: "during the write") {
                        InjectedValues[\.releasedFrame]
                    } then: { _ in
                        done.signal()
                    }
                    RelayGate.awaitArrival(of: "during the write")
                    ReleaseGate.proceed()
                }.start()
                // The write drops the scope's service, whose release waits at the gate between the write's two steps.
                InjectedValues[\.tierUser] = "basic-written"
                RelayGate.release("during the write")
                RelayGate.wait(done)
                let service = InjectedValues[\.releasedService]
                precondition(service.label == "basic-written", "read \(service.label)")
                precondition(InjectedValues[\.releasedFrame].service === service, "the frame holds another service")
            }
        }
    }

    @Test("a scope's own reads get one frame whose flagged service the store first built, then set aside")
    func ownReadsGetOneFrameAfterTheStoresServiceIsSetAside() async {
        await #expect(processExitsWith: .success) {
            withTestInjectedValues(strict: true, reportingTo: { _ in }) { _ in
            } operation: {
                _ = InjectedValues[\.flaggedFrame]
                withInjectedValues {
                    $0.frameFlag = true
                    $0.tierUser = "scoped"
                } operation: {
                    let first = InjectedValues[\.flaggedFrame]
                    precondition(InjectedValues[\.flaggedFrame] === first, "the scope's own reads got two frames")
                    precondition(first.service === InjectedValues[\.tierService], "the frame holds another service")
                }
            }
        }
    }

    @Test("the instances a scope pins where its levels have ended are released with the scope")
    func pinnedInstancesAreReleasedWithTheScope() {
        let captured = withInjectedValues {
            $0.badgeDirectory = "/pinned-capture"
        } operation: {
            InjectedValues.capture()
        }
        for index in 0..<100 {
            captured.run {
                withInjectedValues {
                    $0.badgeTag = "pin-\(index)"
                } operation: {
                    _ = InjectedValues[\.badge]
                }
            }
        }
        #expect(BadgeLedger.alive(endingWith: "anon@/pinned-capture") <= 1)
    }
}

/// Which level a derived default is built for, and from what.
///
/// What a fifth fresh-context review found, present before the fourth's fixes too: a read that walks levels which ended
/// one after another, and a default whose inputs differ from build to build. And what a ninth review found in a build
/// that showed fewer scopes than its read walks, which did not land: a default whose inputs differ between scopes is
/// built once for each, from every scope its read sees.
@Suite("A derived default's level is the one its read's snapshot shows")
struct DerivedDefaultLevelTests {
    @Test("an object whose scope and the scope around it have both ended reads a derived default and returns")
    func objectOfTwoEndedScopesReturns() async {
        await #expect(processExitsWith: .success) {
            let finished = DispatchSemaphore(value: 0)
            Thread {
                if finished.wait(timeout: .now() + 10) == .timedOut {
                    FileHandle.standardError.write(Data("the read never returned\n".utf8))
                    exit(3)
                }
            }.start()
            _ = InjectedValues[\.badge]
            let (outer, inner) = withInjectedValues {
                $0.badgeDirectory = "/outer-ended"
            } operation: {
                (
                    BadgeModel(),
                    withInjectedValues {
                        $0.badgeTag = "inner"
                    } operation: {
                        BadgeModel()
                    }
                )
            }
            precondition(outer.badge.label == "anon@/outer-ended")
            let label = inner.badge.label
            precondition(label == "anon@/outer-ended", "read \(label)")
            finished.signal()
        }
    }

    @Test("a derived default of a derived default, read in a scope nested in a fresh one, is built from that scope")
    func derivedOfDerivedInAFreshScopesNestedScope() async {
        await #expect(processExitsWith: .success) {
            InjectedValues.Store.tests.withLock { $0.process = nil }  // An app's process, as in a preview.
            withInjectedValues(fresh: true) {
                $0.badgeDirectory = "/fresh-outer"
            } operation: {
                withInjectedValues {
                    $0.badgeUser = "nested"
                } operation: {
                    let badge = InjectedValues[\.badge]
                    let frame = InjectedValues[\.badgeFrame]
                    precondition(frame.badge.label == "nested@/fresh-outer", "the frame holds \(frame.badge.label)")
                    precondition(frame.badge === badge, "the frame holds another instance")
                }
            }
        }
    }

    @Test("a default that reads a key only behind a flag is built for the nested scope that overrides that key")
    func flaggedInputOverriddenInAFreshScopesNestedScope() async {
        await #expect(processExitsWith: .success) {
            _ = InjectedValues[\.dynamicBadge]
            withInjectedValues(fresh: true) {
                $0.badgeTag = "x"
            } operation: {
                withInjectedValues {
                    $0.badgeUser = "flagged"
                } operation: {
                    let label = InjectedValues[\.dynamicBadge].label
                    precondition(label == "dyn:x-flagged", "read \(label)")
                }
            }
        }
    }

    @Test("a scope that overrides none of what a default read this time gets the store's one instance on every read")
    func scopeGetsTheStoresInstanceWhenItOverridesNothingRead() async {
        await #expect(processExitsWith: .success) {
            let first = withInjectedValues {
                $0.badgeUser = "b"
            } operation: {
                withInjectedValues {
                    $0.badgeTag = "x"
                } operation: {
                    _ = InjectedValues[\.dynamicBadge]
                }
                let first = InjectedValues[\.dynamicBadge]
                let second = InjectedValues[\.dynamicBadge]
                precondition(first === second, "two instances: \(first.label), \(second.label)")
                return first
            }
            precondition(first.label == "dyn:none")
            precondition(InjectedValues[\.dynamicBadge] === first, "the store has another instance")
        }
    }

    @Test("a build for an outer scope reads a nested scope's override of a key its earlier builds never read")
    func buildReadsTheNestedOverrideOfANewInput() async {
        await #expect(processExitsWith: .success) {
            let reports = StringLog()
            let labels = withTestInjectedValues(strict: true, reportingTo: reports.append) { _ in
            } operation: {
                ["basic", "premium"].map { tier in
                    withInjectedValues {
                        $0.tierUser = tier
                    } operation: {
                        withInjectedValues {
                            $0.tierTag = "request"
                        } operation: {
                            InjectedValues[\.tierService].label
                        }
                    }
                }
            }
            precondition(labels == ["basic", "premium#request"], "read \(labels)")
            precondition(!reports.entries.contains { $0.contains("TierTagKey") }, "reported \(reports.entries)")
            precondition(TierLedger.liveTags == 0, "the live tag was evaluated \(TierLedger.liveTags) times")
        }
    }

    @Test("requests alternating between services that read the tag and services that do not build one each")
    func alternatingInputsBuildOncePerRequest() async {
        await #expect(processExitsWith: .success) {
            for tier in ["premium-warm", "basic-warm"] {
                withInjectedValues {
                    $0.tierUser = tier
                } operation: {
                    withInjectedValues {
                        $0.tierTag = "warm"
                    } operation: {
                        _ = InjectedValues[\.tierService]
                    }
                }
            }
            let before = TierLedger.builds
            for index in 0..<6 {
                let tier = index.isMultiple(of: 2) ? "premium-\(index)" : "basic-\(index)"
                withInjectedValues {
                    $0.tierUser = tier
                } operation: {
                    withInjectedValues {
                        $0.tierTag = "request-\(index)"
                    } operation: {
                        let label = InjectedValues[\.tierService].label
                        precondition(label == (index.isMultiple(of: 2) ? "\(tier)#request-\(index)" : tier))
                    }
                }
            }
            precondition(TierLedger.builds - before == 6, "\(TierLedger.builds - before) builds for 6 requests")
        }
    }

    @Test(
        "a default that reads the tag on every other build returns in a nested scope, built a bounded number of times"
    )
    func defaultWhoseInputsAlternateReturns() async {
        await #expect(processExitsWith: .success) {
            let finished = DispatchSemaphore(value: 0)
            Thread {
                if finished.wait(timeout: .now() + 10) == .timedOut {
                    FileHandle.standardError.write(Data("the read never returned\n".utf8))
                    exit(3)
                }
            }.start()
            withInjectedValues {
                $0.tierUser = "a"
            } operation: {
                _ = InjectedValues[\.alternating]
            }
            withInjectedValues {
                $0.tierUser = "b"
                $0.tierTag = "t"
            } operation: {
                _ = InjectedValues[\.alternating]
            }
            let before = TierLedger.builds
            let label = withInjectedValues {
                $0.tierUser = "outer"
            } operation: {
                withInjectedValues {
                    $0.tierTag = "nested"
                } operation: {
                    InjectedValues[\.alternating].label
                }
            }
            precondition(label.hasPrefix("outer"), "read \(label)")
            precondition(TierLedger.builds - before <= 3, "\(TierLedger.builds - before) builds for one read")
            finished.signal()
        }
    }
}

/// What a sixth review found in the fifth's fixes: a default whose flag changes between its builds.
@Suite("A derived default whose inputs change between builds")
struct DerivedDefaultChangingInputsTests {
    @Test("a scope's read does not get the store's value built from an input the scope overrides, when a flag changes")
    func flagSwitchedOffWhileTheStoreBuildsForAScope() async {
        await #expect(processExitsWith: .success) {
            _ = InjectedValues[\.feature]  // The flag is off: the store learns that the feature reads the flag.
            InjectedValues[\.featureFlag] = true
            let (building, written, steps) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), Steps())
            // The store's build for the scope's read pauses, and the flag is switched off meanwhile.
            FeatureGate.hook = { label in
                guard label == "user:anon", steps.advance(from: 0) else { return }
                building.signal()
                written.wait()
            }
            Thread {
                building.wait()
                InjectedValues[\.featureFlag] = false
                written.signal()
            }.start()
            withInjectedValues {
                $0.badgeUser = "scoped"
            } operation: {
                let label = InjectedValues[\.feature].label
                precondition(label == "user:scoped" || label == "off", "read \(label)")
            }
        }
    }

    @Test("threads that wait for a build that stopped reading the scope's override do not each build again")
    func waitersDoNotEachBuildAgain() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.featureFlag] = true
            _ = InjectedValues[\.feature]  // The store learns that the feature reads the flag and the user.
            InjectedValues[\.featureFlag] = false
            FeatureGate.hook = { _ in usleep(20_000) }
            let before = FeatureGate.builds
            let scope = withInjectedValues {
                $0.badgeUser = "scoped"
            } operation: {
                InjectedValues.capture()
            }
            precondition(runOnThreads(8) { _ in scope.run { _ = InjectedValues[\.feature] } })
            // The first build, made for the scope, read no input it overrides: it is not kept, and the store builds
            // its own once.
            let builds = FeatureGate.builds - before
            precondition(builds <= 2, "built \(builds) times")
            precondition(scope.run { InjectedValues[\.feature] } === InjectedValues[\.feature])
        }
    }

    @Test("threads that wait for a scope's build follow what it read, not what another scope's build read")
    func waitersFollowTheirOwnBuild() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.featureFlag] = true
            FeatureGate.hook = { label in if label == "user:scoped" { usleep(300) } }
            let finished = Steps()
            // Another scope's builds, with the flag off, teach the store that the feature reads the flag alone.
            Thread {
                while !finished.isAt(1) {
                    _ = withInjectedValues {
                        $0.featureFlag = false
                    } operation: {
                        InjectedValues[\.feature]
                    }
                }
            }.start()
            let wrong = Steps()
            for _ in 0..<200 {
                let scope = withInjectedValues {
                    $0.badgeUser = "scoped"
                } operation: {
                    InjectedValues.capture()
                }
                precondition(
                    runOnThreads(2) { _ in
                        if scope.run({ InjectedValues[\.feature].label }) != "user:scoped" { wrong.count() }
                    }
                )
            }
            _ = finished.advance(from: 0)
            precondition(wrong.isAt(0), "\(wrong.value) reads of 400 got another scope's or the store's instance")
        }
    }

    @Test("threads reading in one scope while its flag flips never get the store's value built from the store's user")
    func threadsSharingAScopeWhileItsFlagFlips() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.featureFlag] = true
            FeatureGate.hook = { _ in usleep(UInt32.random(in: 0..<200)) }
            let scope = withInjectedValues {
                $0.badgeUser = "scoped"
            } operation: {
                InjectedValues.capture()
            }
            let (done, wrong) = (Steps(), StringLog())
            Thread {
                while !done.isAt(1) {
                    InjectedValues[\.featureFlag] = !InjectedValues[\.featureFlag]
                    usleep(UInt32.random(in: 0..<400))
                }
            }.start()
            let deadline = Date().addingTimeInterval(2)
            let finished = runOnThreads(4) { _ in
                while Date() < deadline {
                    let label = scope.run { InjectedValues[\.feature].label }
                    if label != "user:scoped", label != "off" { wrong.append(label) }
                }
            }
            _ = done.advance(from: 0)
            precondition(finished, "the readers hung")
            precondition(wrong.entries.isEmpty, "\(wrong.entries.count) reads got \(Set(wrong.entries))")
        }
    }

    @Test("a scope's read whose builds see its flag flipped back and forth twice gets its own value, not the store's")
    func flagFlippedBackAndForthTwice() async {
        await #expect(processExitsWith: .success) {
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) { fatalError("the read did not return") }
            InjectedValues[\.featureFlag] = true
            let (storeBuilds, scopeBuilds) = (Steps(), Steps())
            // The store's first two builds switch the flag off; the scope's first two switch it back on, from threads
            // outside every scope, as another part of the app would.
            FeatureGate.hook = { label in
                if label == "user:anon", storeBuilds.advance(from: 0) || storeBuilds.advance(from: 1) {
                    _ = runOnThreads(1) { _ in InjectedValues[\.featureFlag] = false }
                } else if label == "off", scopeBuilds.advance(from: 0) || scopeBuilds.advance(from: 1) {
                    _ = runOnThreads(1) { _ in InjectedValues[\.featureFlag] = true }
                }
            }
            withInjectedValues {
                $0.badgeUser = "scoped"
            } operation: {
                let label = InjectedValues[\.feature].label
                precondition(label == "user:scoped" || label == "off", "read \(label)")
            }
        }
    }

    @Test("a scope's read does not get the store's value built from an input it overrides, when a flag flips twice")
    func flagFlippedTwiceWhileAScopeBuilds() async {
        await #expect(processExitsWith: .success) {
            InjectedValues[\.featureFlag] = true
            let gates = (0..<4).map { _ in DispatchSemaphore(value: 0) }
            let steps = Steps()
            // The store's build pauses while the flag is switched off; the scope's build, while it is switched on.
            FeatureGate.hook = { label in
                if label == "user:anon", steps.advance(from: 0) {
                    gates[0].signal()
                    gates[1].wait()
                } else if label == "off", steps.advance(from: 1) {
                    gates[2].signal()
                    gates[3].wait()
                }
            }
            Thread {
                gates[0].wait()
                InjectedValues[\.featureFlag] = false
                gates[1].signal()
                gates[2].wait()
                InjectedValues[\.featureFlag] = true
                gates[3].signal()
            }.start()
            withInjectedValues {
                $0.badgeUser = "scoped"
            } operation: {
                let label = InjectedValues[\.feature].label
                precondition(label == "user:scoped" || label == "off", "read \(label)")
            }
        }
    }
}

/// Nine models, each made in a scope of its own that sets `keyPath` to `prefix` and its index.
private func nineModels(
    overriding keyPath: WritableKeyPath<InjectedValues, String>,
    _ prefix: String
) -> [BadgeModel] {
    (0..<9).map { index in
        withInjectedValues {
            $0[keyPath: keyPath] = "\(prefix)-\(index)"
        } operation: {
            BadgeModel()
        }
    }
}

/// A `.cached` default derived from another derived default, as a view model's service built on a store is.
final class BadgeFrame: Sendable {
    let badge: Badge

    init(badge: Badge) { self.badge = badge }
}

private enum BadgeFrameKey: ReadOnlyInjectionKey {
    static var currentValue: BadgeFrame { BadgeFrame(badge: InjectedValues[\.badge]) }
}

extension InjectedValues {
    fileprivate var badgeFrame: BadgeFrame { Self[BadgeFrameKey.self] }
}

/// Counts builds of `TierServiceKey` and `AlternatingKey`, and evaluations of `TierTagKey`'s live default.
enum TierLedger {
    private static let lock = NSLock()
    // `nonisolated(unsafe)`: read and written only holding `lock`.
    nonisolated(unsafe) private static var counts = (builds: 0, liveTags: 0)

    static var builds: Int { lock.withLock { counts.builds } }
    static var liveTags: Int { lock.withLock { counts.liveTags } }

    static func built() { lock.withLock { counts.builds += 1 } }
    static func evaluatedTag() { lock.withLock { counts.liveTags += 1 } }
}

/// A service that reads the request's tag only for premium users, as a server's might.
final class TierService: Sendable {
    let label: String

    init() {
        TierLedger.built()
        let user = InjectedValues[\.tierUser]
        label = user.hasPrefix("premium") ? user + "#" + InjectedValues[\.tierTag] : user
    }
}

/// Pauses the first build of `GatedTierService` for a basic user until a nested scope's read has kept its own.
enum TierGate {
    static let ownBuildStarted = DispatchSemaphore(value: 0)
    static let nestedReadDone = DispatchSemaphore(value: 0)
    private static let lock = NSLock()
    // `nonisolated(unsafe)`: read and written only holding `lock`.
    nonisolated(unsafe) private static var basicBuilds = 0

    static func building(_ user: String) {
        guard user == "basic",
            lock.withLock({ () -> Int in
                basicBuilds += 1
                return basicBuilds
            }) == 1
        else { return }
        ownBuildStarted.signal()
        if nestedReadDone.wait(timeout: .now() + 10) == .timedOut {
            FileHandle.standardError.write(Data("the nested scope's read waited for this build\n".utf8))
            exit(3)
        }
    }
}

/// `TierService`, whose first build for a basic user waits at `TierGate`.
final class GatedTierService: Sendable {
    let label: String

    init() {
        let user = InjectedValues[\.tierUser]
        label = user.hasPrefix("premium") ? user + "#" + InjectedValues[\.tierTag] : user
        TierGate.building(user)
    }
}

private enum GatedTierServiceKey: ReadOnlyInjectionKey {
    static var currentValue: GatedTierService { GatedTierService() }
}

extension InjectedValues {
    fileprivate var gatedTierService: GatedTierService { Self[GatedTierServiceKey.self] }
}

/// Reads a default in a scope with a premium user and a tag, so that the store learns the default reads the tag.
private func readAsPremium<T>(_ read: () -> T) {
    withInjectedValues {
        $0.tierUser = "premium"
        $0.tierTag = "warm"
    } operation: {
        _ = read()
    }
}

/// Starts a thread that runs `read` in `fresh`, in a scope nested in it that sets the tag, with its builds held at
/// `RelayGate` under `relay`, and hands `then` what it read; returns what the thread signals once done.
private func readNested<T: Sendable>(
    in fresh: InjectedValues.CapturedScope,
    tag: String,
    relay: String,
    _ read: @escaping @Sendable () -> T,
    then: @escaping @Sendable (T) -> Void = { _ in }
) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread {
        Thread.current.threadDictionary["relay"] = relay
        then(
            fresh.run {
                withInjectedValues {
                    $0.tierTag = tag
                } operation: {
                    read()
                }
            }
        )
        done.signal()
    }.start()
    return done
}

/// Holds each build of `RelayTierService` made on a thread named in its `relay` entry until the test releases it.
enum RelayGate {
    private static let lock = NSLock()
    // `nonisolated(unsafe)`: read and written only holding `lock`; each semaphore is made once, under it.
    nonisolated(unsafe) private static var semaphores: [String: DispatchSemaphore] = [:]

    private static func semaphore(_ name: String) -> DispatchSemaphore {
        lock.withLock {
            if let made = semaphores[name] { return made }
            let made = DispatchSemaphore(value: 0)
            semaphores[name] = made
            return made
        }
    }

    /// Called by a build: says it arrived, and waits to be released.
    static func arrive() {
        guard let name = Thread.current.threadDictionary["relay"] as? String else { return }
        semaphore("\(name) arrived").signal()
        wait(semaphore("\(name) released"))
    }

    static func awaitArrival(of name: String) { wait(semaphore("\(name) arrived")) }
    static func release(_ name: String) { semaphore("\(name) released").signal() }

    /// Waits, or ends the process with a message after 10 seconds: a deadlock fails the exit test.
    static func wait(_ semaphore: DispatchSemaphore) {
        guard semaphore.wait(timeout: .now() + 10) == .timedOut else { return }
        FileHandle.standardError.write(Data("a build never arrived or was never released\n".utf8))
        exit(3)
    }
}

/// Where a thread leaves the service it read, for the test to compare after the thread has signalled.
final class ServiceSlot: @unchecked Sendable {
    // `@unchecked Sendable`: written by one thread before it signals a semaphore, read after the wait for it.
    var service: RelayTierService?
}

/// `TierService`, whose builds wait at `RelayGate`.
final class RelayTierService: Sendable {
    let label: String

    init() {
        let user = InjectedValues[\.tierUser]
        label = user.hasPrefix("premium") ? user + "#" + InjectedValues[\.tierTag] : user
        RelayGate.arrive()
    }
}

private enum RelayTierServiceKey: ReadOnlyInjectionKey {
    static var currentValue: RelayTierService { RelayTierService() }
}

private enum TierNoteKey: ReadOnlyInjectionKey {
    static var currentValue: String { "" }
}

extension InjectedValues {
    fileprivate var relayTierService: RelayTierService { Self[RelayTierServiceKey.self] }

    fileprivate var tierNote: String {
        get { Self[TierNoteKey.self] }
        set { Self[TierNoteKey.self] = newValue }
    }
}

/// A frame on `TierService`, whose builds wait at `RelayGate` once they hold their service.
final class RelayFrame: Sendable {
    let service = InjectedValues[\.tierService]

    init() { RelayGate.arrive() }
}

/// Holds the release of one `ReleasedService`, once armed, until the test lets it proceed.
enum ReleaseGate {
    private static let lock = NSLock()
    // `nonisolated(unsafe)`: read and written only holding `lock`.
    nonisolated(unsafe) private static var armed = false
    private static let released = DispatchSemaphore(value: 0)
    private static let proceeding = DispatchSemaphore(value: 0)

    static func arm() { lock.withLock { armed = true } }

    static func releasing() {
        guard
            lock.withLock({ () -> Bool in
                defer { armed = false }
                return armed
            })
        else { return }
        released.signal()
        RelayGate.wait(proceeding)
    }

    static func awaitRelease() { RelayGate.wait(released) }
    static func proceed() { proceeding.signal() }
}

/// `TierService`, whose builds wait at `RelayGate` and whose release waits at `ReleaseGate`.
final class ReleasedService: Sendable {
    let label: String

    init() {
        let user = InjectedValues[\.tierUser]
        label = user.hasPrefix("premium") ? user + "#" + InjectedValues[\.tierTag] : user
        RelayGate.arrive()
    }

    deinit { ReleaseGate.releasing() }
}

/// A frame on `ReleasedService`.
final class ReleasedFrame: Sendable {
    let service = InjectedValues[\.releasedService]
}

private enum RelayFrameKey: ReadOnlyInjectionKey {
    static var currentValue: RelayFrame { RelayFrame() }
}

private enum ReleasedServiceKey: ReadOnlyInjectionKey {
    static var currentValue: ReleasedService { ReleasedService() }
}

private enum ReleasedFrameKey: ReadOnlyInjectionKey {
    static var currentValue: ReleasedFrame { ReleasedFrame() }
}

extension InjectedValues {
    fileprivate var relayFrame: RelayFrame { Self[RelayFrameKey.self] }
    fileprivate var releasedService: ReleasedService { Self[ReleasedServiceKey.self] }
    fileprivate var releasedFrame: ReleasedFrame { Self[ReleasedFrameKey.self] }
}

/// A frame that reads `TierService` only behind a flag, so that the store first learns it reads the flag alone.
final class FlaggedFrame: Sendable {
    let service = InjectedValues[\.frameFlag] ? InjectedValues[\.tierService] : nil
}

private enum FrameFlagKey: ReadOnlyInjectionKey {
    static var currentValue: Bool { false }
}

private enum FlaggedFrameKey: ReadOnlyInjectionKey {
    static var currentValue: FlaggedFrame { FlaggedFrame() }
}

extension InjectedValues {
    fileprivate var frameFlag: Bool {
        get { Self[FrameFlagKey.self] }
        set { Self[FrameFlagKey.self] = newValue }
    }

    fileprivate var flaggedFrame: FlaggedFrame { Self[FlaggedFrameKey.self] }
}

/// A service that reads the tag on every other build, as one behind a flag that keeps changing does.
final class AlternatingService: Sendable {
    let label: String

    init() {
        TierLedger.built()
        let user = InjectedValues[\.tierUser]
        label = TierLedger.builds.isMultiple(of: 2) ? user + "#" + InjectedValues[\.tierTag] : user
    }
}

private enum TierUserKey: ReadOnlyInjectionKey {
    static var currentValue: String { "anon" }
}

private enum TierTagKey: ReadOnlyInjectionKey {
    static var currentValue: String {
        TierLedger.evaluatedTag()
        return "none"
    }
}

private enum TierServiceKey: ReadOnlyInjectionKey {
    static var currentValue: TierService { TierService() }
}

private enum AlternatingKey: ReadOnlyInjectionKey {
    static var currentValue: AlternatingService { AlternatingService() }
}

extension InjectedValues {
    fileprivate var tierUser: String {
        get { Self[TierUserKey.self] }
        set { Self[TierUserKey.self] = newValue }
    }

    fileprivate var tierTag: String {
        get { Self[TierTagKey.self] }
        set { Self[TierTagKey.self] = newValue }
    }

    fileprivate var tierService: TierService { Self[TierServiceKey.self] }
    fileprivate var alternating: AlternatingService { Self[AlternatingKey.self] }
}

/// Counts `FeatureKey`'s builds, and runs an exit test's hook in each, where it pauses or slows them down.
enum FeatureGate {
    // `nonisolated(unsafe)`: `hook` is set by an exit test before the threads that build the feature start; `made`
    // is read and written holding `lock`.
    nonisolated(unsafe) static var hook: (@Sendable (String) -> Void)?
    private static let lock = NSLock()
    nonisolated(unsafe) private static var made = 0

    static var builds: Int { lock.withLock { made } }

    static func built(_ label: String) {
        lock.withLock { made += 1 }
        hook?(label)
    }
}

/// A counter that threads step, under a lock.
final class Steps: @unchecked Sendable {
    // `@unchecked Sendable`: `step` is read and written only holding `lock`.
    private let lock = NSLock()
    private var step = 0

    var value: Int { lock.withLock { step } }

    /// Moves to the next step if this is `from`, and says whether it did.
    func advance(from: Int) -> Bool {
        lock.withLock {
            guard step == from else { return false }
            step += 1
            return true
        }
    }

    func count() { lock.withLock { step += 1 } }

    func isAt(_ value: Int) -> Bool { lock.withLock { step == value } }
}

/// A `.cached` default that reads the user only behind a feature flag.
final class Feature: Sendable {
    let label: String

    init(label: String) {
        self.label = label
        FeatureGate.built(label)
    }
}

private enum FeatureFlagKey: ReadOnlyInjectionKey {
    static var currentValue: Bool { false }
}

private enum FeatureKey: ReadOnlyInjectionKey {
    static var currentValue: Feature {
        Feature(label: InjectedValues[\.featureFlag] ? "user:" + InjectedValues[\.badgeUser] : "off")
    }
}

extension InjectedValues {
    fileprivate var featureFlag: Bool {
        get { Self[FeatureFlagKey.self] }
        set { Self[FeatureFlagKey.self] = newValue }
    }

    fileprivate var feature: Feature { Self[FeatureKey.self] }
}
