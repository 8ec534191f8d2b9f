import Injected
import InjectedTesting
import ReadingList
import Testing

@Suite("The detail screen", .injectedValues(strict: true) { $0.favorites = InMemoryFavoritesStore() })
@MainActor
struct DetailModelTests {
    @Test("a detail made from the feed keeps the feed's overrides after the feed's scope has ended")
    func keepsTheFeedsOverrides() async {
        let feed = withInjectedValues {
            $0.articlesAPI = MockAPI(comments: ["from the feed's mock"])
        } operation: {
            FeedModel()
        }
        // The scope has ended, and this test overrides no API client: only the feed's scope has the mock.
        let detail = feed.detail(for: sampleArticles[0])
        await detail.load()
        #expect(detail.state == .loaded)
        #expect(detail.comments == ["from the feed's mock"])
    }

    @Test(
        "a detail reads the overrides of the test it is made in",
        .injecting(\.articlesAPI, MockAPI(comments: ["test"]))
    )
    func readsTheTestsOverrides() async {
        let detail = DetailModel(article: sampleArticles[1])
        await detail.load()
        #expect(detail.comments == ["test"])
    }

    @Test("a failing API leaves the comments empty and says why", .injecting(\.articlesAPI, FailingAPI()))
    func failingAPI() async {
        let detail = DetailModel(article: sampleArticles[1])
        await detail.load()
        #expect(detail.comments.isEmpty)
        #expect(detail.state == .failed("The comments could not be loaded: Unreachable()"))
    }
}
