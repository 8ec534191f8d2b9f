import Foundation
import Injected
import Testing

/// A `.cached` default derived from another dependency follows that input: a scope that overrides the input gets a
/// value built from it, which ends with the scope, and a write to the input drops what was built from it (issue 37).
@Suite("A derived default follows its inputs")
struct DerivedDefaultTests {
    @Test("a scope that overrides a derived default's input, as a preview does, gets a value built from its input")
    func scopeOverridingTheInputGetsItsOwnValue() {
        inFreshScope {
            #expect(InjectedValues[\.folderStore].directory == "/real/store")
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.folderStore].directory
            }
            #expect(inPreview == "/sandbox/store")
            #expect(InjectedValues[\.folderStore].directory == "/real/store")
        }
    }

    @Test("the first read of a derived default, made in a scope that overrides its input, gets the scope's value")
    func firstReadInTheScopeGetsTheScopesValue() {
        inFreshScope {
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.folderStore].directory
            }
            #expect(inPreview == "/sandbox/store")
            #expect(InjectedValues[\.folderStore].directory == "/real/store")
        }
    }

    @Test("a scope nested in a test that overrides the input gets its own value, and the test keeps the test's")
    func nestedScopeInATest() {
        withTestInjectedValues(strict: nil) {
            $0.folder = "/test"
        } operation: {
            #expect(InjectedValues[\.folderStore].directory == "/test/store")
            withInjectedValues {
                $0.folder = "/nested"
            } operation: {
                #expect(InjectedValues[\.folderStore].directory == "/nested/store")
            }
            #expect(InjectedValues[\.folderStore].directory == "/test/store")
        }
    }

    @Test(
        "the value built for a scope is one instance for the scope's reads, its objects' and its tasks', and ends with it"
    )
    func scopeValueIsSharedAndEndsWithTheScope() async {
        weak var built: FolderStore?
        await inFreshScope {
            await withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                let first = InjectedValues[\.folderStore]
                let model = FolderModel()
                let fromTask = await Task { InjectedValues[\.folderStore] }.value
                #expect(first === InjectedValues[\.folderStore])
                #expect(first === model.store)
                #expect(first === fromTask)
                built = first
            }
        }
        #expect(built == nil)
    }

    @Test("a write to the input inside the scope drops the value built from it")
    func writeInTheScopeDropsTheDerivedValue() {
        inFreshScope {
            withInjectedValues {
                $0.folder = "/a"
            } operation: {
                #expect(InjectedValues[\.folderStore].directory == "/a/store")
                InjectedValues[\.folder] = "/b"
                #expect(InjectedValues[\.folderStore].directory == "/b/store")
            }
        }
    }

    @Test("a write to the input in the test's own scope drops the test's derived value")
    func writeInTheTestDropsTheDerivedValue() {
        withTestInjectedValues(strict: nil) {
            $0.folder = "/test"
        } operation: {
            #expect(InjectedValues[\.folderStore].directory == "/test/store")
            InjectedValues[\.folder] = "/moved"
            #expect(InjectedValues[\.folderStore].directory == "/moved/store")
        }
    }

    @Test("a default derived from a derived default follows the first one's input")
    func derivedOfDerivedFollowsTheInput() {
        inFreshScope {
            #expect(InjectedValues[\.folderIndex].path == "/real/store/index")
            withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                #expect(InjectedValues[\.folderIndex].path == "/sandbox/store/index")
            }
        }
    }

    @Test("an object made in the scope reads the scope's derived value through its property")
    func objectMadeInTheScopeReadsTheScopesValue() {
        inFreshScope {
            let model = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                FolderModel()
            }
            #expect(model.store.directory == "/sandbox/store")
        }
    }

    @Test("launch code that writes the input globally after a read drops the global store's derived value")
    func globalWriteDropsTheDerivedValue() async {
        await #expect(processExitsWith: .success) {
            let before = InjectedValues[\.folderStore].directory
            InjectedValues[\.folder] = "/launch"
            let after = InjectedValues[\.folderStore].directory
            guard before == "/real/store", after == "/launch/store" else { fatalError("read \(before), then \(after)") }
        }
    }

    @Test("a global override of a derived key wins in a scope that overrides its input, though its default was built")
    func globalOverrideOfTheDerivedKeyWins() async {
        await #expect(processExitsWith: .success) {
            _ = InjectedValues[\.folderStore]
            InjectedValues[\.folderStore] = FolderStore(directory: "/launch")
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.folderStore].directory
            }
            guard inPreview == "/launch" else { fatalError("the scope read \(inPreview)") }
        }
    }

    @Test("a default that reads its input only behind a flag gives an object of a scope one value on every thread")
    func flaggedDefaultAgreesAcrossThreads() async {
        await #expect(processExitsWith: .success) {
            // Built with the flag off, from no input: this thread's view of the global store holds it from its second
            // read.
            _ = (InjectedValues[\.flaggedFolderStore], InjectedValues[\.flaggedFolderStore])
            FlaggedFolderStoreKey.flag.turnOn()
            // A build with the flag on reads the folder.
            _ = withInjectedValues(fresh: true) {
                $0.folder = "/fresh"
            } operation: {
                InjectedValues[\.flaggedFolderStore]
            }
            let holder = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                FlaggedFolderHolder()
            }
            let elsewhere = StringLog()
            guard runOnThreads(1, { _ in elsewhere.append(holder.store.directory) }) else { fatalError("hung") }
            let here = holder.store.directory
            guard [here] == elsewhere.entries else {
                fatalError("this thread read \(here), another \(elsewhere.entries)")
            }
        }
    }

    @Test(
        "a default built on a derived key the global store overrides reads the override in a scope overriding an input"
    )
    func defaultOnAnOverriddenDerivedKeyReadsTheOverride() async {
        await #expect(processExitsWith: .success) {
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) { fatalError("the read did not return") }
            _ = InjectedValues[\.folderStore]
            InjectedValues[\.folderStore] = FolderStore(directory: "/launch")
            _ = InjectedValues[\.folderLabel]
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.folderLabel]
            }
            guard inPreview == "label:/launch" else { fatalError("the scope read \(inPreview)") }
        }
    }

    @Test("a scope's read of a default whose flag turned off since its build reads none of its inputs returns")
    func defaultThatStoppedReadingItsInputReturns() async {
        await #expect(processExitsWith: .success) {
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) { fatalError("the read did not return") }
            FlaggedFolderStoreKey.flag.turnOn()
            _ = InjectedValues[\.flaggedFolderStore]
            FlaggedFolderStoreKey.flag.turnOff()
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.flaggedFolderStore].directory
            }
            // The build for the scope read no input, so the read gets the store's instance.
            guard inPreview == "/real/flagged" else { fatalError("the scope read \(inPreview)") }
        }
    }

    @Test("a scope's read of a default that stopped reading its input returns though each build writes another key")
    func defaultThatStoppedReadingItsInputReturnsThoughItWrites() async {
        await #expect(processExitsWith: .success) {
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) { fatalError("the read did not return") }
            ReportingFolderStoreKey.flag.turnOn()
            _ = InjectedValues[\.reportingFolderStore]
            ReportingFolderStoreKey.flag.turnOff()
            let inPreview = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.reportingFolderStore].directory
            }
            let builds = ReportingFolderStoreKey.builds.value
            guard inPreview == "/real/flagged", builds <= 3 else {
                fatalError("read \(inPreview) after \(builds) builds")
            }
        }
    }

    @Test(
        "a scope's read returns though the store's every build of the default writes its input and the scope's reads none"
    )
    func restlessDefaultReturns() async {
        await #expect(processExitsWith: .success) {
            DispatchQueue.global().asyncAfter(deadline: .now() + 20) { fatalError("the read did not return") }
            let inPreview = withInjectedValues {
                $0.restlessFolder = "/sandbox"
            } operation: {
                InjectedValues[\.restlessFolderStore].directory
            }
            let builds = RestlessFolderStoreKey.builds.value
            // The scope's second build read no input, so it is the read's, and kept nowhere.
            guard inPreview == "/plain", builds <= 4 else { fatalError("read \(inPreview) after \(builds) builds") }
        }
    }
}

