import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import NotesServer
import Testing

/// Bad input gets the answer HTTP has for it: 415 for a body that is not JSON, 413 for one over the limit (without
/// reading it to its end), `HEAD` as `GET`, and the request's id on every answer.
@Suite(
    .injectedValues {
        $0.notesStore = InMemoryNotesStore()
        $0.clock = FixedClock(.referenceInstant)
    }
)
struct BadInputTests {
    @Test(arguments: ["text/plain", "image/png", "application/x-www-form-urlencoded", nil] as [String?])
    func aBodyNotSentAsJSONIsRefusedWith415AndNotStored(contentType: String?) async throws {
        try await NotesApplication.make().test(.router) { client in
            var headers: HTTPFields = [.user: "alice"]
            headers[.contentType] = contentType
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: headers,
                body: ByteBuffer(string: #"{"text": "Looks like JSON"}"#)
            )
            #expect(response.status == .unsupportedMediaType)
            #expect(try errorMessage(of: response).contains("Content-Type: application/json"))
        }
        #expect(try await InjectedValues[\.notesStore].count() == 0)
    }

    @Test func aJSONContentTypeWithACharsetIsAccepted() async throws {
        try await NotesApplication.make().test(.router) { client in
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.user: "alice", .contentType: "Application/JSON; charset=utf-8"],
                body: ByteBuffer(string: #"{"text": "Fine"}"#)
            )
            #expect(response.status == .created)
        }
    }

    @Test func aBodyOverTheLimitIsRefusedWith413ClosingTheConnection() async throws {
        try await NotesApplication.make().test(.router) { client in
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.user: "alice", .contentType: "application/json", .requestID: "too-large"],
                body: ByteBuffer(repeating: UInt8(ascii: "x"), count: 65 * 1_024)
            )
            #expect(response.status == .contentTooLarge)
            #expect(response.headers[.connection] == "close")
            #expect(response.headers[.requestID] == "too-large")
        }
        #expect(try await InjectedValues[\.notesStore].count() == 0)
    }

    @Test func aClientThatWritesTenMegabytesBeforeReadingGetsA413() async throws {
        try await withLiveServer { port in
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: 10_000_000)
            let exchange = await RawHTTPClient.exchange(
                port: port,
                writing: Self.post(contentLength: body.count) + body,
                wait: .seconds(10)
            )
            #expect(exchange.status == 413, "\(exchange.received.prefix(200))")
            #expect(exchange.header("X-Request-ID") != nil)
        }
    }

    @Test func aBodyDeclaredOverTheLimitIsAnsweredAndItsConnectionClosedWithoutWaitingForItsEnd() async throws {
        try await withLiveServer { port in
            // A gigabyte declared, 64 KiB sent, and then nothing: the server must neither wait for the rest nor read it.
            let exchange = await RawHTTPClient.exchange(
                port: port,
                writing: Self.post(contentLength: 1_000_000_000) + [UInt8](repeating: 0x78, count: 65_536),
                wait: .seconds(10)
            )
            #expect(exchange.status == 413, "\(exchange.received.prefix(200))")
            #expect(exchange.closedByServer, "the connection was still open after \(exchange.elapsed)")
            #expect(exchange.elapsed < .seconds(5))
        }
    }

    @Test func aChunkedBodyThatPassesTheLimitIsAnsweredAndItsConnectionClosedWithoutWaitingForItsEnd() async throws {
        try await withLiveServer { port in
            var request = Array(
                """
                POST /notes HTTP/1.1\r
                Host: localhost\r
                X-User: alice\r
                Content-Type: application/json\r
                Transfer-Encoding: chunked\r
                \r

                """.utf8
            )
            for _ in 0..<20 { request += Array("1000\r\n".utf8) + [UInt8](repeating: 0x78, count: 4_096) + [13, 10] }
            let exchange = await RawHTTPClient.exchange(port: port, writing: request, wait: .seconds(10))
            #expect(exchange.status == 413, "\(exchange.received.prefix(200))")
            #expect(exchange.closedByServer, "the connection was still open after \(exchange.elapsed)")
            #expect(exchange.elapsed < .seconds(5))
        }
    }

    @Test func headNotesAnswersAsGetNotesDoesWithoutTheBody() async throws {
        try await NotesApplication.make().test(.router) { client in
            _ = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.user: "alice", .contentType: "application/json"],
                body: ByteBuffer(string: #"{"text": "Buy milk"}"#)
            )
            let get = try await client.execute(uri: "/notes", method: .get, headers: [.user: "alice"])
            let head = try await client.execute(uri: "/notes", method: .head, headers: [.user: "alice"])
            #expect(head.status == .ok)
            #expect(head.headers[.contentLength] == get.headers[.contentLength])
            #expect(head.body.readableBytes == 0)
            let anonymous = try await client.execute(uri: "/notes", method: .head)
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test(
        arguments: [
            ("/whoami", HTTPRequest.Method.get, [:]),
            ("/notes", .get, [.user: "a", .user: "b"]),
            ("/notes", .post, [.user: "alice", .contentType: "text/plain"]),
            ("/notes", .post, [.user: "alice", .contentType: "application/json"]),
        ] as [(String, HTTPRequest.Method, HTTPFields)]
    )
    func everyRefusalCarriesTheRequestsID(path: String, method: HTTPRequest.Method, headers: HTTPFields) async throws {
        try await NotesApplication.make().test(.router) { client in
            var headers = headers
            headers[.requestID] = "refused-1"
            let response = try await client.execute(uri: path, method: method, headers: headers, body: ByteBuffer())
            #expect((400..<500).contains(response.status.code))
            #expect(response.headers[.requestID] == "refused-1", "\(response.status)")

            headers[.requestID] = nil
            let unnamed = try await client.execute(uri: path, method: method, headers: headers, body: ByteBuffer())
            #expect(unnamed.headers[.requestID]?.isEmpty == false, "\(unnamed.status) has no made-up id")
        }
    }

    /// The head of a `POST /notes` that declares `contentLength` bytes of JSON.
    private static func post(contentLength: Int) -> [UInt8] {
        Array(
            """
            POST /notes HTTP/1.1\r
            Host: localhost\r
            X-User: alice\r
            Content-Type: application/json\r
            Content-Length: \(contentLength)\r
            \r

            """.utf8
        )
    }
}

/// Runs `body` with the port of the notes server, served over HTTP on 127.0.0.1.
func withLiveServer(_ body: @Sendable (Int) async throws -> Void) async throws {
    let app = NotesApplication.make(configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    try await app.test(.live) { client in
        try await body(try #require(client.port))
    }
}
