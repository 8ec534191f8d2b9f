import Foundation
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import NotesServer
import Testing

/// A hostile client holds a connection for a bounded time: a head that does not all arrive is closed after the header
/// timeout, however slowly its bytes keep coming, and a connection with no request after the idle timeout.
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
}

/// Runs `body` with the port of the notes server, served over HTTP on 127.0.0.1 with `limits`.
private func withLimitedServer(_ limits: ConnectionLimits, _ body: @Sendable (Int) async throws -> Void) async throws {
    let app = NotesApplication.make(configuration: .init(address: .hostname("127.0.0.1", port: 0)), limits: limits)
    try await app.test(.live) { client in
        try await body(try #require(client.port))
    }
}
