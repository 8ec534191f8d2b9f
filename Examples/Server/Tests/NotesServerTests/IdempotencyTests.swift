import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import Logging
import NotesServer
import PostgresNIO
import Synchronization
import Testing

/// Retries are safe: a post with an `Idempotency-Key` is stored at most once per user and key, however often it is
/// sent, and every retry is answered as the first post was.
@Suite(
    .injectedValues {
        $0.notesStore = InMemoryNotesStore()
        $0.clock = FixedClock(.referenceInstant)
    }
)
struct IdempotencyTests {
    @Test func aPostRetriedWithItsKeyIsStoredOnceAndTheRetryGetsTheFirstAnswer() async throws {
        try await NotesApplication.make().test(.router) { client in
            let first = try await postNote("Buy milk", key: "retry-1", as: "alice", to: client)
            let retry = try await postNote("Buy milk", key: "retry-1", as: "alice", to: client)
            #expect(first.status == .created)
            #expect(first.headers[.idempotentReplayed] == nil)
            #expect(retry.status == .created)
            #expect(retry.headers[.idempotentReplayed] == "true")
            #expect(try decode(Note.self, from: retry) == (try decode(Note.self, from: first)))
        }
        #expect(try await InjectedValues[\.notesStore].count() == 1)
        #expect(try await InjectedValues[\.auditLog].entries().count == 1)
    }

    @Test(.injecting(\.auditLog, SuspendingAuditLog()))
    func postsWithTheSameKeySentAtOnceStoreOneNote() async throws {
        // The audit log suspends for a moment, letting the store's actor take the other posts in meanwhile.
        let notes = try await NotesApplication.make().test(.router) { client in
            try await withThrowingTaskGroup(of: (Note, Bool).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await postNote("Once", key: "at-once", as: "alice", to: client)
                        #expect(response.status == .created)
                        return (try decode(Note.self, from: response), response.headers[.idempotentReplayed] == "true")
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        #expect(Set(notes.map(\.0.id)).count == 1)
        #expect(notes.filter { !$0.1 }.count == 1, "exactly one answer stored the note")
        #expect(try await InjectedValues[\.notesStore].count() == 1)
    }

    @Test func aKeyReusedWithAnotherTextIsRefusedWith422AndStoresNothing() async throws {
        try await NotesApplication.make().test(.router) { client in
            #expect(try await postNote("Buy milk", key: "reused", as: "alice", to: client).status == .created)
            let reused = try await postNote("Buy bread", key: "reused", as: "alice", to: client)
            #expect(reused.status == .unprocessableContent)
            #expect(reused.headers[.requestID]?.isEmpty == false)
            #expect(try errorMessage(of: reused).contains("already used for a note with another text"))
        }
        #expect(try await InjectedValues[\.notesStore].notes(of: "alice").map(\.text) == ["Buy milk"])
    }

    @Test func eachUserHasKeysOfTheirOwn() async throws {
        try await NotesApplication.make().test(.router) { client in
            let alices = try await postNote("Same key", key: "shared", as: "alice", to: client)
            let bobs = try await postNote("Same key", key: "shared", as: "bob", to: client)
            #expect(bobs.headers[.idempotentReplayed] == nil)
            #expect(try decode(Note.self, from: alices).id != (try decode(Note.self, from: bobs).id))
        }
        #expect(try await InjectedValues[\.notesStore].count() == 2)
    }

    @Test(arguments: [
        HTTPFields([HTTPField(name: .idempotencyKey, value: String(repeating: "k", count: 129))]),
        HTTPFields([HTTPField(name: .idempotencyKey, value: "")]),
        HTTPFields([HTTPField(name: .idempotencyKey, value: "clé")]),
        HTTPFields([HTTPField(name: .idempotencyKey, value: "two words")]),
        HTTPFields([HTTPField(name: .idempotencyKey, value: "a"), HTTPField(name: .idempotencyKey, value: "b")]),
    ])
    func aKeyThatIsTooLongEmptyNotVisibleASCIIOrRepeatedIsRefusedWith400(keyFields: HTTPFields) async throws {
        try await NotesApplication.make().test(.router) { client in
            var headers: HTTPFields = [.user: "alice", .contentType: "application/json"]
            headers.append(contentsOf: keyFields)
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: headers,
                body: ByteBuffer(string: #"{"text": "Keyed"}"#)
            )
            #expect(response.status == .badRequest)
            #expect(try errorMessage(of: response).contains("Idempotency-Key"))
        }
        #expect(try await InjectedValues[\.notesStore].count() == 0)
    }

    @Test func aKeyOf128VisibleCharactersIsAccepted() async throws {
        try await NotesApplication.make().test(.router) { client in
            let key = String(repeating: "~", count: 128)
            let response = try await postNote("Long key", key: key, as: "alice", to: client)
            #expect(response.status == .created)
        }
    }

    @Test(.injecting(\.auditLog, FailingOnceAuditLog()))
    func aPostWhoseFirstTryFailedIsStoredByItsRetry() async throws {
        try await NotesApplication.make().test(.router) { client in
            let first = try await postNote("Try again", key: "failed-1", as: "alice", to: client)
            #expect(first.status == .internalServerError)
            let retry = try await postNote("Try again", key: "failed-1", as: "alice", to: client)
            #expect(retry.status == .created)
            #expect(
                retry.headers[.idempotentReplayed] == nil,
                "the first try stored nothing, so there is nothing to replay"
            )
        }
        #expect(try await InjectedValues[\.notesStore].count() == 1)
    }
}

/// The same on PostgreSQL, where a unique index on the user and the key holds it, also across servers.
@Suite(
    "Idempotent posts on PostgreSQL",
    .enabled(if: TestDatabase.url != nil, "NOTES_TEST_DATABASE_URL names no database; run bash db.sh start"),
    .injectedValues(strict: true) { $0.clock = FixedClock(.referenceInstant) }
)
struct PostgresIdempotencyTests {
    @Test func aPostRetriedWithItsKeyIsStoredOnceWithOneAuditEntry() async throws {
        try await TestDatabase.withRoutes { client, _ in
            let first = try await postNote("Buy milk", key: "pg-retry", as: "alice", to: client)
            let retry = try await postNote("Buy milk", key: "pg-retry", as: "alice", to: client)
            #expect(first.status == .created)
            #expect(retry.status == .created)
            #expect(retry.headers[.idempotentReplayed] == "true")
            #expect(try decode(Note.self, from: retry) == (try decode(Note.self, from: first)))
            #expect(try await PostgresNotesStore().count() == 1)
            #expect(try await PostgresAuditLog().entries().count == 1)
        }
    }

