import Foundation
import Hummingbird
import HummingbirdTesting
import Injected
import InjectedTesting
import NotesServer
import Testing

/// The routes on a real PostgreSQL: the one `NOTES_TEST_DATABASE_URL` names, which `bash db.sh start` prints.
///
/// Each test has a schema of its own, made for it and dropped after it, so the tests run in parallel like the in-memory ones.
/// Without the variable, the suite is skipped.
@Suite(
    "On PostgreSQL",
    .enabled(if: TestDatabase.url != nil, "NOTES_TEST_DATABASE_URL names no database; run bash db.sh start"),
    .injectedValues(strict: true) { $0.clock = FixedClock(.referenceInstant) }
)
struct PostgresIntegrationTests {
    @Test func aNoteAndItsAuditEntryAreWrittenInOneTransaction() async throws {
        try await TestDatabase.withRoutes { client, database in
            let created = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.contentType: "application/json", .user: "alice", .requestID: "pg-create-1"],
                body: ByteBuffer(string: #"{"text": "Buy milk"}"#)
            )
            #expect(created.status == .created)
            let note = try JSONDecoder().decode(Note.self, from: Data(created.body.readableBytesView))
            #expect(note == Note(id: 1, text: "Buy milk", createdAt: "2023-11-14T22:13:20Z"))

            let listed = try await client.execute(uri: "/notes", method: .get, headers: [.user: "alice"])
            #expect(try JSONDecoder().decode([Note].self, from: Data(listed.body.readableBytesView)) == [note])
            let others = try await client.execute(uri: "/notes", method: .get, headers: [.user: "bob"])
            #expect(try JSONDecoder().decode([Note].self, from: Data(others.body.readableBytesView)) == [])

            #expect(try await PostgresNotesStore().count() == 1)
            let entries = try await PostgresAuditLog().entries()
            #expect(
                entries == [
                    AuditEntry(requestID: "pg-create-1", user: "alice", action: "created note 1", at: .referenceInstant)
                ]
            )
            _ = database
        }
    }

    @Test func aFailureBetweenTheNoteAndItsAuditEntryRollsBackBoth() async throws {
        try await TestDatabase.withRoutes(auditLog: FailingAfterWritingAuditLog()) { client, _ in
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.contentType: "application/json", .user: "alice", .requestID: "pg-fails"],
                body: ByteBuffer(string: #"{"text": "Never saved"}"#)
            )
            #expect(response.status == .internalServerError)
            // The audit log wrote its entry before it failed; the transaction took back the note and the entry.
            #expect(try await PostgresNotesStore().count() == 0)
            #expect(try await PostgresAuditLog().entries().isEmpty)
        }
    }

    @Test(arguments: ["", "{", #"{"text": 42}"#, #"{"text": "  "}"#, #"{"text": "a\u0000b"}"#])
    func aMalformedBodyGets400AndWritesNothing(body: String) async throws {
        try await TestDatabase.withRoutes { client, _ in
            let response = try await client.execute(
                uri: "/notes",
                method: .post,
                headers: [.contentType: "application/json", .user: "erin"],
                body: ByteBuffer(string: body)
            )
            #expect(response.status == .badRequest)
            #expect(try await PostgresNotesStore().count() == 0)
            #expect(try await PostgresAuditLog().entries().isEmpty)
        }
    }

    @Test func concurrentRequestsEachWriteTheirOwnUsersNotesThroughTheirOwnTransaction() async throws {
        try await TestDatabase.withRoutes { client, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 1...40 {
                    group.addTask {
                        for index in 1...3 {
                            let response = try await client.execute(
                                uri: "/notes",
                                method: .post,
                                headers: [
                                    .contentType: "application/json", .user: "user-\(number)",
                                    .requestID: "request-\(number)-\(index)",
                                ],
                                body: ByteBuffer(string: #"{"text": "Note \#(number).\#(index)"}"#)
                            )
                            #expect(response.status == .created)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let store = PostgresNotesStore()
            for number in 1...40 {
                #expect(
                    try await store.notes(of: "user-\(number)").map(\.text) == (1...3).map { "Note \(number).\($0)" }
                )
            }
            let entries = try await PostgresAuditLog().entries()
            #expect(entries.count == 120)
            for entry in entries {
                #expect(entry.requestID.hasPrefix("request-\(entry.user?.dropFirst("user-".count) ?? "?")-"))
            }
        }
    }

    @Test func aTransactionUsedAfterItsRequestEndedRefusesInsteadOfReachingThePool() async throws {
        let leftBehind = try await TestDatabase.withRoutes { _, database in
            try await database.withTransaction { transaction in transaction }
        }
        await #expect(throws: TransactionEnded.self) {
            try await leftBehind.query("SELECT 1")
        }
    }
}

/// The database's outage and recovery, on a cluster of the test's own, which it stops and starts again.
@Suite(
    "When PostgreSQL goes down",
    .enabled(if: TestDatabase.url != nil, "NOTES_TEST_DATABASE_URL names no database; run bash db.sh start"),
    .injectedValues(strict: true) { $0.clock = FixedClock(.referenceInstant) }
)
struct DatabaseOutageTests {
    @Test func aRequestGets503NamingTheCauseAndTheServerRecoversWhenTheDatabaseComesBack() async throws {
        let cluster = try ThrowAwayCluster(port: ThrowAwayCluster.freePort())
        try await cluster.whileItExists { url in
            try await stopsAndComesBack(cluster, url: url)
        }
    }

    private func stopsAndComesBack(_ cluster: ThrowAwayCluster, url: String) async throws {
        var configuration = try DatabaseConfiguration(url: url)
        configuration.maximumConnections = 2
        configuration.connectionWait = .seconds(1)
        try await TestDatabase.withRoutes(configuration: configuration) { client, database in
            func post(_ text: String) async throws -> TestResponse {
                try await client.execute(
                    uri: "/notes",
                    method: .post,
                    headers: [.contentType: "application/json", .user: "ivan"],
                    body: ByteBuffer(string: #"{"text": "\#(text)"}"#)
                )
            }
            #expect(try await post("before").status == .created)

            try await cluster.stop()
            let down = try await post("while down")
            #expect(down.status == .serviceUnavailable)
            let message = String(decoding: down.body.readableBytesView, as: UTF8.self)
            #expect(message.contains("The database is unavailable"), "\(message)")
            #expect(message.contains("Connection refused"), "the cause, as the pool last met it: \(message)")
            let reading = try await client.execute(uri: "/notes", method: .get, headers: [.user: "ivan"])
            #expect(reading.status == .serviceUnavailable)

            _ = try await cluster.start()
            var recovered = false
            for _ in 0..<60 where !recovered {
                recovered = try await post("after").status == .created
                if !recovered { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(recovered, "the server did not recover within 30 s of the database's return")
            #expect(try await PostgresNotesStore().notes(of: "ivan").map(\.text) == ["before", "after"])

            // With the database back, a full pool is the cause a 503 names, not the outage before.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<2 {
                    group.addTask {
                        _ = try await database.withTransaction { try await $0.query("SELECT pg_sleep(2)") }
                    }
                }
                try await Task.sleep(for: .milliseconds(500))
                let busy = try await post("while the pool is full")
                #expect(busy.status == .serviceUnavailable)
                let message = String(decoding: busy.body.readableBytesView, as: UTF8.self)
                #expect(message.contains("no connection came within"), "\(message)")
                try await group.waitForAll()
            }
        }
    }
}

/// An audit log that writes its entry in the request's transaction, and then fails: a fault between the two writes.
struct FailingAfterWritingAuditLog: AuditLog {
    struct Failure: Error {}

    func record(_ action: String) async throws {
        try await PostgresAuditLog().record(action)
        throw Failure()
    }

    func entries() async throws -> [AuditEntry] {
        try await PostgresAuditLog().entries()
    }
}

/// The database the integration tests use.
enum TestDatabase {
    /// The server `NOTES_TEST_DATABASE_URL` names, or `nil`.
    static let url: String? = ProcessInfo.processInfo.environment["NOTES_TEST_DATABASE_URL"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// Runs `body` with the application's routes on a schema of the test's own, in a scope whose store and audit log
    /// are PostgreSQL's, and drops the schema afterwards, also when `body` throws.
    ///
    /// The application runs the database's pool, and creates the tables before `body` runs, as the server does.
    static func withRoutes<R: Sendable>(
        configuration: DatabaseConfiguration? = nil,
        auditLog: any AuditLog = PostgresAuditLog(),
        requestDeadline: Duration = NotesApplication.defaultRequestDeadline,
        _ body: @Sendable (any TestClientProtocol, NotesDatabase) async throws -> R
    ) async throws -> R {
        var configuration = try configuration ?? DatabaseConfiguration(url: url!)
        configuration = try configuration.inSchema("test_\(UUID().uuidString.lowercased().filter(\.isHexDigit))")
        configuration.maximumConnections = min(configuration.maximumConnections, 4)
        let database = NotesDatabase(configuration: configuration)
        return try await withInjectedValues {
            $0.database = database
            $0.notesStore = PostgresNotesStore()
            $0.auditLog = auditLog
        } operation: {
            try await NotesApplication.make(requestDeadline: requestDeadline).test(.router) { client in
                let result: Result<R, any Error>
                do {
                    result = .success(try await body(client, database))
                } catch {
                    result = .failure(error)
                }
                try? await database.dropSchema()
                return try result.get()
            }
        }
    }
}

/// A PostgreSQL cluster of one test's own, made and controlled with `db.sh`.
struct ThrowAwayCluster: Sendable {
    let directory: String
    let port: Int

    init(port: Int) {
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("notes-outage-\(port)").path
    }

    /// A loopback port that nothing listens on now: the one the system gives a socket bound to port 0, which it hands
    /// out to no other socket while this one holds it, and only after its other free ports once it is closed.
    ///
    /// A random port in a fixed range sometimes met a cluster a crashed run left listening there, and the test then
    /// stopped and started that cluster rather than its own.
    static func freePort() throws -> Int {
        #if canImport(Glibc)
        let kind = Int32(SOCK_STREAM.rawValue)
        #else
        let kind = SOCK_STREAM
        #endif
        let socket = Foundation.socket(AF_INET, kind, 0)
        guard socket >= 0 else { throw PortError(call: "socket", errno: errno) }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw PortError(call: "bind", errno: errno) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    struct PortError: Error, CustomStringConvertible {
        let call: String
        let errno: Int32
        var description: String { "\(call) failed with errno \(errno) while looking for a free port" }
    }

    /// Starts it, making it first if needed, and returns its URL.
    func start() async throws -> String {
        try await run("start").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func stop() async throws {
        _ = try await run("stop")
    }

    /// Starts it, runs `body` with its URL, and then deletes it, also when `body` throws.
    func whileItExists(_ body: (String) async throws -> Void) async throws {
        let url = try await start()
        do {
            try await body(url)
        } catch {
            _ = try? await run("destroy")
            throw error
        }
        _ = try await run("destroy")
    }

    private func run(_ command: String) async throws -> String {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("db.sh")
        // The output goes to a file, not a pipe: the database server the script starts may inherit the pipe, and a
        // reader would then wait for its end for as long as the server runs.
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("db-sh-\(UUID()).out")
        defer { try? FileManager.default.removeItem(at: output) }
        let line =
            "NOTES_DB_DIR='\(directory)' NOTES_DB_PORT=\(port) bash '\(script.path)' \(command) > '\(output.path)'"
        // `system` on a thread of its own, which it blocks: Foundation's `Process` does not see the shell exit inside
        // a test process, whose exit tests handle child processes themselves, and a test's task must not block the
        // shared pool.
        let status: Int32 = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: system(line)) }.start()
        }
        guard status == 0 else { throw ClusterError(command: command, status: status) }
        return try String(contentsOf: output, encoding: .utf8)
    }

    struct ClusterError: Error, CustomStringConvertible {
        let command: String
        let status: Int32
        var description: String { "db.sh \(command) exited with status \(status)" }
    }
}
