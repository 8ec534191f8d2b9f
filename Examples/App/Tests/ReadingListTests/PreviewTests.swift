import Foundation
import Injected
import ReadingList
import Testing

/// The preview recipe keeps a preview's files in its sandbox (issue 37).
@Suite("Previews")
struct PreviewTests {
    @Test("a preview's feed saves favorites into its sandbox, after the scope that made it has returned")
    @MainActor
    func previewFeedSavesIntoItsSandbox() async throws {
        let sandbox = Previews.temporarySandbox()
        defer { try? FileManager.default.removeItem(at: sandbox) }
        let favorites = sandbox.appendingPathComponent("Favorites")
        let model = Previews.feedModel(sandbox: sandbox)
        await model.load()
        try await model.toggleFavorite(Previews.articles[0])
        #expect(try FileManager.default.contentsOfDirectory(atPath: favorites.path) == ["1.json"])
        // The same store, in the sandbox, for the model's later reads.
        try await model.toggleFavorite(Previews.articles[0])
        #expect(try FileManager.default.contentsOfDirectory(atPath: favorites.path).isEmpty)
    }
}
