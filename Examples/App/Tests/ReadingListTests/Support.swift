import Dispatch
import Foundation
import InjectedTesting
import ReadingList

/// Two articles, a day apart.
let sampleArticles = [
    Article(id: 1, title: "First", published: Date(timeIntervalSince1970: 1_799_913_600)),
    Article(id: 2, title: "Second", published: Date(timeIntervalSince1970: 1_800_000_000)),
]

/// An API client that answers with what the test gives it.
struct MockAPI: ArticlesAPI {
    var articles: [Article] = sampleArticles
    var comments: [String] = ["a mocked comment"]

    func articles() async throws -> [Article] { articles }
    func comments(on id: Article.ID) async throws -> [String] { comments }
}

/// An API client whose server is down.
struct FailingAPI: ArticlesAPI {
    struct Unreachable: Error {}
    func articles() async throws -> [Article] { throw Unreachable() }
    func comments(on id: Article.ID) async throws -> [String] { throw Unreachable() }
}

/// An API client that answers only after an hour, unless the task is cancelled first.
struct SlowAPI: ArticlesAPI {
    func articles() async throws -> [Article] {
        try await Task.sleep(for: .seconds(3_600))
        return sampleArticles
    }

    func comments(on id: Article.ID) async throws -> [String] {
        try await Task.sleep(for: .seconds(3_600))
        return []
    }
}

/// Makes a temporary directory for `body`, and removes it afterwards, also when `body` throws.
func withTemporaryDirectory<R>(_ body: (URL) async throws -> R) async throws -> R {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ReadingListTests-\(UUID())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try await body(directory)
}

/// The app's clock, run by a test clock: its time starts at `start`, and it moves, and waits end, only when the test
/// advances `clock`.
struct TestAppClock: AppClock {
    let clock: TestClock
    var start = testNow

    var now: Date { start.addingTimeInterval(clock.now.offset / .seconds(1)) }

    func sleep(for duration: Duration) async throws {
        try await clock.sleep(for: duration)
    }
}
