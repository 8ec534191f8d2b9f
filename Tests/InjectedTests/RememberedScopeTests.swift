import Foundation
import Injected
import Testing

/// An `@Injected` property made in a scope remembers that scope for its whole life, and reads look in the reader's
/// scopes, then the remembered one, then the global store.
@Suite("The scope an @Injected property remembers")
struct RememberedScopeTests {
    @Test("an object made in a scope keeps its overrides after the operation returns, on any thread")
    func keepsOverridesForLife() async {
        let model = withInjectedValues {
            $0.feedSource = "mock"
        } operation: {
            FeedModel()
        }
        #expect(model.source == "mock")
        #expect(await Task.detached { model.source }.value == "mock")
        let fromQueue = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: model.source) }
        }
        #expect(fromQueue == "mock")
        let matches = Counter()
        #expect(runOnThreads(2) { _ in if model.source == "mock" { matches.increment() } })
        #expect(matches.value == 2)
    }

    @Test("an object made outside any scope reads wherever it is used")
    func unscopedObjectReadsWhereUsed() {
        let model = FeedModel()
        #expect(model.source == "default")
        withInjectedValues {
            $0.feedSource = "scoped"
        } operation: {
            #expect(model.source == "scoped")
        }
    }

    @Test("an override in the reader's own scope wins over the remembered one")
    func readersOverrideWins() {
        let model = withInjectedValues {
            $0.feedSource = "remembered"
        } operation: {
            FeedModel()
        }
        withInjectedValues {
            $0.feedSource = "reader's"
        } operation: {
            #expect(model.source == "reader's")
        }
    }

    @Test("a reader's scope that does not override the key keeps the remembered value")
    func readersScopeWithoutOverrideKeepsRemembered() {
        let model = withInjectedValues {
            $0.feedSource = "remembered"
        } operation: {
            FeedModel()
        }
        withInjectedValues {
            $0.feedOther = "unrelated"
        } operation: {
            #expect(model.source == "remembered")
            withInjectedValues { _ in
            } operation: {
                #expect(model.source == "remembered")
            }
        }
    }

    @Test("in the same fresh scope, a remembered scope nested in the reader's counts, and the reader's own come first")
    func sameFreshRoot() {
        inFreshScope {
            InjectedValues[\.feedSource] = "the fresh scope's own"
            let model = withInjectedValues {
                $0.feedSource = "nested"
            } operation: {
                FeedModel()
            }
            #expect(model.source == "nested")
            withInjectedValues {
                $0.feedOther = "unrelated"
            } operation: {
                #expect(model.source == "nested")
            }
            withInjectedValues {
                $0.feedSource = "the reader's"
            } operation: {
                #expect(model.source == "the reader's")
            }
        }
    }

    // Since core v5, worlds are tests and the process, not every fresh scope: an object made in a test stays in the
    // test's world after the test, so a scope of the process's ignores it too; outside every scope it reads its own.
    @Test("inside another test's scope or a plain one, an object made in a test resolves in the reader's world")
    func testScopeIsAWorldOfItsOwn() {
        let model = withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.feedSource = "test A"
        } operation: {
            FeedModel()
        }
        withTestInjectedValues(strict: false, reportingTo: { _ in }) {
            $0.feedSource = "test B"
        } operation: {
            #expect(model.source == "test B")
        }
        withTestInjectedValues(strict: false, reportingTo: { _ in }, { _ in }) {
            #expect(model.source == "default")
        }
        inFreshScope {
            #expect(model.source == "default")
        }
        #expect(model.source == "test A")
    }

    @Test("a shared object first touched in one test's fresh scope does not show that test's mocks to another")
    func sharedObjectStaysIsolated() async {
        let shared = SharedModelBox()
        await withInjectedValues(fresh: true) {
            $0.feedSource = "test A"
        } operation: {
            let model = shared.model
            await Task.yield()
            withInjectedValues(fresh: true) {
                $0.feedSource = "test B"
            } operation: {
                #expect(model.source == "test B")
            }
            #expect(model.source == "test A")
        }
    }

    // Since core v5 an object keeps the scope as it was when the object was made: `otherModel`, made after the
    // operation's write, keeps that write.
    @Test("while the scope runs its writes are seen; once it ends, each object keeps the scope as it was made")
    func writesDuringAndAfterTheOperation() async {
        let (model, otherModel) = await withInjectedValues {
            $0.feedSource = "configured"
        } operation: {
            let model = FeedModel()
            InjectedValues[\.feedSource] = "written in the operation"
            let seenDuring = await Task.detached { model.source }.value
            #expect(seenDuring == "written in the operation")
            return (model, FeedModel())
        }
        #expect(model.source == "configured")
        #expect(otherModel.source == "written in the operation")
    }

    // Since core v5 an ended scope is a value: a write through its object goes to the root it remembers, the global
    // store here, and the scope's own overrides keep winning for its objects. In a child process, which has a global
    // store of its own.
    @Test("after the scope ends, a write through the property goes to the global store, under the scope's overrides")
    func writeThroughPropertyAfterTheScope() async {
        await #expect(processExitsWith: .success) {
            let (model, sibling) = withInjectedValues {
                $0.feedSource = "configured"
            } operation: {
                (FeedModel(), FeedModel())
            }
            model.source = "written later"
            precondition(model.source == "configured", "the scope's override lost: \(model.source)")
            precondition(sibling.source == "configured", "the scope's override lost: \(sibling.source)")
            precondition(FeedModel().source == "written later", "the write did not reach the global store")
        }
    }

    @Test("a write through the property inside another scope stays in that scope")
    func writeThroughPropertyInsideAnotherScope() {
        let model = withInjectedValues {
            $0.feedSource = "configured"
        } operation: {
            FeedModel()
        }
        withInjectedValues { _ in
        } operation: {
            model.source = "the reader's scope"
            #expect(model.source == "the reader's scope")
            #expect(InjectedValues[\.feedSource] == "the reader's scope")
        }
        #expect(model.source == "configured")
    }

    @Test(
        "a cached default read through a remembered fresh scope is built there, and from what the object remembers after"
    )
    func cachedDefaultInRememberedRoot() async {
        let (model, during) = withInjectedValues(fresh: true) {
            $0.feedSource = "fresh"
        } operation: {
            let model = FeedModel()
            return (model, model.cachedFeed)
        }
        #expect(during.label == "built from fresh")
        // Since core v5 a fresh scope's cache ends with it. Since issue 37 a cached default follows its inputs: the
        // object remembers the override of its input, so afterwards it gets a value built from that, one for the
        // frame it remembers, not the global one.
        let after = await Task.detached { model.cachedFeed }.value
        #expect(after !== during)
        #expect(after.label == "built from fresh")
        #expect(model.cachedFeed === after)
    }

    @Test("a cached default read through a remembered scope inside a fresh scope is built in the reader's cache")
    func cachedDefaultInReadersRoot() {
        let model = withInjectedValues(fresh: true) {
            $0.feedSource = "remembered"
        } operation: {
            FeedModel()
        }
        withInjectedValues(fresh: true) {
            $0.feedSource = "reader's"
        } operation: {
            let cached = model.cachedFeed
            #expect(cached.label == "built from reader's")
            #expect(InjectedValues[\.cachedFeed] === cached)
        }
    }

    // Since core v5 an object made in an update closure remembers the new scope, as it was when the object was made:
    // what remembers a scope cannot keep it alive, so the scope may store the object.
    @Test("an object made in the update closure remembers the new scope as it was then, and reads it while it runs")
    func updateClosureMakesInTheNewScope() {
        let (made, readInUpdate) = withInjectedValues {
            $0.feedSource = "outer"
        } operation: {
            var made: FeedModel?
            var readInUpdate = ""
            withInjectedValues {
                $0.feedSource = "inner"
                readInUpdate = $0.feedSource
                made = FeedModel()
            } operation: {
            }
            return (made!, readInUpdate)
        }
        #expect(readInUpdate == "inner")
        #expect(made.source == "inner")
    }

    @Test("an object a factory default makes, read through a property after its scope ended, remembers that scope")
    func factoryObjectRemembersTheScope() async {
        let screen = withInjectedValues {
            $0.feedSource = "mock"
        } operation: {
            FeedScreen()
        }
        #expect(screen.madeModel.source == "mock")
        #expect(await Task.detached { screen.madeModel.source }.value == "mock")
    }

    @Test("an object a factory default makes, read through a property inside another scope, sees both scopes")
    func factoryObjectInsideAnotherScope() {
        let screen = withInjectedValues {
            $0.feedSource = "remembered"
            $0.feedOther = "remembered other"
        } operation: {
            FeedScreen()
        }
        let model = withInjectedValues {
            $0.feedSource = "reader's"
        } operation: {
            screen.madeModel
        }
        #expect(model.source == "reader's")
        #expect(model.other == "remembered other")
    }

    @Test("a factory default that opens a scope of its own keeps the scope the property lends")
    func factoryOpeningAScopeKeepsTheLentScope() async {
        let screen = withInjectedValues {
            $0.feedSource = "mock"
        } operation: {
            ReportScreen()
        }
        let expected = ReportReading(atInit: "mock", throughProperty: "mock", style: "compact")
        #expect(await Task.detached { screen.reports.reading }.value == expected)
        withInjectedValues {
            $0.feedOther = "unrelated"
        } operation: {
            #expect(screen.reports.reading == expected)
        }
        // The same factory without its inner scope, as a control.
        #expect(await Task.detached { screen.plainReports.reading.atInit }.value == "mock")
    }

    @Test("in a test, an object a helper makes in a fresh scope keeps what that scope set, where the test does not")
    func freshHelperInsideATest() {
        let checkout = withTestInjectedValues(strict: nil) {
            $0.feedOther = "the test's"
        } operation: {
            let checkout = makeCheckoutWithAMock()
            #expect(checkout.source == "mock")
            #expect(checkout.other == "the test's")
            withInjectedValues {
                $0.feedOther = "a scope in the test"
            } operation: {
                #expect(checkout.source == "mock")
                #expect(checkout.other == "a scope in the test")
            }
            withInjectedValues {
                $0.feedSource = "the reader's"
            } operation: {
                #expect(checkout.source == "the reader's")
            }
            return checkout
        }
        // Another test sees none of it.
        withTestInjectedValues(strict: nil) { _ in
        } operation: {
            #expect(checkout.source == "default")
            #expect(checkout.other == "default")
        }
    }

    @Test("1,000 concurrent scopes each make a model that, read after all have ended, sees only its own value")
    func thousandScopesThenReadAfterwards() async {
        let models = await withTaskGroup(of: (Int, FeedModel).self) { group in
            for index in 0..<1_000 {
                group.addTask {
                    await withInjectedValues {
                        $0.feedSource = "scope \(index)"
                    } operation: {
                        await Task.yield()
                        return (index, FeedModel())
                    }
                }
            }
            return await group.reduce(into: [(Int, FeedModel)]()) { $0.append($1) }
        }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for (index, model) in models {
                group.addTask { model.source == "scope \(index)" ? 0 : 1 }
            }
            return await group.reduce(0, +)
        }
        #expect(models.count == 1_000)
        #expect(mismatches == 0)
    }
}

