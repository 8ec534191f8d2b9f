import Foundation
import ReadingList
import Testing

@Suite("The live favorites store")
struct FileFavoritesStoreTests {
    @Test("favorites saved as JSON files are read back by a new store, and removed")
    func savesReadsAndRemoves() async throws {
        try await withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("Favorites")
            let store = FileFavoritesStore(directory: directory)
            #expect(try await store.all().isEmpty)
            let first = Favorite(article: sampleArticles[0], savedAt: Date(timeIntervalSince1970: 10))
            let second = Favorite(article: sampleArticles[1], savedAt: Date(timeIntervalSince1970: 20))
            try await store.save(second)
            try await store.save(first)

            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
            #expect(files == ["1.json", "2.json"])
            let decoded = try JSONDecoder().decode(
                Favorite.self,
                from: Data(contentsOf: directory.appendingPathComponent("1.json"))
            )
            #expect(decoded == first)

            let reopened = FileFavoritesStore(directory: directory)
            #expect(try await reopened.all() == [first, second])
            try await reopened.remove(id: 1)
            try await reopened.remove(id: 99)
            #expect(try await store.all() == [second])
        }
    }

    @Test("a store whose directory cannot be made fails to save, with the file system's error")
    func unwritableDirectory() async throws {
        let store = FileFavoritesStore(directory: URL(fileURLWithPath: "/dev/null/ReadingList"))
        await #expect(throws: (any Error).self) {
            try await store.save(Favorite(article: sampleArticles[0], savedAt: Date()))
        }
        #expect(try await store.all().isEmpty)
    }
}
