import InjectedTesting
import ReadingList
import Testing

@Suite("Strict mode", .injectedValues(strict: true))
@MainActor
struct StrictModeTests {
    @Test(
        "a feed that reaches the live favorites store is reported, naming the key",
        .injecting(\.articlesAPI, MockAPI())
    )
    func liveStoreIsReported() async {
        let feed = FeedModel()
        await withKnownIssue {
            await feed.load()
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("FavoritesStoreKey") }
        }
        // The live store looked in the test value's directory, which cannot exist: nothing of the reader's was read.
        #expect(feed.state == .loaded)
        #expect(feed.favoriteIDs.isEmpty)
    }
}
