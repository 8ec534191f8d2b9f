import Foundation
import Injected
import Observation

/// The feed: the articles, which of them the reader saved, and their thumbnails.
///
/// Its dependencies are `@ObservationIgnored`: `@Observable` would otherwise turn each `@Injected` property into a
/// tracked one, which does not compile ("invalid redeclaration of synthesized property '_api'"), and there is
/// nothing to track, since the wrapper holds no value, only where to look.
@MainActor
@Observable
public final class FeedModel {
    @ObservationIgnored @Injected(\.articlesAPI) private var api
    @ObservationIgnored @Injected(\.favorites) private var favorites
    @ObservationIgnored @Injected(\.clock) private var clock
    @ObservationIgnored @Injected(\.dateStyle) private var dateStyle
    @ObservationIgnored @Injected(\.thumbnails) private var thumbnails

    /// The articles, once loaded.
    public private(set) var articles: [Article] = []
    /// The articles the reader saved.
    public private(set) var favoriteIDs: Set<Article.ID> = []
    /// Each loaded thumbnail's image, and when it arrived.
    public private(set) var thumbnailsLoaded: [Article.ID: (name: String, at: Date)] = [:]
    /// Where loading stands.
    public private(set) var state = LoadState.idle

    /// A feed that resolves its dependencies in the scope it is made in, for life.
    public init() {}

    /// Loads the articles and the saved favorites.
    ///
    /// Cancelling the task that calls it leaves the feed as it was, and the state `.cancelled`.
    public func load() async {
        state = .loading
        do {
            let articles = try await api.articles()
            let saved = try await favorites.all()
            try Task.checkCancellation()
            self.articles = articles
            favoriteIDs = Set(saved.map(\.article.id))
            state = .loaded
        } catch is CancellationError {
            state = .cancelled
        } catch {
            state = .failed("The feed could not be loaded: \(error)")
        }
    }

    /// Saves `article` as a favorite, stamped with the clock's time, or removes it if it is one.
    public func toggleFavorite(_ article: Article) async throws {
        if favoriteIDs.contains(article.id) {
            try await favorites.remove(id: article.id)
            favoriteIDs.remove(article.id)
        } else {
            try await favorites.save(Favorite(article: article, savedAt: clock.now))
            favoriteIDs.insert(article.id)
        }
    }

    /// When `article` was published, in the style the settings chose.
    public func published(_ article: Article) -> String {
        dateStyle.string(for: article.published, now: clock.now)
    }

    /// The detail screen's model, made in the feed's scope, so that it reads what the feed reads: in a preview or a
    /// test that made the feed with mocks, the same mocks, after that scope has ended too.
    public func detail(for article: Article) -> DetailModel {
        withInjectedValues(from: $api) {
            DetailModel(article: article)
        }
    }

    /// Loads the thumbnail of `article` through the callback-style loader, and returns once it has arrived.
    ///
    /// The loader calls back on a queue of its own, outside every task, where no scope is active. The scope is
    /// captured here and run around the callback, so the time the callback reads is the feed's clock.
    public func loadThumbnail(for article: Article) async {
        let scope = $clock
        let loaded: (name: String, at: Date) = await withCheckedContinuation { continuation in
            thumbnails.loadThumbnail(for: article) { name in
                scope.run {
                    continuation.resume(returning: (name, InjectedValues[\.clock].now))
                }
            }
        }
        thumbnailsLoaded[article.id] = loaded
    }
}

/// An article's detail screen: its comments, kept fresh while the screen is shown.
@MainActor
@Observable
public final class DetailModel {
    @ObservationIgnored @Injected(\.articlesAPI) private var api
    @ObservationIgnored @Injected(\.clock) private var clock

    /// The article shown.
    public let article: Article
    /// Its comments, once loaded.
    public private(set) var comments: [String] = []
    /// Where loading stands.
    public private(set) var state = LoadState.idle

    /// The detail of `article`.
    ///
    /// Made by ``FeedModel/detail(for:)``, it reads what the feed reads.
    public init(article: Article) {
        self.article = article
    }

    /// Loads the comments.
    public func load() async {
        state = .loading
        do {
            comments = try await api.comments(on: article.id)
            state = .loaded
        } catch is CancellationError {
            state = .cancelled
        } catch {
            state = .failed("The comments could not be loaded: \(error)")
        }
    }

    /// Loads the comments, and again every `interval` on the app's clock, until the task that calls it is cancelled.
    ///
    /// A detail screen calls it from `.task { await model.keepCommentsFresh() }`, which SwiftUI cancels when the
    /// screen goes away. The waits are the clock's, so a test moves past them with a test clock instead of waiting.
    public func keepCommentsFresh(every interval: Duration = .seconds(30)) async {
        while !Task.isCancelled {
            await load()
            do {
                try await clock.sleep(for: interval)
            } catch {
                return
            }
        }
    }
}

/// The settings screen: switches the date style that the launch code chose.
@MainActor
@Observable
public final class SettingsModel {
    /// The date styles the reader can choose.
    public enum DateStyleChoice: String, CaseIterable, Sendable {
        /// `2026-09-21`.
        case absolute
        /// `12 days ago`.
        case relative

        var style: any DateStyle {
            switch self {
            case .absolute: AbsoluteDateStyle()
            case .relative: RelativeDateStyle()
            }
        }
    }

    @ObservationIgnored @Injected(\.dateStyle) private var style

    /// The style every screen shows dates in.
    public private(set) var dateStyle = DateStyleChoice.absolute

    /// The settings, showing the style in effect where they are made.
    public init() {
        dateStyle = style is RelativeDateStyle ? .relative : .absolute
    }

    /// Switches every screen to `choice`.
    ///
    /// The write goes through the model's own property, as every read and write in a model does, never through
    /// `InjectedValues[…]`, which would use the caller's scope and not the model's. In the app, outside every scope,
    /// it is the app's value; in a test, it stays in the test.
    public func choose(_ choice: DateStyleChoice) {
        style = choice.style
        dateStyle = choice
    }
}

/// Loads the thumbnails of `articles` ahead of time, for code that is not a model, such as a background refresh, and
/// returns when each arrived, by the clock of the scope the caller is in.
///
/// `InjectedValues.capture()` takes the caller's scope, and the loader's callback runs in it, on the loader's queue.
public func prefetchThumbnails(for articles: [Article]) async -> [Article.ID: Date] {
    let scope = InjectedValues.capture()
    let loader = InjectedValues[\.thumbnails]
    var arrived: [Article.ID: Date] = [:]
    for article in articles {
        arrived[article.id] = await withCheckedContinuation { continuation in
            loader.loadThumbnail(for: article) { _ in
                scope.run {
                    continuation.resume(returning: InjectedValues[\.clock].now)
                }
            }
        }
    }
    return arrived
}