extension ProcessGlobalStateTests {
    /// The remembered scope comes before the global store.
    @Suite("The remembered scope and the global store")
    struct RememberedScopeGlobalTests {
        @Test("a remembered scope wins over a global override, which an object made outside any scope sees")
        func rememberedBeatsGlobal() async {
            defer { InjectedValues.reset() }
            let model = withInjectedValues {
                $0.globalFeedSource = "remembered"
            } operation: {
                GlobalFeedModel()
            }
            InjectedValues[\.globalFeedSource] = "global"
            #expect(model.source == "remembered")
            #expect(await Task.detached { model.source }.value == "remembered")
            #expect(GlobalFeedModel().source == "global")
        }
    }
}

// MARK: - Models and keys

/// A view model in the shape of the ones tests and previews make in a scope and use afterwards.
private struct FeedModel: Sendable {
    @Injected(\.feedSource) var source
    @Injected(\.feedOther) var other
    @Injected(\.cachedFeed) var cachedFeed
}

/// A model whose key only the global suite uses.
private struct GlobalFeedModel: Sendable {
    @Injected(\.globalFeedSource) var source
}

/// An object made on first use, like a `static let shared`.
private final class SharedModelBox: @unchecked Sendable {
    // `@unchecked Sendable`: `made` is only read and written while holding `lock`.
    private let lock = NSLock()
    private var made: FeedModel?