/// What a fresh-context review of the derived defaults found, each a test that failed before its fix.
@Suite("A derived default follows its inputs: review")
struct DerivedDefaultReviewTests {
    @Test("a child scope made from an ended preview scope's model reads one instance, however often it reads")
    func childOfAnEndedScopeReadsOneInstance() {
        inFreshScope {
            let parent = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                FolderParent()
            }
            let (first, second) = parent.inChild { (InjectedValues[\.folderStore], InjectedValues[\.folderStore]) }
            #expect(first === second)
            #expect(first.directory == "/sandbox/store")
            let detail = parent.openDetail()
            #expect(detail.store === detail.store)
        }
    }

    @Test("a write to an unrelated key while a scope builds a derived value leaves one instance for the scope")
    func unrelatedWriteDuringABuildKeepsOneInstance() {
        inFreshScope {
            let built = Counter()
            InjectedValues[\.slowFolderBuilds] = built
            // The root's instance exists, as an app's does, before the request's scope reads its own.
            _ = InjectedValues[\.slowFolderStore]
            let stores = withInjectedValues {
                $0.folder = "/request"
            } operation: { () -> [ObjectIdentifier] in
                let scope = InjectedValues.capture()
                let reads = StoreLog()
                let group = DispatchGroup()
                for _ in 0..<4 {
                    group.enter()
                    Thread {
                        reads.add(scope.run { InjectedValues[\.slowFolderStore] })
                        group.leave()
                    }
                    .start()
                }
                // While the build (200 ms) runs.
                usleep(50_000)
                InjectedValues[\.folderNote] = "written while the build ran"
                #expect(group.wait(timeout: .now() + 10) == .success)
                reads.add(InjectedValues[\.slowFolderStore])
                return reads.identities
            }
            #expect(Set(stores).count == 1)
            #expect(built.value == 2)
        }
    }

    @Test("two models made in a scope at different times each keep one instance after the scope ends")
    func outlivingModelsDoNotEvictEachOther() {
        inFreshScope {
            let (first, second) = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: { () -> (FolderModel, FolderModel) in
                let first = FolderModel()
                InjectedValues[\.folderNote] = "written between the two models"
                return (first, FolderModel())
            }
            let reads = (0..<3).flatMap { _ in [first.store, second.store] }
            #expect(Set(reads.map(ObjectIdentifier.init)).count <= 2)
            #expect(first.store === first.store)
        }
    }

    @Test("a strict test whose nested scope overrides a derived default's input reports nothing for that input")
    func overriddenInputIsNotReportedByTheRootsBuild() {
        let reports = StringLog()
        let directory = withTestInjectedValues(strict: true, reportingTo: reports.append) { _ in
        } operation: {
            withInjectedValues {
                $0.strictFolder = "/nested"
            } operation: {
                InjectedValues[\.strictFolderStore].directory
            }
        }
        #expect(directory == "/nested/store")
        // Only this test's keys: the race suites' threads read keys without test values in the global store, which
        // the process reports to whichever strict test runs.
        #expect(!reports.entries.contains { $0.contains("StrictFolder") }, "\(reports.entries)")
    }

    @Test("a write to an input in the root drops the value a scope keeps for another of its inputs")
    func rootWriteDropsAScopesDerivedValue() {
        inFreshScope {
            let tagger = FolderTagger()
            withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                #expect(InjectedValues[\.taggedFolderStore].label == "v1 /sandbox")
                // Outside every scope, through an object made in the fresh scope: a write to its root's world.
                #expect(runOnThreads(1) { _ in tagger.tag = "v2" })
                #expect(InjectedValues[\.folderTag] == "v2")
                #expect(InjectedValues[\.taggedFolderStore].label == "v2 /sandbox")
            }
        }
    }

    @Test("once a derived default's inputs are known, a scope that overrides one builds no root instance")
    func knownInputsSkipTheRootsBuild() {
        let built = Counter()
        inFreshScope {
            InjectedValues[\.countedFolderBuilds] = built
            _ = InjectedValues[\.countedFolderStore]
        }
        inFreshScope {
            InjectedValues[\.countedFolderBuilds] = built
            let directory = withInjectedValues {
                $0.folder = "/sandbox"
            } operation: {
                InjectedValues[\.countedFolderStore].directory
            }
            #expect(directory == "/sandbox/store")
        }
        #expect(built.value == 2)
    }
}