    @Test func postsWithTheSameKeySentAtOnceStoreOneNote() async throws {
        try await TestDatabase.withRoutes { client, _ in
            let answers = try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let response = try await postNote("Once", key: "pg-at-once", as: "alice", to: client)
                        #expect(response.status == .created)
                        let replayed = response.headers[.idempotentReplayed] == "true"
                        return (try decode(Note.self, from: response).id, replayed)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(answers.map(\.0)).count == 1)
            #expect(answers.filter { !$0.1 }.count == 1, "exactly one answer stored the note")
            #expect(try await PostgresNotesStore().count() == 1)
            #expect(try await PostgresAuditLog().entries().count == 1)
        }
    }

    @Test func aKeyReusedWithAnotherTextIsRefusedWith422AndStoresNothing() async throws {
        try await TestDatabase.withRoutes { client, _ in
            #expect(try await postNote("Buy milk", key: "pg-reused", as: "alice", to: client).status == .created)
            let reused = try await postNote("Buy bread", key: "pg-reused", as: "alice", to: client)
            #expect(reused.status == .unprocessableContent)
            #expect(try await PostgresNotesStore().notes(of: "alice").map(\.text) == ["Buy milk"])
            #expect(try await PostgresAuditLog().entries().count == 1)
        }
    }

    @Test func theDatabaseItselfRefusesASecondNoteWithAUsersKey() async throws {
        try await TestDatabase.withRoutes { _, database in
            let schema = database.configuration.schema
            let insert: PostgresQuery = """
                INSERT INTO \(unescaped: schema).notes (owner, text, created_at, idempotency_key)
                VALUES ('alice', 'direct', now(), 'pg-direct')
                """
            _ = try await database.withConnection { try await $0.query(insert, logger: Logger(label: "test")) }
            let error = await #expect(throws: PSQLError.self) {
                _ = try await database.withConnection { try await $0.query(insert, logger: Logger(label: "test")) }
            }
            #expect(error?.serverInfo?[.sqlState] == "23505", "a unique violation")
        }
    }
}

/// Posts `text` as `user`, with the idempotency key `key`.
private func postNote(
    _ text: String,
    key: String,
    as user: String,
    to client: any TestClientProtocol
) async throws -> TestResponse {
    try await client.execute(
        uri: "/notes",
        method: .post,
        headers: [.user: user, .contentType: "application/json", .idempotencyKey: key],
        body: ByteBuffer(string: #"{"text": "\#(text)"}"#)
    )
}

/// An in-memory audit log that suspends before it records, as a database's would.
private struct SuspendingAuditLog: AuditLog {
    let log = InMemoryAuditLog()

    func record(_ action: String) async throws {
        try await Task.sleep(for: .milliseconds(20))
        log.record(action)
    }

    func entries() async throws -> [AuditEntry] { log.entries() }
}

/// An in-memory audit log whose first record fails, failing its post.
private final class FailingOnceAuditLog: AuditLog {
    struct Failure: Error {}

    let log = InMemoryAuditLog()
    private let failed = Atomic<Bool>(false)

    func record(_ action: String) async throws {
        if !failed.exchange(true, ordering: .relaxed) { throw Failure() }
        log.record(action)
    }

    func entries() async throws -> [AuditEntry] { log.entries() }
}
