import Foundation
import Injected
import Testing

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
