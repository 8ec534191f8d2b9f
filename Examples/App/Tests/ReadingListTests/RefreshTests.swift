import Injected
import InjectedTesting
import ReadingList
import Testing

/// A detail screen reloads its comments on the app's clock, which a test clock runs here, so no test waits.
@Suite("Keeping comments fresh", .injectedValues(strict: true))
@MainActor
struct RefreshTests {
    @Test("a detail reloads its comments every 30 seconds on the app's clock, and not before")
    func reloadsEveryInterval() async {
        let clock = TestClock()
        let api = CountingAPI()
        let detail = withInjectedValues {
            $0.articlesAPI = api
            $0.clock = TestAppClock(clock: clock)
        } operation: {
            DetailModel(article: sampleArticles[0])
        }
        let refreshing = Task { await detail.keepCommentsFresh() }

        await clock.waitForSleepers()
        #expect(detail.comments == ["comment 1"])
        await clock.advance(by: .seconds(29))
        #expect(await api.requests == 1)

        await clock.advance(by: .seconds(1))
        await clock.waitForSleepers()
        #expect(detail.comments == ["comment 2"])

        await clock.advance(by: .seconds(30))
        await clock.waitForSleepers()
        #expect(detail.comments == ["comment 3"])
        #expect(detail.state == .loaded)

        refreshing.cancel()
        await refreshing.value
    }

    @Test("leaving the screen stops the refresh while it waits, and the clock has no one left asleep")
    func cancellingStopsTheRefresh() async {
        let clock = TestClock()
        let api = CountingAPI()
        let detail = withInjectedValues {
            $0.articlesAPI = api
            $0.clock = TestAppClock(clock: clock)
        } operation: {
            DetailModel(article: sampleArticles[0])
        }
        let refreshing = Task { await detail.keepCommentsFresh(every: .seconds(10)) }
        await clock.waitForSleepers()
        refreshing.cancel()
        await refreshing.value
        #expect(clock.sleeperCount == 0)
        await clock.advance(by: .seconds(60))
        #expect(await api.requests == 1)
        #expect(detail.comments == ["comment 1"])
    }

    @Test("the app's clock shows the test clock's time")
    func timeFollowsTheTestClock() async {
        let clock = TestClock()
        let appClock = TestAppClock(clock: clock)
        let start = appClock.now
        await clock.advance(by: .seconds(90))
        #expect(appClock.now.timeIntervalSince(start) == 90)
    }
}

/// An API client that counts the requests for comments, and numbers each answer.
private actor CountingAPI: ArticlesAPI {
    private(set) var requests = 0

    func articles() async throws -> [Article] { sampleArticles }

    func comments(on id: Article.ID) async throws -> [String] {
        requests += 1
        return ["comment \(requests)"]
    }
}
