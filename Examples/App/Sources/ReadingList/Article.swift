import Foundation

/// An article in the reading list.
public struct Article: Codable, Hashable, Identifiable, Sendable {
    /// The article's identifier.
    public let id: Int
    /// The article's title.
    public let title: String
    /// When the article was published.
    public let published: Date

    /// An article.
    public init(id: Int, title: String, published: Date) {
        self.id = id
        self.title = title
        self.published = published
    }
}

/// An article the reader saved, and when.
public struct Favorite: Codable, Equatable, Sendable {
    /// The saved article.
    public let article: Article
    /// When it was saved, by the app's clock.
    public let savedAt: Date

    /// A favorite.
    public init(article: Article, savedAt: Date) {
        self.article = article
        self.savedAt = savedAt
    }
}

/// Where loading something stands, for a screen to show.
public enum LoadState: Equatable, Sendable {
    /// Nothing asked for yet.
    case idle
    /// Loading.
    case loading
    /// Loaded.
    case loaded
    /// The load failed, with a message for the reader.
    case failed(String)
    /// The load was cancelled, as when the reader leaves the screen.
    case cancelled
}
