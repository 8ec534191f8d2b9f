import Foundation
import Injected

// Every dependency of the app: a key that gives its live default, and the accessor that code reads and tests
// override. The keys are private; only the accessors are seen elsewhere.

private enum ArticlesAPIKey: ReadOnlyInjectionKey {
    // No test value: each test says what the feed returns.
    static var currentValue: any ArticlesAPI { LiveArticlesAPI(clock: InjectedValues[\.clock]) }
}

private enum ClockKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: any AppClock { SystemClock() }
    // Tests run at one fixed time, and their waits return at once.
    static var testValue: any AppClock { FixedClock(now: Date(timeIntervalSince1970: 1_800_000_000)) }
}

private enum FavoritesStoreKey: ReadOnlyInjectionKey {
    // No test value, on purpose: each suite chooses its store, and a strict test that forgets is reported.
    static var currentValue: any FavoritesStore {
        FileFavoritesStore(directory: InjectedValues[\.appDirectory].appendingPathComponent("Favorites"))
    }
}

private enum AppDirectoryKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: URL {
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
        return support.appendingPathComponent("ReadingList")
    }

    // In tests, a directory that cannot exist, since `/dev/null` is a file: a test that reaches the live store
    // reads no favorites and can write none, and never touches the reader's own.
    static var testValue: URL { URL(fileURLWithPath: "/dev/null/ReadingList") }
}

private enum DateStyleKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: any DateStyle { AbsoluteDateStyle() }
    static var testValue: any DateStyle { AbsoluteDateStyle() }
}

private enum ThumbnailLoaderKey: ReadOnlyInjectionKey {
    static var currentValue: any ThumbnailLoader { RenderingThumbnailLoader() }
}

extension InjectedValues {
    /// The reading list's server.
    public var articlesAPI: any ArticlesAPI {
        get { Self[ArticlesAPIKey.self] }
        set { Self[ArticlesAPIKey.self] = newValue }
    }

    /// The app's clock.
    public var clock: any AppClock {
        get { Self[ClockKey.self] }
        set { Self[ClockKey.self] = newValue }
    }

    /// Where favorites are kept.
    public var favorites: any FavoritesStore {
        get { Self[FavoritesStoreKey.self] }
        set { Self[FavoritesStoreKey.self] = newValue }
    }

    /// The directory the app keeps its files in.
    public var appDirectory: URL {
        get { Self[AppDirectoryKey.self] }
        set { Self[AppDirectoryKey.self] = newValue }
    }

    /// How dates are shown.
    public var dateStyle: any DateStyle {
        get { Self[DateStyleKey.self] }
        set { Self[DateStyleKey.self] = newValue }
    }

    /// The thumbnail loader, a callback-style API.
    public var thumbnails: any ThumbnailLoader {
        get { Self[ThumbnailLoaderKey.self] }
        set { Self[ThumbnailLoaderKey.self] = newValue }
    }
}

/// What the app does first, before any screen reads a dependency.
public enum AppLaunch {
    /// Chooses the implementations the environment asks for, for the whole app.
    ///
    /// A write made outside every scope is every reader's value. `READING_LIST_DATE_STYLE=relative` shows dates as
    /// ages; `READING_LIST_DIRECTORY` moves the app's files.
    public static func configure(environment: [String: String]) {
        if environment["READING_LIST_DATE_STYLE"] == "relative" {
            InjectedValues[\.dateStyle] = RelativeDateStyle()
        }
        if let directory = environment["READING_LIST_DIRECTORY"] {
            InjectedValues[\.appDirectory] = URL(fileURLWithPath: directory)
        }
    }
}