/// What a second fresh-context review found after the first round's fixes, each a test that failed before its fix.
@Suite("A derived default follows its inputs: second review")
struct DerivedDefaultSecondReviewTests {
    @Test("a strict test reports a live input its own level reads after a nested scope overrode it, run first or not")
    func liveInputReadAtTheTestsLevelIsReported() {
        let reports = StringLog()
        withTestInjectedValues(strict: true, reportingTo: reports.append) { _ in
        } operation: {
            _ = withInjectedValues {
                $0.reportedFolder = "/nested"
            } operation: {
                InjectedValues[\.reportedFolderStore].directory
            }
            #expect(InjectedValues[\.reportedFolderStore].directory == "/live/store")
        }
        #expect(reports.entries.contains { $0.contains("ReportedFolderKey") }, "\(reports.entries)")
    }

    @Test("threads waiting for a scope's build take its value though an unrelated key was written meanwhile")
    func waitersKeepTheScopesValueAfterAnUnrelatedWrite() {
        inFreshScope {
            let built = Counter()
            InjectedValues[\.slowFolderBuilds] = built
            _ = InjectedValues[\.slowFolderStore]
            let tagger = FolderTagger()
            let stores = withInjectedValues {
                $0.folder = "/scope"
            } operation: { () -> [ObjectIdentifier] in
                let scope = InjectedValues.capture()
                let reads = StoreLog()
                let group = DispatchGroup()
                for index in 0..<8 {
                    group.enter()
                    Thread {
                        if index >= 4 { usleep(50_000) }
                        reads.add(scope.run { InjectedValues[\.slowFolderStore] })
                        group.leave()
                    }
                    .start()
                }
                // An unrelated write to the root's world while the build (200 ms) runs.
                usleep(20_000)
                #expect(runOnThreads(1) { _ in tagger.tag = "unrelated" })
                #expect(group.wait(timeout: .now() + 10) == .success)
                return reads.identities
            }
            #expect(Set(stores).count == 1)
            #expect(built.value == 2)
        }
    }

