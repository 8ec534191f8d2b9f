import Foundation
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import NotesServer
import Synchronization
import Testing

/// Memory that a crowd of connections took is given back once they close: glibc keeps what a connection freed for
/// later, so without a trim the process's resident memory stays where the crowd took it (``MemoryTrimming``).
@Suite(
    .injectedValues {
        $0.notesStore = InMemoryNotesStore()
        $0.clock = FixedClock(.referenceInstant)
    }
)
struct MemoryTrimmingTests {
    @Test func aCrowdOfConnectionsThatClosesIsFollowedByATrimButNotWhileItIsHeld() async throws {
        let trims = Counter()
        let trimming = MemoryTrimming(interval: .milliseconds(100), threshold: 20) { trims.add() }
        try await withTrimmingServer(trimming) { port in
            let request = Array("GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: alice\r\n\r\n".utf8)
            // 30 keep-alive connections at once, each closed by its client after 1.5 s.
            async let crowd = withTaskGroup(of: RawHTTPClient.Exchange.self) { group in
                for _ in 0..<30 {
                    group.addTask {
                        await RawHTTPClient.exchange(port: port, writing: request, wait: .milliseconds(1_500))
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            try await Task.sleep(for: .seconds(1))
            #expect(trims.value == 0, "trimmed while the connections were held")
            let exchanges = await crowd
            #expect(exchanges.allSatisfy { $0.status == 200 && !$0.closedByServer })
            try await waitForATrim(trims)
            #expect(trims.value == 1, "\(trims.value) trims after the connections closed")
        }
    }

    @Test func aCrowdThatLeavesInWavesSmallerThanTheThresholdIsTrimmedOnceItsFallReachesIt() async throws {
        let trims = Counter()
        let trimming = MemoryTrimming(interval: .milliseconds(100), threshold: 20) { trims.add() }
        try await withTrimmingServer(trimming) { port in
            let request = Array("GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: carol\r\n\r\n".utf8)
            // 24 connections at once: 12 closed by their client after 2 s, the other 12 after 5 s, far enough apart that
            // all 24 are open at once on a busy machine too.
            async let waves = withTaskGroup(of: Void.self) { group in
                for index in 0..<24 {
                    let wait = Duration.milliseconds(index < 12 ? 2_000 : 5_000)
                    group.addTask { _ = await RawHTTPClient.exchange(port: port, writing: request, wait: wait) }
                }
            }
            try await Task.sleep(for: .milliseconds(3_500))
            #expect(trims.value == 0, "trimmed after a first wave of 12, under the threshold of 20")
            await waves
            try await waitForATrim(trims)
            #expect(trims.value == 1, "\(trims.value) trims after both waves, 24 in all")
        }
    }

    @Test func connectionsThatComeAndGoOneAtATimeAreNeverTrimmedHoweverMany() async throws {
        let trims = Counter()
        let trimming = MemoryTrimming(interval: .milliseconds(100), threshold: 20) { trims.add() }
        try await withTrimmingServer(trimming) { port in
            let request = Array(
                "GET /whoami HTTP/1.1\r\nHost: localhost\r\nX-User: bob\r\nConnection: close\r\n\r\n".utf8
            )
            for _ in 0..<40 {
                let exchange = await RawHTTPClient.exchange(port: port, writing: request, wait: .seconds(3))
                #expect(exchange.status == 200)
            }
            try await Task.sleep(for: .milliseconds(300))
            #expect(trims.value == 0, "\(trims.value) trims for steady traffic")
        }
    }
}

/// Waits until `trims` counts a trim, for up to 5 s, as the server notices closed connections on its own time; then
/// 300 ms more, so that a second trim would show.
private func waitForATrim(_ trims: Counter) async throws {
    for _ in 0..<50 where trims.value == 0 { try await Task.sleep(for: .milliseconds(100)) }
    try await Task.sleep(for: .milliseconds(300))
}

/// Counts calls from any thread.
private final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    func add() {
        count.add(1, ordering: .relaxed)
    }

    var value: Int { count.load(ordering: .relaxed) }
}

/// Runs `body` with the port of the notes server, served over HTTP on 127.0.0.1 with `trimming`.
private func withTrimmingServer(
    _ trimming: MemoryTrimming,
    _ body: @Sendable (Int) async throws -> Void
) async throws {
    let app = NotesApplication.make(
        configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        memoryTrimming: trimming
    )
    try await app.test(.live) { client in
        try await body(try #require(client.port))
    }
}
