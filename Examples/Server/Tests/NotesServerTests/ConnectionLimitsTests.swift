import Foundation
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import NotesServer
import Testing

/// A hostile client holds a connection for a bounded time: a head that does not all arrive is closed after the header
/// timeout, however slowly its bytes keep coming, and a connection with no request after the idle timeout.
///
/// Clients hold a bounded number of connections: beyond the cap, a connection is answered 503 and closed at once.
@Suite(
    .injectedValues {
        $0.notesStore = InMemoryNotesStore()
        $0.clock = FixedClock(.referenceInstant)
    }
)
struct ConnectionLimitsTests {
    @Test func aHalfSentHeadIsClosedAfterTheHeaderTimeoutWithoutWaitingForTheIdleTimeout() async throws {
        let limits = ConnectionLimits(headerTimeout: .milliseconds(500), idleTimeout: .seconds(20))
        try await withLimitedServer(limits) { port in
            let exchange = await RawHTTPClient.exchange(
                port: port,
                writing: Array("GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: alice\r\n".utf8),
                wait: .seconds(10)
            )
            #expect(exchange.closedByServer, "still open after \(exchange.elapsed)")
            #expect(exchange.elapsed < .seconds(4))
            #expect(exchange.status == nil, "\(exchange.received.prefix(200))")
        }
    }

    @Test func aHeadTrickledAByteAtATimeIsClosedAfterTheHeaderTimeoutThoughBytesKeepComing() async throws {
        let limits = ConnectionLimits(headerTimeout: .seconds(1), idleTimeout: .seconds(20))
        try await withLimitedServer(limits) { port in
            // 300 bytes at one every 50 ms: 15 s if nothing stops it, each byte well within any idle timeout.
            let head = "GET /whoami HTTP/1.1\r\nX-User: alice\r\n" + String(repeating: "X-Pad: slow\r\n", count: 20)
            let exchange = await RawHTTPClient.exchange(
                port: port,
                writing: Array(head.utf8),
                pause: .milliseconds(50),
                wait: .seconds(15)
            )
            #expect(exchange.closedByServer, "still open after \(exchange.elapsed)")
            #expect(exchange.elapsed < .seconds(5))
        }
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeoutNotTheHeaderTimeout() async throws {
        let limits = ConnectionLimits(headerTimeout: .milliseconds(300), idleTimeout: .milliseconds(1_500))
        try await withLimitedServer(limits) { port in
            let exchange = await RawHTTPClient.exchange(
                port: port,
                writing: Array("GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: alice\r\n\r\n".utf8),
                wait: .seconds(10)
            )
            #expect(exchange.status == 200, "\(exchange.received.prefix(200))")
            #expect(exchange.closedByServer, "still open after \(exchange.elapsed)")
            #expect(exchange.elapsed > .milliseconds(1_200), "closed before the idle timeout")
            #expect(exchange.elapsed < .seconds(5))
        }
    }

    @Test func aConnectionBeyondTheCapIsClosedAtOnceAndTheNextIsServedOnceAHeldOneCloses() async throws {
        let limits = ConnectionLimits(headerTimeout: .seconds(5), idleTimeout: .seconds(20), maximumConnections: 3)
        let app = NotesApplication.make(configuration: .init(address: .hostname("127.0.0.1", port: 0)), limits: limits)
        try await app.test(.live) { client in
            // The test client opens a keep-alive connection of its own as the server starts: once it is answered, it
            // holds one of the 3 places, and the raw connections below have 2.
            let warmUp = try await client.execute(uri: "/whoami", method: .get, headers: [.user: "carol"])
            #expect(warmUp.status == .ok)
            let port = try #require(client.port)
            let request = Array("GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: alice\r\n\r\n".utf8)
            // Two keep-alive connections, held open until their client closes them: the first after 2 s, the second
            // after 6 s.
            async let first = RawHTTPClient.exchange(port: port, writing: request, wait: .seconds(2))
            async let second = RawHTTPClient.exchange(port: port, writing: request, wait: .seconds(6))
            try await Task.sleep(for: .milliseconds(500))

            let third = await RawHTTPClient.exchange(port: port, writing: request, wait: .seconds(5))
            #expect(third.closedByServer, "still open after \(third.elapsed)")
            #expect(third.elapsed < .seconds(2))
            #expect(third.status == 503, "\(third.received.prefix(200))")
            #expect(third.header("Connection") == "close")

            let held = await first
            #expect(held.status == 200, "\(held.received.prefix(200))")
            #expect(!held.closedByServer, "the server closed a connection within the cap")
            try await Task.sleep(for: .milliseconds(300))

            // One place is free again, the second connection still open: a new connection is served.
            let closing = Array(
                "GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: bob\r\nConnection: close\r\n\r\n".utf8
            )
            let fourth = await RawHTTPClient.exchange(port: port, writing: closing, wait: .seconds(3))
            #expect(fourth.status == 200, "\(fourth.received.prefix(200))")
            #expect(fourth.received.contains(#""user":"bob""#), "\(fourth.received.prefix(300))")

            let stillHeld = await second
            #expect(stillHeld.status == 200, "\(stillHeld.received.prefix(200))")
            #expect(!stillHeld.closedByServer, "the server closed a connection within the cap")
        }
    }

    @Test func timeoutsAndTheCapAreReadFromTheirEnvironmentVariablesOnlyWhenValid() {
        #expect(ConnectionLimits.timeout(seconds: "2.5") == .milliseconds(2_500))
        #expect(ConnectionLimits.timeout(seconds: " 30 ") == .seconds(30))
        #expect(ConnectionLimits.timeout(seconds: "0") == nil)
        #expect(ConnectionLimits.timeout(seconds: "-1") == nil)
        #expect(ConnectionLimits.timeout(seconds: "inf") == nil)
        #expect(ConnectionLimits.timeout(seconds: "soon") == nil)
        #expect(ConnectionLimits.maximumConnections("2048") == 2_048)
        #expect(ConnectionLimits.maximumConnections("0") == nil)
        #expect(ConnectionLimits.maximumConnections("1.5") == nil)
        #expect(ConnectionLimits().maximumConnections == 1_024)
    }
}

/// Runs `body` with the port of the notes server, served over HTTP on 127.0.0.1 with `limits`.
private func withLimitedServer(_ limits: ConnectionLimits, _ body: @Sendable (Int) async throws -> Void) async throws {
    let app = NotesApplication.make(configuration: .init(address: .hostname("127.0.0.1", port: 0)), limits: limits)
    try await app.test(.live) { client in
        try await body(try #require(client.port))
    }
}
