import Foundation
import Injected
import InjectedTesting
import ReadingList
import Testing

/// The test values' clock time.
let testNow = Date(timeIntervalSince1970: 1_800_000_000)

@Suite("The feed", .injectedValues(strict: true) { $0.favorites = InMemoryFavoritesStore() })
@MainActor
struct FeedModelTests {
    @Test("loading shows the API's articles and marks the saved ones", .injecting(\.articlesAPI, MockAPI()))
    func loadsArticlesAndFavorites() async throws {
        try await InjectedValues[\.favorites].save(Favorite(article: sampleArticles[1], savedAt: testNow))
        let feed = FeedModel()
        await feed.load()
        #expect(feed.state == .loaded)
        #expect(feed.articles == sampleArticles)
        #expect(feed.favoriteIDs == [2])
    }

    @Test("a failing API leaves the feed empty and says why", .injecting(\.articlesAPI, FailingAPI()))
    func failingAPI() async {
        let feed = FeedModel()
        await feed.load()
        #expect(feed.articles.isEmpty)
        #expect(feed.state == .failed("The feed could not be loaded: Unreachable()"))
    }

    @Test("a favorite is saved with the clock's time, and removed again", .injecting(\.articlesAPI, MockAPI()))
    func togglesFavorites() async throws {
        let feed = FeedModel()
        await feed.load()
        try await feed.toggleFavorite(sampleArticles[0])
        #expect(try await InjectedValues[\.favorites].all() == [Favorite(article: sampleArticles[0], savedAt: testNow)])
        #expect(feed.favoriteIDs == [1])
        try await feed.toggleFavorite(sampleArticles[0])
        #expect(try await InjectedValues[\.favorites].all().isEmpty)
        #expect(feed.favoriteIDs.isEmpty)
    }

    @Test("published dates follow the style in effect", .injecting(\.articlesAPI, MockAPI()))
    func publishedDates() {
        let feed = FeedModel()
        #expect(feed.published(sampleArticles[0]) == "2027-01-14")
        InjectedValues[\.dateStyle] = RelativeDateStyle()
        #expect(feed.published(sampleArticles[0]) == "1 day ago")
    }

    @Test("a thumbnail's callback, on the loader's queue, reads the clock of the feed's scope")
    func thumbnailCallbackReadsTheFeedsScope() async {
        let madeAt = Date(timeIntervalSince1970: 1_700_000_000)
        let feed = withInjectedValues {
            $0.clock = FixedClock(now: madeAt)
            $0.thumbnails = RenderingThumbnailLoader()
        } operation: {
            FeedModel()
        }
        await feed.loadThumbnail(for: sampleArticles[0])
        #expect(feed.thumbnailsLoaded[1]?.name == "thumbnail-1.png")
        // Without the scope run around it, the callback would read the test value's time.
        #expect(feed.thumbnailsLoaded[1]?.at == madeAt)
    }

    @Test(
        "a prefetch's callbacks read the clock of the caller's scope",
        .injectedValues {
            $0.clock = FixedClock(now: Date(timeIntervalSince1970: 1_600_000_000))
            $0.thumbnails = RenderingThumbnailLoader()
        }
    )
    func prefetchCallbacksReadTheCallersScope() async {
        let arrived = await prefetchThumbnails(for: sampleArticles)
        #expect(
            arrived == [1: Date(timeIntervalSince1970: 1_600_000_000), 2: Date(timeIntervalSince1970: 1_600_000_000)]
        )
    }
}