    @Test("a write to an input in an outer scope drops the value an inner scope keeps for another of its inputs")
    func outerScopeWriteDropsAnInnerScopesValue() {
        inFreshScope {
            _ = InjectedValues[\.taggedFolderStore]
            withInjectedValues {
                $0.folderTag = "outer-1"
            } operation: {
                let tagger = FolderTagger()
                withInjectedValues {
                    $0.folder = "/inner"
                } operation: {
                    #expect(InjectedValues[\.taggedFolderStore].label == "outer-1 /inner")
                    // Outside every scope, through an object made in the outer scope: a write to the outer scope.
                    #expect(runOnThreads(1) { _ in tagger.tag = "outer-2" })
                    #expect(InjectedValues[\.folderTag] == "outer-2")
                    #expect(InjectedValues[\.taggedFolderStore].label == "outer-2 /inner")
                }
            }
        }
    }

    @Test("a write in the scope drops a derived value whose build took another's value through a wait")
    func transitiveInputsOfAValueTakenFromAnotherBuild() {
        inFreshScope {
            // The index's inputs are known from the root's build.
            _ = InjectedValues[\.slowFolderIndex]
            withInjectedValues {
                $0.folder = "/s1"
            } operation: {
                let scope = InjectedValues.capture()
                let group = DispatchGroup()
                group.enter()
                Thread {
                    _ = scope.run { InjectedValues[\.slowFolderStoreForIndex] }
                    group.leave()
                }
                .start()
                usleep(30_000)
                group.enter()
                Thread {
                    _ = scope.run { InjectedValues[\.slowFolderIndex] }
                    group.leave()
                }
                .start()
                #expect(group.wait(timeout: .now() + 10) == .success)
                InjectedValues[\.folder] = "/s2"
                #expect(InjectedValues[\.slowFolderIndex].path == "/s2/store/index")
            }
        }
    }
}

/// An object that writes the folder tag in the scope it was made in.
private final class FolderTagger: @unchecked Sendable {
    // `@unchecked Sendable`: the wrapper holds only a key path and a snapshot, which it never changes.
    @Injected(\.folderTag) var tag
}

/// Stores read on several threads.
private final class StoreLog: @unchecked Sendable {
    // `@unchecked Sendable`: `stores` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var stores: [FolderStore] = []

    func add(_ store: FolderStore) { lock.withLock { stores.append(store) } }

    var identities: [ObjectIdentifier] { lock.withLock { stores.map(ObjectIdentifier.init) } }
}

/// A parent model that opens child scopes from its own property, as a screen opens a detail screen.
private struct FolderParent {
    @Injected(\.folderStore) var store

    func inChild<R>(_ body: () -> R) -> R { withInjectedValues(from: $store, operation: body) }

    func openDetail() -> FolderModel { withInjectedValues(from: $store) { FolderModel() } }
}

/// A store that keeps its files in a directory, which its default derives from `folder`.
final class FolderStore: Sendable {
    let directory: String

    init(directory: String) {
        self.directory = directory
    }
}

/// An index kept in the folder store's directory: a default derived from a derived default.
final class FolderIndex: Sendable {
    let path: String

    init(path: String) {
        self.path = path
    }
}

/// A model that reads the folder store through its property.
struct FolderModel {
    @Injected(\.folderStore) var store
}

enum FolderKey: TestValueKey {
    static var currentValue: String { "/real" }
    static var testValue: String { "/real" }
}

enum FolderStoreKey: TestValueKey {
    static var currentValue: FolderStore { FolderStore(directory: InjectedValues[\.folder] + "/store") }
    static var testValue: FolderStore { currentValue }
}