    var model: FeedModel {
        lock.withLock {
            if let made { return made }
            let model = FeedModel()
            made = model
            return model
        }
    }
}

/// A screen whose model comes from a factory default: a new `FeedModel` on every read.
private struct FeedScreen: Sendable {
    @Injected(\.madeFeedModel) var madeModel
}

/// A helper a test calls, which makes its object in a fresh scope of its own.
private func makeCheckoutWithAMock() -> FeedModel {
    withInjectedValues(fresh: true) {
        $0.feedSource = "mock"
    } operation: {
        FeedModel()
    }
}

/// What a report service read of the feed source: in its initializer, and later through its property.
private struct ReportReading: Equatable, Sendable {
    let atInit: String
    let throughProperty: String
    let style: String
}

/// A service whose factory default opens a scope of its own around it.
private final class ReportService: Sendable {
    private let sourceAtInit = InjectedValues[\.feedSource]
    private let source = Injected(\.feedSource)
    private let style = Injected(\.reportStyle)

    var reading: ReportReading {
        ReportReading(atInit: sourceAtInit, throughProperty: source.wrappedValue, style: style.wrappedValue)
    }
}

/// A screen whose report service comes from a factory default, with and without an inner scope.
private struct ReportScreen: Sendable {
    @Injected(\.reports) var reports
    @Injected(\.plainReports) var plainReports
}

