import Foundation
import Injected
import InjectedTesting
import NotesServer
import PostgresNIO
import Testing

/// A 201 survives a crash of PostgreSQL: db.sh's throw-away cluster waits for each commit's WAL to be written.
@Suite(
    "A 201 is durable",
    .enabled(if: TestDatabase.url != nil, "NOTES_TEST_DATABASE_URL names no database; run bash db.sh start"),
    .injectedValues(strict: true) { $0.clock = FixedClock(.referenceInstant) }
)
struct DurabilityTests {
    @Test func theThrowAwayClusterCommitsSynchronously() async throws {
        let cluster = try ThrowAwayCluster(port: ThrowAwayCluster.freePort())
        try await cluster.whileItExists { url in
            try await TestDatabase.withRoutes(configuration: try DatabaseConfiguration(url: url)) { _, database in
                let setting = try await database.withConnection { connection in
                    let rows = try await connection.query("SHOW synchronous_commit", logger: Logger(label: "test"))
                    var value = ""
                    for try await row in rows.decode(String.self) { value = row }
                    return value
                }
                #expect(setting == "on", "a note answered 201 could be lost when a backend crashes")
            }
        }
    }
}
