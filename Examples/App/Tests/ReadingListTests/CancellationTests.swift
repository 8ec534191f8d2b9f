import InjectedTesting
import ReadingList
import Testing

@Suite("Cancellation", .injectedValues(strict: true) { $0.favorites = InMemoryFavoritesStore() })
@MainActor
struct CancellationTests {
    @Test("cancelling a feed's load leaves it empty and says it was cancelled", .injecting(\.articlesAPI, SlowAPI()))
    func cancellingTheFeed() async {
        let feed = FeedModel()
        let loading = Task { await feed.load() }
        while feed.state != .loading { await Task.yield() }
        loading.cancel()
        await loading.value
        #expect(feed.state == .cancelled)
        #expect(feed.articles.isEmpty)
    }

    @Test("cancelling a detail's load says it was cancelled", .injecting(\.articlesAPI, SlowAPI()))
    func cancellingTheDetail() async {
        let detail = DetailModel(article: sampleArticles[0])
        let loading = Task { await detail.load() }
        while detail.state != .loading { await Task.yield() }
        loading.cancel()
        await loading.value
        #expect(detail.state == .cancelled)
    }
}