private enum ReportsKey: ReadOnlyInjectionKey {
    static var currentValue: ReportService {
        withInjectedValues {
            $0.reportStyle = "compact"
        } operation: {
            ReportService()
        }
    }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum PlainReportsKey: ReadOnlyInjectionKey {
    static var currentValue: ReportService { ReportService() }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum ReportStyleKey: ReadOnlyInjectionKey {
    static let currentValue = "full"
}

private enum MadeFeedModelKey: ReadOnlyInjectionKey {
    static var currentValue: FeedModel { FeedModel() }
    static var lifetime: InjectionLifetime { .uncached }
}

private enum FeedSourceKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum GlobalFeedSourceKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum FeedOtherKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

private enum CachedFeedKey: ReadOnlyInjectionKey {
    static var currentValue: Instance { Instance("built from " + InjectedValues[\.feedSource]) }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    fileprivate var reports: ReportService {
        get { Self[ReportsKey.self] }
        set { Self[ReportsKey.self] = newValue }
    }

    fileprivate var plainReports: ReportService {
        get { Self[PlainReportsKey.self] }
        set { Self[PlainReportsKey.self] = newValue }
    }

    fileprivate var reportStyle: String {
        get { Self[ReportStyleKey.self] }
        set { Self[ReportStyleKey.self] = newValue }
    }

    fileprivate var madeFeedModel: FeedModel {
        get { Self[MadeFeedModelKey.self] }
        set { Self[MadeFeedModelKey.self] = newValue }
    }

    fileprivate var feedSource: String {
        get { Self[FeedSourceKey.self] }
        set { Self[FeedSourceKey.self] = newValue }
    }

    fileprivate var globalFeedSource: String {
        get { Self[GlobalFeedSourceKey.self] }
        set { Self[GlobalFeedSourceKey.self] = newValue }
    }

    fileprivate var feedOther: String {
        get { Self[FeedOtherKey.self] }
        set { Self[FeedOtherKey.self] = newValue }
    }

    fileprivate var cachedFeed: Instance {
        get { Self[CachedFeedKey.self] }
        set { Self[CachedFeedKey.self] = newValue }
    }
}