/// A switch any thread may turn on, which no dependency holds.
final class FeatureFlag: @unchecked Sendable {
    // `@unchecked Sendable`: `on` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var on = false

    var isOn: Bool { lock.withLock { on } }

    func turnOn() { lock.withLock { on = true } }

    func turnOff() { lock.withLock { on = false } }
}

/// A store that reads the folder only while a flag, no dependency, is on.
enum FlaggedFolderStoreKey: TestValueKey {
    static let flag = FeatureFlag()
    static var currentValue: FolderStore {
        FolderStore(directory: flag.isOn ? InjectedValues[\.folder] + "/flagged" : "/plain")
    }
    static var testValue: FolderStore { currentValue }
}

/// A store gated like the flagged one, whose every build also records, from a thread of its own, how many builds there
/// were in the global store: a write to a key none of its builds reads.
enum ReportingFolderStoreKey: TestValueKey {
    static let (flag, builds) = (FeatureFlag(), Counter())
    static var currentValue: FolderStore {
        builds.increment()
        let count = builds.value
        _ = runOnThreads(1) { _ in InjectedValues[\.folderBuilds] = count }
        return FolderStore(directory: flag.isOn ? InjectedValues[\.folder] + "/flagged" : "/plain")
    }
    static var testValue: FolderStore { currentValue }
}

enum FolderBuildsKey: TestValueKey {
    static var currentValue: Int { 0 }
    static var testValue: Int { 0 }
}

enum RestlessFolderKey: TestValueKey {
    static var currentValue: String { "/real" }
    static var testValue: String { currentValue }
}

/// A store whose odd builds read the folder and write it back to the global store, from a thread of its own, so that
/// none of them is kept, and whose even builds read nothing.
enum RestlessFolderStoreKey: TestValueKey {
    static let builds = Counter()
    static var currentValue: FolderStore {
        builds.increment()
        guard builds.value % 2 == 1 else { return FolderStore(directory: "/plain") }
        let folder = InjectedValues[\.restlessFolder]
        _ = runOnThreads(1) { _ in InjectedValues[\.restlessFolder] = folder }
        return FolderStore(directory: folder)
    }
    static var testValue: FolderStore { currentValue }
}

/// A label built on the folder store.
enum FolderLabelKey: TestValueKey {
    static var currentValue: String { "label:" + InjectedValues[\.folderStore].directory }
    static var testValue: String { currentValue }
}

/// An object made in a scope that reads the flagged store through its property.
struct FlaggedFolderHolder: Sendable {
    @Injected(\.flaggedFolderStore) var store
}

enum FolderIndexKey: TestValueKey {
    static var currentValue: FolderIndex { FolderIndex(path: InjectedValues[\.folderStore].directory + "/index") }
    static var testValue: FolderIndex { currentValue }
}

enum FolderNoteKey: TestValueKey {
    static var currentValue: String { "" }
    static var testValue: String { "" }
}

enum SlowFolderBuildsKey: TestValueKey {
    static var currentValue: Counter { Counter() }
    static var testValue: Counter { Counter() }
}

enum SlowFolderStoreKey: TestValueKey {
    static var currentValue: FolderStore {
        InjectedValues[\.slowFolderBuilds].increment()
        usleep(200_000)
        return FolderStore(directory: InjectedValues[\.folder] + "/store")
    }
    static var testValue: FolderStore { currentValue }
}

enum StrictFolderKey: ReadOnlyInjectionKey {
    static var currentValue: String { "/live" }
}

enum StrictFolderStoreKey: TestValueKey {
    static var currentValue: FolderStore { FolderStore(directory: InjectedValues[\.strictFolder] + "/store") }
    static var testValue: FolderStore { currentValue }
}

enum ReportedFolderKey: ReadOnlyInjectionKey {
    static var currentValue: String { "/live" }
}

enum ReportedFolderStoreKey: TestValueKey {
    static var currentValue: FolderStore { FolderStore(directory: InjectedValues[\.reportedFolder] + "/store") }
    static var testValue: FolderStore { currentValue }
}

enum SlowFolderStoreForIndexKey: TestValueKey {
    static var currentValue: FolderStore {
        usleep(100_000)
        return FolderStore(directory: InjectedValues[\.folder] + "/store")
    }
    static var testValue: FolderStore { currentValue }
}

enum SlowFolderIndexKey: TestValueKey {
    static var currentValue: FolderIndex {
        FolderIndex(path: InjectedValues[\.slowFolderStoreForIndex].directory + "/index")
    }
    static var testValue: FolderIndex { currentValue }
}

