import Dispatch
import Foundation

// MARK: - The API client

/// The reading list's server.
public protocol ArticlesAPI: Sendable {
    /// The articles in the feed.
    func articles() async throws -> [Article]
    /// The comments on the article `id`.
    func comments(on id: Article.ID) async throws -> [String]
}

/// The live client. This example has no server, so it answers from built-in articles after the latency a network
/// would add, measured on the app's clock.
public actor LiveArticlesAPI: ArticlesAPI {
    private let clock: any AppClock
    private var requests = 0

    /// A client that waits on `clock`.
    public init(clock: any AppClock) {
        self.clock = clock
    }

    /// The built-in articles.
    public func articles() async throws -> [Article] {
        try await respond()
        return [
            Article(
                id: 1,
                title: "Environment values, explained",
                published: Date(timeIntervalSince1970: 1_790_000_000)
            ),
            Article(id: 2, title: "Testing in parallel", published: Date(timeIntervalSince1970: 1_795_000_000)),
        ]
    }

    /// Built-in comments.
    public func comments(on id: Article.ID) async throws -> [String] {
        try await respond()
        return ["Comment \(requests) on article \(id)"]
    }

    private func respond() async throws {
        requests += 1
        try await clock.sleep(for: .milliseconds(150))
    }
}

// MARK: - The clock

/// The app's clock: the time, and waiting.
public protocol AppClock: Sendable {
    /// The current time.
    var now: Date { get }
    /// Waits for `duration`, or throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The system's clock.
public struct SystemClock: AppClock {
    /// The system clock.
    public init() {}
    /// The current time.
    public var now: Date { Date() }
    /// Waits for `duration`.
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

/// A clock stopped at one time, whose waits return at once: what tests and previews run on.
public struct FixedClock: AppClock {
    /// The time the clock shows.
    public let now: Date

    /// A clock stopped at `now`.
    public init(now: Date) {
        self.now = now
    }

    /// Returns at once, unless the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
    }
}

// MARK: - Favorites

/// Where the reader's favorites are kept.
public protocol FavoritesStore: Sendable {
    /// Every saved favorite, oldest first.
    func all() async throws -> [Favorite]
    /// Saves `favorite`, replacing any favorite of the same article.
    func save(_ favorite: Favorite) async throws
    /// Removes the favorite of the article `id`, if there is one.
    func remove(id: Article.ID) async throws
}

/// The live store: one JSON file per favorite, in a directory of the app's.
public actor FileFavoritesStore: FavoritesStore {
    /// The directory the files are in, created on the first save.
    public let directory: URL

    /// A store that keeps its files in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// Every saved favorite, oldest first; none when the directory does not exist yet.
    public func all() throws -> [Favorite] {
        guard FileManager.default.fileExists(atPath: directory.path) else { return [] }
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        let decoder = JSONDecoder()
        return try files.filter { $0.pathExtension == "json" }
            .map { try decoder.decode(Favorite.self, from: Data(contentsOf: $0)) }
            .sorted { ($0.savedAt, $0.article.id) < ($1.savedAt, $1.article.id) }
    }

    /// Writes `favorite` to its file.
    public func save(_ favorite: Favorite) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try JSONEncoder().encode(favorite).write(to: file(of: favorite.article.id), options: .atomic)
    }

    /// Deletes the favorite's file.
    public func remove(id: Article.ID) throws {
        let file = file(of: id)
        if FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.removeItem(at: file)
        }
    }

    private func file(of id: Article.ID) -> URL {
        directory.appendingPathComponent("\(id).json")
    }
}

/// A store that keeps favorites in memory, for tests and previews.
public actor InMemoryFavoritesStore: FavoritesStore {
    private var favorites: [Article.ID: Favorite] = [:]

    /// An empty store.
    public init() {}

    /// Every saved favorite, oldest first.
    public func all() -> [Favorite] {
        favorites.values.sorted { ($0.savedAt, $0.article.id) < ($1.savedAt, $1.article.id) }
    }

    /// Keeps `favorite`.
    public func save(_ favorite: Favorite) {
        favorites[favorite.article.id] = favorite
    }

    /// Forgets the favorite of the article `id`.
    public func remove(id: Article.ID) {
        favorites[id] = nil
    }
}

// MARK: - Dates

/// How the app shows a date: the implementation is chosen at launch, and the settings screen switches it.
public protocol DateStyle: Sendable {
    /// `date`, as the reader sees it at `now`.
    func string(for date: Date, now: Date) -> String
}

/// Dates as days: `2026-09-21`.
public struct AbsoluteDateStyle: DateStyle {
    /// The absolute style.
    public init() {}
    /// The date's day, in UTC.
    public func string(for date: Date, now: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }
}

/// Dates as ages: `today`, `1 day ago`, `12 days ago`.
public struct RelativeDateStyle: DateStyle {
    /// The relative style.
    public init() {}
    /// How many whole days before `now` the date is.
    public func string(for date: Date, now: Date) -> String {
        let days = Int(now.timeIntervalSince(date) / 86_400)
        switch days {
        case ...0: return "today"
        case 1: return "1 day ago"
        default: return "\(days) days ago"
        }
    }
}

// MARK: - Thumbnails, a callback-style API

/// Loads thumbnails and calls back on a queue of its own, as many older SDKs do.
public protocol ThumbnailLoader: Sendable {
    /// Loads the thumbnail of `article`, then calls `completion` on the loader's queue with the image's name.
    func loadThumbnail(for article: Article, completion: @escaping @Sendable (String) -> Void)
}

/// Renders a thumbnail on a background queue. (This example draws nothing: it names the image it would draw.)
public struct RenderingThumbnailLoader: ThumbnailLoader {
    private let queue: DispatchQueue

    /// A loader that calls back on `queue`.
    public init(queue: DispatchQueue = DispatchQueue(label: "thumbnails")) {
        self.queue = queue
    }

    /// Calls back on the loader's queue.
    public func loadThumbnail(for article: Article, completion: @escaping @Sendable (String) -> Void) {
        queue.async { completion("thumbnail-\(article.id).png") }
    }
}
