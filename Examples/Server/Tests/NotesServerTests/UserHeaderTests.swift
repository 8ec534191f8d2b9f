import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import NotesServer
import Testing

/// A user is exactly one user: one `X-User` header, in UTF-8, compared in one normalization by both stores.
@Suite(
    .injectedValues {
        $0.notesStore = InMemoryNotesStore()
        $0.clock = FixedClock(.referenceInstant)
    }
)
struct UserHeaderTests {
    @Test(arguments: [[0x61, 0xFF], [0x61, 0xFE], Array("a\u{FFFD}".utf8)] as [[UInt8]])
    func aUserNameThatIsNotUTF8IsRefusedWith400(name: [UInt8]) async throws {
        try await NotesApplication.make().test(.router) { client in
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: HTTPFields([
                    HTTPField(name: .user, value: name), HTTPField(name: .contentType, value: "application/json"),
                ]),
                body: ByteBuffer(string: #"{"text": "Whose?"}"#)
            )
            #expect(response.status == .badRequest)
            #expect(try errorMessage(of: response).contains("not valid UTF-8"))
        }
        #expect(try await InjectedValues[\.notesStore].count() == 0)
    }

    @Test func twoUserHeadersAreRefusedWith400InsteadOfJoinedIntoOneUser() async throws {
        try await NotesApplication.make().test(.router) { client in
            let headers = HTTPFields([HTTPField(name: .user, value: "alice"), HTTPField(name: .user, value: "bob")])
            let response = try await client.execute(uri: "/whoami", method: .get, headers: headers)
            #expect(response.status == .badRequest)
            #expect(try errorMessage(of: response).contains("appears more than once"))
        }
    }

    @Test func theNFCAndNFDSpellingsOfANameAreOneUserSpelledInNFC() async throws {
        let nfd = "Zoe\u{0308}"  // "e" and a combining diaeresis
        let nfc = "Zo\u{00EB}"
        try await NotesApplication.make().test(.router) { client in
            let created = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.user: nfd, .contentType: "application/json"],
                body: ByteBuffer(string: #"{"text": "Mine"}"#)
            )
            #expect(created.status == .created)
            let listed = try await client.execute(uri: "/notes", method: .get, headers: [.user: nfc])
            #expect(try decode([Note].self, from: listed).map(\.text) == ["Mine"])

            let whoAmI = try await client.execute(uri: "/whoami", method: .get, headers: [.user: nfd])
            // Swift's == takes canonically equivalent strings as equal: compare the bytes.
            #expect(Array(try decode(WhoAmI.self, from: whoAmI).user.utf8) == Array(nfc.utf8))
        }
        let entries = try await InjectedValues[\.auditLog].entries()
        #expect(entries.map { Array(($0.user ?? "").utf8) } == [Array(nfc.utf8)])
    }

    @Test func namesThatDifferOnlyInBytesThatAreNotUTF8AreRefusedOverHTTP() async throws {
        // Through NIO's HTTP/1 parser, which reads both names as "a" and U+FFFD.
        let app = NotesApplication.make(configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            let port = try #require(client.port)
            for byte: UInt8 in [0xFF, 0xFE] {
                let request =
                    Array("GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: a".utf8) + [byte]
                    + Array("\r\nConnection: close\r\n\r\n".utf8)
                let exchange = await RawHTTPClient.exchange(port: port, writing: request, wait: .seconds(5))
                #expect(exchange.status == 400, "\(exchange.received)")
            }
        }
    }
}

/// The same on PostgreSQL, which compares names byte by byte.
@Suite(
    "A user on PostgreSQL",
    .enabled(if: TestDatabase.url != nil, "NOTES_TEST_DATABASE_URL names no database; run bash db.sh start"),
    .injectedValues(strict: true) { $0.clock = FixedClock(.referenceInstant) }
)
struct PostgresUserNameTests {
    @Test func theNFCAndNFDSpellingsOfANameAreOneUser() async throws {
        try await TestDatabase.withRoutes { client, _ in
            let created = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.user: "Zoe\u{0308}", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"text": "Mine"}"#)
            )
            #expect(created.status == .created)
            let listed = try await client.execute(uri: "/notes", method: .get, headers: [.user: "Zo\u{00EB}"])
            #expect(try decode([Note].self, from: listed).map(\.text) == ["Mine"])
            // The store itself, called with either spelling, finds the one user.
            #expect(try await PostgresNotesStore().notes(of: "Zoe\u{0308}").map(\.text) == ["Mine"])
            let owners = try await PostgresAuditLog().entries().map { Array(($0.user ?? "").utf8) }
            #expect(owners == [Array("Zo\u{00EB}".utf8)])
        }
    }
}
