import Foundation
import Injected

/// What previews show: models made in a scope that replaces every service with one that runs offline, and keeps the
/// app's files in a sandbox of the preview's own.
///
/// Only `appDirectory` is set for files: the favorites store's default derives its directory from it, so the store a
/// preview gets is built for the preview's scope, in the sandbox, and never touches the reader's own favorites.
public enum Previews {
    /// The articles a preview shows.
    public static let articles = [
        Article(id: 1, title: "Environment values, explained", published: Date(timeIntervalSince1970: 1_790_000_000)),
        Article(id: 2, title: "Testing in parallel", published: Date(timeIntervalSince1970: 1_795_000_000)),
    ]

    /// A feed for a preview, whose files go to `sandbox`.
    @MainActor
    public static func feedModel(sandbox: URL = temporarySandbox()) -> FeedModel {
        withInjectedValues {
            $0.articlesAPI = PreviewAPI()
            $0.clock = FixedClock(now: Date(timeIntervalSince1970: 1_800_000_000))
            $0.appDirectory = sandbox
        } operation: {
            FeedModel()
        }
    }

    /// A directory of its own in the temporary directory.
    public static func temporarySandbox() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("ReadingListPreview-\(UUID())")
    }
}

/// An API that answers at once with the preview's articles.
struct PreviewAPI: ArticlesAPI {
    func articles() async throws -> [Article] { Previews.articles }
    func comments(on id: Article.ID) async throws -> [String] { ["A comment in the preview"] }
}