enum FolderTagKey: TestValueKey {
    static var currentValue: String { "v1" }
    static var testValue: String { "v1" }
}

/// A store labelled with the tag and folder it was built from.
final class TaggedFolderStore: Sendable {
    let label: String

    init(label: String) {
        self.label = label
    }
}

enum TaggedFolderStoreKey: TestValueKey {
    static var currentValue: TaggedFolderStore {
        TaggedFolderStore(label: InjectedValues[\.folderTag] + " " + InjectedValues[\.folder])
    }
    static var testValue: TaggedFolderStore { currentValue }
}

enum CountedFolderBuildsKey: TestValueKey {
    static var currentValue: Counter { Counter() }
    static var testValue: Counter { Counter() }
}

enum CountedFolderStoreKey: TestValueKey {
    static var currentValue: FolderStore {
        InjectedValues[\.countedFolderBuilds].increment()
        return FolderStore(directory: InjectedValues[\.folder] + "/store")
    }
    static var testValue: FolderStore { currentValue }
}

extension InjectedValues {
    var folderNote: String {
        get { Self[FolderNoteKey.self] }
        set { Self[FolderNoteKey.self] = newValue }
    }

    var slowFolderBuilds: Counter {
        get { Self[SlowFolderBuildsKey.self] }
        set { Self[SlowFolderBuildsKey.self] = newValue }
    }

    var slowFolderStore: FolderStore { Self[SlowFolderStoreKey.self] }

    var strictFolder: String {
        get { Self[StrictFolderKey.self] }
        set { Self[StrictFolderKey.self] = newValue }
    }

    var strictFolderStore: FolderStore { Self[StrictFolderStoreKey.self] }

    var reportedFolder: String {
        get { Self[ReportedFolderKey.self] }
        set { Self[ReportedFolderKey.self] = newValue }
    }

    var reportedFolderStore: FolderStore { Self[ReportedFolderStoreKey.self] }

    var slowFolderStoreForIndex: FolderStore { Self[SlowFolderStoreForIndexKey.self] }

    var slowFolderIndex: FolderIndex { Self[SlowFolderIndexKey.self] }

    var folderTag: String {
        get { Self[FolderTagKey.self] }
        set { Self[FolderTagKey.self] = newValue }
    }

    var taggedFolderStore: TaggedFolderStore { Self[TaggedFolderStoreKey.self] }

    var countedFolderBuilds: Counter {
        get { Self[CountedFolderBuildsKey.self] }
        set { Self[CountedFolderBuildsKey.self] = newValue }
    }

    var countedFolderStore: FolderStore { Self[CountedFolderStoreKey.self] }
}

extension InjectedValues {
    var folder: String {
        get { Self[FolderKey.self] }
        set { Self[FolderKey.self] = newValue }
    }

    var folderStore: FolderStore {
        get { Self[FolderStoreKey.self] }
        set { Self[FolderStoreKey.self] = newValue }
    }

    var folderIndex: FolderIndex {
        get { Self[FolderIndexKey.self] }
        set { Self[FolderIndexKey.self] = newValue }
    }
}

/// A task that a `.cached` build starts inherits the build's view, and a `Task.immediate` runs its first part on the
/// build's thread; what it reads there is the task's read, not the build's (a review's finding: each request scope
/// that overrode the user got a pool of its own).
@Suite("A derived default follows its inputs: what its tasks read")
struct DerivedDefaultTaskReadTests {
    @Test("a cached default whose Task.immediate reads a key is built once for every scope that overrides that key")
    func immediateTasksReadIsNoInput() {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
        let pools = PoolLedger()
        withInjectedValues(fresh: true) {
            $0.poolUser = "root"
            $0.poolLedger = pools
        } operation: {
            var handedOut = Swift.Set<ObjectIdentifier>()
            for request in 0..<5 {
                let pool = withInjectedValues {
                    $0.poolUser = "user\(request)"
                } operation: {
                    InjectedValues[\.pool]
                }
                handedOut.insert(ObjectIdentifier(pool))
            }
            #expect(pools.builds.value == 1, "built \(pools.builds.value) pools for 5 requests")
            #expect(handedOut.count == 1, "handed out \(handedOut.count) pools")
            #expect(pools.seen == ["root"], "the pool's task read \(pools.seen)")
        }
    }

    @Test("in a strict test, a cached default whose Task.immediate reads a key builds its test value once")
    func immediateTasksReadIsNoInputInATest() {
        guard #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return }
        let (pools, reports) = (PoolLedger(), StringLog())
        withTestInjectedValues(strict: reports.append) {
            $0.poolUser = "test"
            $0.poolLedger = pools
        } operation: {
            for request in 0..<5 {
                _ = withInjectedValues {
                    $0.poolUser = "user\(request)"
                } operation: {
                    InjectedValues[\.pool]
                }
            }
        }
        #expect(pools.builds.value == 1, "built \(pools.builds.value) pools for 5 requests")
        #expect(pools.seen == ["test"], "the pool's task read \(pools.seen)")
        // Only reports of this test's keys: a read that another test, running beside this one, makes outside every
        // test's scope is reported to a strict test running, which may be this one.
        let own = reports.entries.filter { $0.contains("Pool") }
        #expect(own.isEmpty, "reported \(own)")
    }
}

/// A derived default's first read in a scope that overrides one of its inputs, where the store does not know its inputs
/// yet: what two fresh-context reviews of an attempt to build it from the scope's values alone found that attempt broke.
@Suite("A derived default follows its inputs: the first read in an overriding scope")
struct DerivedDefaultFirstReadTests {
    @Test("threads making the first read in one overriding scope at once build it for the scope only once more")
    func concurrentFirstReadsBuildOnceMore() {
        let values = StringLog()
        let finished = withInjectedValues {
            $0.herdFolder = "/sandbox"
        } operation: {
            let scope = InjectedValues.capture()
            return runOnThreads(8) { _ in values.append(scope.run { InjectedValues[\.herdFolderStore].directory }) }
        }
        #expect(finished)
        #expect(values.entries == Array(repeating: "/sandbox/store", count: 8))
        #expect(HerdFolderStoreKey.builds.value == 2, "one build that learns the inputs, one for the scope")
    }

    @Test("a first read in one scope never keeps a value in another scope's cell")
    func firstReadKeepsNothingInAnotherScope() {
        _ = InjectedValues[\.crossFolderStore]  // The store learns its inputs: both folders.
        let holder = withInjectedValues {
            $0.crossFolder = "/other"
        } operation: {
            CrossFolderHolder()
        }
        crossFolderHolder = holder
        let finished = withInjectedValues {
            $0.crossSecondFolder = "/sandbox"
        } operation: {
            let scope = InjectedValues.capture()
            return runOnThreads(2) { index in
                if index > 0 { usleep(20_000) }
                _ = scope.run { InjectedValues[\.crossFolderIndex].path }
            }
        }
        #expect(finished)
        #expect(holder.store.directory == "/other+/second")
        let elsewhere = StringLog()
        #expect(runOnThreads(1) { _ in elsewhere.append(holder.store.directory) })
        #expect(elsewhere.entries == ["/other+/second"])
    }

    @Test("an article variable's initializer, first read in a scope's first read, keeps no value of that scope")
    func variableInitializerTakesNothingFromTheScope() {
        let inScope = withInjectedValues {
            $0.initializerFolder = "/sandbox"
        } operation: {
            InjectedValues[\.initializerFolderIndex].path
        }
        #expect(inScope == "/live/store+/sandbox", "the variable is the process's, made outside every scope")
        #expect(InitializerFolderStoreVariable.currentValue.directory == "/live/store")
        #expect(InjectedValues[\.initializerFolderIndex].path == "/live/store+/live")
    }
}

enum HerdFolderKey: TestValueKey {
    static var currentValue: String { "/live" }
    static var testValue: String { currentValue }
}

enum HerdFolderStoreKey: TestValueKey {
    static let builds = Counter()
    static var currentValue: FolderStore {
        builds.increment()
        usleep(50_000)
        return FolderStore(directory: InjectedValues[\.herdFolder] + "/store")
    }
    static var testValue: FolderStore { currentValue }
}

enum CrossFolderKey: TestValueKey {
    static var currentValue: String { "/live" }
    static var testValue: String { currentValue }
}

enum CrossSecondFolderKey: TestValueKey {
    static var currentValue: String { "/second" }
    static var testValue: String { currentValue }
}

enum CrossFolderStoreKey: TestValueKey {
    static var currentValue: FolderStore {
        FolderStore(directory: InjectedValues[\.crossFolder] + "+" + InjectedValues[\.crossSecondFolder])
    }
    static var testValue: FolderStore { currentValue }
}

/// An object made in a scope that overrides one of the store's folders, which reads the store through its property.
struct CrossFolderHolder: Sendable {
    @Injected(\.crossFolderStore) var store
}

/// The holder a default reads through: made by the test before that default's first read.
nonisolated(unsafe) var crossFolderHolder: CrossFolderHolder?

enum CrossFolderIndexKey: TestValueKey {
    static var currentValue: FolderIndex {
        let directory = (crossFolderHolder ?? CrossFolderHolder()).store.directory
        usleep(50_000)
        return FolderIndex(path: directory + "/index")
    }
    static var testValue: FolderIndex { currentValue }
}

enum InitializerFolderKey: TestValueKey {
    static var currentValue: String { "/live" }
    static var testValue: String { currentValue }
}

enum InitializerFolderStoreKey: TestValueKey {
    static var currentValue: FolderStore { FolderStore(directory: InjectedValues[\.initializerFolder] + "/store") }
    static var testValue: FolderStore { currentValue }
}

/// An article-style key whose variable's initializer reads a derived default.
enum InitializerFolderStoreVariable: InjectionKey {
    nonisolated(unsafe) static var currentValue = InjectedValues[\.initializerFolderStore]
}

enum InitializerFolderIndexKey: TestValueKey {
    static var currentValue: FolderIndex {
        FolderIndex(
            path: InjectedValues[InitializerFolderStoreVariable.self].directory + "+"
                + InjectedValues[\.initializerFolder]
        )
    }
    static var testValue: FolderIndex { currentValue }
}

extension InjectedValues {
    var herdFolder: String {
        get { Self[HerdFolderKey.self] }
        set { Self[HerdFolderKey.self] = newValue }
    }

    var herdFolderStore: FolderStore { Self[HerdFolderStoreKey.self] }

    var crossFolder: String {
        get { Self[CrossFolderKey.self] }
        set { Self[CrossFolderKey.self] = newValue }
    }

    var crossSecondFolder: String {
        get { Self[CrossSecondFolderKey.self] }
        set { Self[CrossSecondFolderKey.self] = newValue }
    }

    var crossFolderStore: FolderStore { Self[CrossFolderStoreKey.self] }

    var crossFolderIndex: FolderIndex { Self[CrossFolderIndexKey.self] }

    var initializerFolder: String {
        get { Self[InitializerFolderKey.self] }
        set { Self[InitializerFolderKey.self] = newValue }
    }

    var initializerFolderStore: FolderStore { Self[InitializerFolderStoreKey.self] }

    var initializerFolderIndex: FolderIndex { Self[InitializerFolderIndexKey.self] }

    var poolUser: String {
        get { Self[PoolUserKey.self] }
        set { Self[PoolUserKey.self] = newValue }
    }

    var poolLedger: PoolLedger {
        get { Self[PoolLedgerKey.self] }
        set { Self[PoolLedgerKey.self] = newValue }
    }

    var pool: Pool { Self[PoolKey.self] }

    var flaggedFolderStore: FolderStore { Self[FlaggedFolderStoreKey.self] }

    var folderLabel: String { Self[FolderLabelKey.self] }

    var reportingFolderStore: FolderStore { Self[ReportingFolderStoreKey.self] }

    var restlessFolder: String {
        get { Self[RestlessFolderKey.self] }
        set { Self[RestlessFolderKey.self] = newValue }
    }

    var restlessFolderStore: FolderStore { Self[RestlessFolderStoreKey.self] }

    var folderBuilds: Int {
        get { Self[FolderBuildsKey.self] }
        set { Self[FolderBuildsKey.self] = newValue }
    }
}

/// Counts the pools built, and records the user each pool's first task read.
final class PoolLedger: @unchecked Sendable {
    // `@unchecked Sendable`: `users` is only read and written while holding `lock`.
    let builds = Counter()
    private let lock = NSLock()
    private var users: [String] = []

    var seen: [String] { lock.withLock { users } }

    func saw(_ user: String) { lock.withLock { users.append(user) } }
}

enum PoolUserKey: TestValueKey {
    static var currentValue: String { "anonymous" }
    static var testValue: String { currentValue }
}

enum PoolLedgerKey: TestValueKey {
    static var currentValue: PoolLedger { PoolLedger() }
    static var testValue: PoolLedger { currentValue }
}

/// A shared service whose initializer reads nothing itself, and starts its loop's first tick at once, which reads the
/// user.
final class Pool: Sendable {
    init() {
        let ledger = InjectedValues[\.poolLedger]
        ledger.builds.increment()
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            Task.immediate { ledger.saw(InjectedValues[\.poolUser]) }
        }
    }
}

enum PoolKey: TestValueKey {
    static var currentValue: Pool { Pool() }
    static var testValue: Pool { currentValue }
    static var lifetime: InjectionLifetime { .cached }
}
