import Foundation
import Injected
import Logging
import PostgresNIO
import Synchronization

// The notes on PostgreSQL: a connection pool made once, at start-up, and per mutating request a transaction whose
// connection the request's scope holds, so that the store and the audit log write through it with `@Injected` and
// nothing passes it down by hand.

/// Where the database is, from a URL such as `postgres://notes@127.0.0.1:54329/notes`.
public struct DatabaseConfiguration: Sendable, Equatable {
    /// The server's host name or address.
    public var host: String
    /// The server's port.
    public var port: Int
    /// The user to connect as.
    public var username: String
    /// The user's password, if the server asks for one.
    public var password: String?
    /// The database to use.
    public var database: String
    /// The schema that holds the tables: `public` unless a test gives itself one.
    public var schema: String
    /// The most connections the pool opens.
    public var maximumConnections: Int
    /// How long a request waits for a connection before the server answers 503.
    public var connectionWait: Duration

    /// Reads a `postgres://user[:password]@host[:port]/database` URL.
    ///
    /// - Parameter url: The URL, as `--database-url` or `NOTES_DATABASE_URL` gives it.
    /// - Throws: `ConfigurationError` naming what is wrong with it.
    public init(url: String) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme) else {
            throw ConfigurationError("the database URL must look like postgres://user@host:port/database, not \(url)")
        }
        guard let host = components.host, !host.isEmpty else {
            throw ConfigurationError("the database URL \(url) names no host")
        }
        guard let user = components.user, !user.isEmpty else {
            throw ConfigurationError("the database URL \(url) names no user")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw ConfigurationError("the database URL \(url) names no database") }
        self.host = host
        port = components.port ?? 5432
        username = user
        password = components.password
        self.database = database
        schema = "public"
        maximumConnections = 20
        connectionWait = .seconds(2)
    }

    /// The same database, with its tables in `schema`, which must be a plain lowercase identifier.
    public func inSchema(_ schema: String) throws -> DatabaseConfiguration {
        guard schema.first.map({ $0.isLetter || $0 == "_" }) == true,
            schema.allSatisfy({ ($0.isLowercase && $0.isASCII) || $0.isNumber || $0 == "_" })
        else {
            throw ConfigurationError("a schema name must be lowercase letters, digits and underscores, not \(schema)")
        }
        var configuration = self
        configuration.schema = schema
        return configuration
    }

    var client: PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: host,
            port: port,
            username: username,
            password: password,
            database: database,
            tls: .disable
        )
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectionWait
        return configuration
    }
}

/// A database URL that cannot be used, and why.
public struct ConfigurationError: Error, CustomStringConvertible {
    /// What is wrong.
    public var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The database could not be reached: the server answers 503, with the cause.
public struct DatabaseUnavailable: Error, CustomStringConvertible {
    /// Why, as far as the pool knows: the last error it met connecting, or that none came in time.
    public var cause: String

    /// The message a client sees.
    public var description: String { "The database is unavailable: \(cause). Try again shortly." }
}

/// The notes database: the connection pool, made once for the process, and its schema.
///
/// A `.cached` dependency, built at start-up when a database is configured. Its pool runs as one of the application's
/// services, which shut it down cleanly with the server.
public final class NotesDatabase: Sendable {
    /// The connection pool.
    public let client: PostgresClient
    /// The database's settings.
    public let configuration: DatabaseConfiguration
    /// The last error the pool met opening a connection, and whether one has opened since.
    private let health: ConnectionHealth

    /// Makes the pool; it connects once it runs (`client.run()`, or as a service of the application).
    public init(configuration: DatabaseConfiguration) {
        self.configuration = configuration
        let health = ConnectionHealth()
        self.health = health
        var logger = Logger(label: "notes-server.postgres") { _ in health.logHandler }
        logger.logLevel = .info
        client = PostgresClient(configuration: configuration.client, backgroundLogger: logger)
    }

    private var schema: String { configuration.schema }

    /// Creates the schema and the tables if they are missing.
    ///
    /// It runs in a transaction that first takes an advisory lock, so that servers starting at once on an empty
    /// database create them one after another: `IF NOT EXISTS` alone races, and one of them fails.
    public func migrate() async throws {
        try await withTransaction { transaction in
            try await transaction.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))")
            try await transaction.query("CREATE SCHEMA IF NOT EXISTS \(unescaped: schema)")
            try await transaction.query(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: schema).notes (
                    id bigserial PRIMARY KEY,
                    owner text NOT NULL,
                    text text NOT NULL,
                    created_at timestamptz NOT NULL
                )
                """
            )
            try await transaction.query(
                "CREATE INDEX IF NOT EXISTS notes_owner ON \(unescaped: schema).notes (owner, id)"
            )
            // A post's idempotency key, kept in its note's row, so that the note and its key are committed together;
            // at most one note per user and key. Rows without a key never clash: NULLs are distinct in the index.
            try await transaction.query(
                "ALTER TABLE \(unescaped: schema).notes ADD COLUMN IF NOT EXISTS idempotency_key text"
            )
            try await transaction.query(
                """
                CREATE UNIQUE INDEX IF NOT EXISTS notes_idempotency_key
                ON \(unescaped: schema).notes (owner, idempotency_key)
                """
            )
            try await transaction.query(
                """
                CREATE TABLE IF NOT EXISTS \(unescaped: schema).audit_entries (
                    id bigserial PRIMARY KEY,
                    request_id text NOT NULL,
                    owner text,
                    action text NOT NULL,
                    at timestamptz NOT NULL
                )
                """
            )
        }
    }

    /// The key of the advisory lock that migrations take: any number, the same in every server.
    private static let migrationLock: Int64 = 0x6e6f_7465_73

    /// Drops the schema and everything in it: a test's clean-up.
    public func dropSchema() async throws {
        _ = try await withConnection { connection in
            try await connection.query(
                "DROP SCHEMA IF EXISTS \(unescaped: schema) CASCADE",
                logger: Logger(label: "notes-server.migrate")
            )
        }
    }

    /// Runs `body` in a transaction: committed if `body` returns, rolled back if it throws.
    ///
    /// The transaction is handed to `body` as a value that stops working when it ends, before its `COMMIT` or
    /// `ROLLBACK`, so that work which outlives the request can neither write outside the transaction nor use the
    /// connection after the pool has taken it back.
    ///
    /// - Throws: `DatabaseUnavailable` when no connection comes within `connectionWait`, or what `body` throws.
    public func withTransaction<R: Sendable>(_ body: (DatabaseTransaction) async throws -> R) async throws -> R {
        try await withConnection { connection in
            let logger = Logger(label: "notes-server.transaction")
            let watch = InjectedValues[\.requestWatch]
            watch?.beginTransaction()
            try await connection.query("BEGIN", logger: logger)
            let transaction = DatabaseTransaction(connection, schema: schema)
            let result: R
            do {
                result = try await body(transaction)
            } catch {
                await transaction.end()
                // A closed connection has rolled the transaction back, and a query written to it would never be
                // answered.
                if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                throw error
            }
            await transaction.end()
            // A request abandoned at its deadline is answered "nothing was saved": it must not commit after that.
            guard watch?.beginCommit() ?? true else { throw RequestAbandoned() }
            try await connection.query("COMMIT", logger: logger)
            return result
        }
    }

    /// Runs `body` with a connection, outside any transaction: reads, which need none.
    ///
    /// - Throws: `DatabaseUnavailable` when no connection comes within `connectionWait`, or what `body` throws.
    public func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        // The pool waits for a connection as long as it takes, retrying the server in the background; a request waits
        // `connectionWait`. The pool's lease cannot be given a deadline, so the lease, and then `body`, run in a child
        // task, beside a timer that gives the lease up if no connection has come by then. `Lease` makes the two
        // exclusive: a request that is answered 503 never runs `body`, and one that runs `body` is never answered 503
        // for the wait.
        let configuration = configuration
        let health = health
        let watch = InjectedValues[\.requestWatch]
        return try await withoutActuallyEscaping(body) { body in
            let work = ChildTaskClosure(body)
            let lease = Lease()
            return try await withThrowingTaskGroup(of: R?.self) { group in
                group.addTask {
                    while true {
                        do {
                            return try await self.run(work, leasedBy: lease, watch: watch)
                        } catch is ClosedWhenLeased {
                            continue
                        }
                    }
                }
                group.addTask {
                    // Cancelled once the work has ended, with nothing left to say.
                    guard (try? await Task.sleep(for: configuration.connectionWait)) != nil else { return nil }
                    guard lease.isLeasedUnlessGivenUp() else {
                        throw DatabaseUnavailable(cause: health.cause(waited: configuration.connectionWait))
                    }
                    return nil
                }
                defer { group.cancelAll() }
                while let next = try await group.next() {
                    if let result = next { return result }
                }
                throw CancellationError()
            }
        }
    }
}

extension NotesDatabase {
    /// Leases a connection from the pool and runs `work` with it, for ``withConnection(_:)``.
    ///
    /// PostgresNIO 1.33.2 never answers a query written to a connection whose close has completed, and its pool learns
    /// of a close only when the connection's close callback runs: until then it takes a closed connection back, and
    /// leases it, as ready. So a connection that has closed is never used, and is given back only once the pool has
    /// seen it close.
    fileprivate func run<R: Sendable>(
        _ work: ChildTaskClosure<PostgresConnection, R>,
        leasedBy lease: Lease,
        watch: RequestWatch?
    ) async throws -> R {
        let wait = configuration.connectionWait
        return try await client.withConnection { connection in
            // Closed before the pool saw it: given back once it has, for the caller to ask for another.
            if connection.isClosed {
                try? await connection.closeFuture.get()
                throw ClosedWhenLeased()
            }
            guard lease.begin() else { throw DatabaseUnavailable(cause: health.cause(waited: wait)) }
            health.connected()
            // If the request passes its deadline, its watch closes the connection, which fails a query waiting on it.
            guard watch?.use(connection) ?? true else { throw RequestAbandoned() }
            let result: Result<R, any Error>
            do {
                result = .success(try await work.closure(connection))
            } catch {
                result = .failure(error)
            }
            if watch?.release(connection) == false || connection.isClosed {
                try? await connection.closeFuture.get()
                // The pool opens a connection in place of a closed one only when a new request for one comes, so one
                // is made here: a request already waiting would wait for the next to come, and with none, get 503.
                Task.detached { try? await self.client.withConnection { _ in } }
            }
            return try result.get()
        }
    }
}

/// The pool leased a connection that had closed, which was given back once the pool saw it close.
private struct ClosedWhenLeased: Error {}

/// A request's lease of a connection, which either comes in time or is given up, never both.
private final class Lease: Sendable {
    private enum State {
        case waiting, leased, givenUp
    }

    private let state = Mutex(State.waiting)

    /// Takes the connection, unless the request has given up waiting; says whether it did.
    func begin() -> Bool {
        state.withLock { state in
            guard state == .waiting else { return false }
            state = .leased
            return true
        }
    }

    /// Whether a connection has been leased; if none has, gives the lease up, now.
    func isLeasedUnlessGivenUp() -> Bool {
        state.withLock { state in
            if state == .leased { return true }
            state = .givenUp
            return false
        }
    }
}

/// A closure that a child task of a group runs while its caller awaits the group.
///
/// `@unchecked Sendable`: the caller is suspended, awaiting the group, for as long as the child task runs the closure,
/// so the closure and what it captures are never used by two tasks at once; and the group ends before the caller's
/// `withoutActuallyEscaping` does, which checks at run time that the closure did not outlive the call.
private struct ChildTaskClosure<Argument, Result>: @unchecked Sendable {
    let closure: (Argument) async throws -> Result

    init(_ closure: @escaping (Argument) async throws -> Result) {
        self.closure = closure
    }
}

/// One request's transaction: the connection while it is open.
public final class DatabaseTransaction: Sendable {
    private struct State {
        /// The connection, until the transaction ends.
        var connection: PostgresConnection?
        /// How many queries are on their way through the connection.
        var inFlight = 0
        /// The end of the transaction, waiting for those queries.
        var ending: CheckedContinuation<Void, Never>?
    }

    private let state: Mutex<State>
    /// The schema that holds the tables.
    let schema: String

    init(_ connection: PostgresConnection, schema: String) {
        state = Mutex(State(connection: connection))
        self.schema = schema
    }

    /// Ends the transaction, so that `query` throws from now on.
    ///
    /// It returns once the queries already started have returned, so that each of them runs in the transaction,
    /// before its `COMMIT` or `ROLLBACK`.
    func end() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                state.connection = nil
                if state.inFlight > 0 { state.ending = continuation }
                return state.inFlight == 0
            }
            if idle { continuation.resume() }
        }
    }

    /// Runs `query` in the transaction.
    ///
    /// - Throws: `TransactionEnded` once the request that opened it has ended, or the database's error.
    @discardableResult
    public func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        let connection = state.withLock { state -> PostgresConnection? in
            if state.connection != nil { state.inFlight += 1 }
            return state.connection
        }
        guard let connection else { throw TransactionEnded() }
        defer {
            let ending = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.inFlight -= 1
                guard state.inFlight == 0 else { return nil }
                defer { state.ending = nil }
                return state.ending
            }
            ending?.resume()
        }
        return try await connection.query(query, logger: Logger(label: "notes-server.transaction"))
    }
}

/// A transaction was used after the request that opened it ended, as by a task the request left running.
public struct TransactionEnded: Error, CustomStringConvertible {
    /// The message.
    public var description: String { "the request's transaction has ended; work that outlives it needs one of its own" }
}

/// The error of the pool's last failed attempt to connect, until a request leases a connection.
///
/// The pool retries in the background, and says what failed only in its background log: this keeps it, from there,
/// for a 503 to name as the cause.
final class ConnectionHealth: Sendable {
    private let lastError = Mutex<String?>(nil)

    /// A log handler that keeps the pool's connection errors here.
    var logHandler: any LogHandler { Handler(health: self) }

    func cause(waited: Duration) -> String {
        if let error = lastError.withLock({ $0 }) { return error }
        return "no connection came within \(waited)"
    }

    fileprivate func record(_ message: Logger.Message, metadata: Logger.Metadata?) {
        switch message.description {
        case "Connection creation failed":
            let error = (metadata?["psql_error"] ?? metadata?["error"]).map { "\($0)" } ?? "\(message)"
            lastError.withLock { $0 = Self.shortened(error) }
        default:
            break
        }
    }

    /// Forgets the last error: a connection has just been leased, so the database answers.
    func connected() {
        lastError.withLock { $0 = nil }
    }

    /// The part of PostgresNIO's error that names the cause, such as "Connection refused (errno: 111)".
    private static func shortened(_ error: String) -> String {
        guard let range = error.range(of: "underlying: ") else { return String(error.prefix(200)) }
        var cause = error[range.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
        // The reflection closes the parentheses it opened before "underlying:".
        while cause.hasSuffix(")"), cause.count(where: { $0 == ")" }) > cause.count(where: { $0 == "(" }) {
            cause.removeLast()
        }
        return String(cause.prefix(200))
    }

    private struct Handler: LogHandler {
        let health: ConnectionHealth
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            health.record(event.message, metadata: event.metadata)
        }
    }
}

// MARK: - The store and the audit log on PostgreSQL

/// The notes in PostgreSQL.
///
/// It writes through the request's transaction (`\.transaction`), which the middleware opens for every mutating
/// request, and reads with a connection of its own outside one.
public struct PostgresNotesStore: NotesStore {
    @Injected(\.database) private var database
    @Injected(\.transaction) private var transaction
    @Injected(\.clock) private var clock
    @Injected(\.auditLog) private var auditLog

    /// The store of the configured database.
    public init() {}

    /// Saves a note and records it in the audit log, in the request's transaction: both are written, or neither.
    ///
    /// With an idempotency key, the note's row holds it, under a unique index on the user and the key. A post whose
    /// key is committed already inserts nothing (`ON CONFLICT DO NOTHING`) and reads the note stored with it; one whose
    /// key another transaction is inserting waits, in PostgreSQL, for that transaction to end, and then reads its note,
    /// or, if it rolled back, inserts its own.
    public func add(_ text: String, for user: String, idempotencyKey: IdempotencyKey?) async throws -> SavedNote {
        guard let transaction else {
            return try await inOwnTransaction { try await add(text, for: user, idempotencyKey: idempotencyKey) }
        }
        let created = Note.stamp(clock.now())
        // PostgreSQL compares names byte by byte: one spelling per name, NFC, as the in-memory store compares them.
        let user = UserName.normalized(user)
        let key = idempotencyKey?.value
        let schema = transaction.schema
        let inserted = try await transaction.query(
            """
            INSERT INTO \(unescaped: schema).notes (owner, text, created_at, idempotency_key)
            VALUES (\(user), \(text), \(created), \(key))
            ON CONFLICT (owner, idempotency_key) DO NOTHING RETURNING id
            """
        )
        var id: Int?
        for try await row in inserted.decode(Int.self) { id = row }
        if let id {
            try await auditLog.record("created note \(id)")
            return SavedNote(note: Note(id: id, text: text, createdAt: Note.timestamp(created)), replayed: false)
        }
        // Only a key clashes: a later statement of this transaction sees the row the clash was with, committed.
        guard let idempotencyKey else { throw ConfigurationError("a note without a key clashed with another") }
        let stored = try await transaction.query(
            """
            SELECT id, text, created_at FROM \(unescaped: schema).notes
            WHERE owner = \(user) AND idempotency_key = \(key)
            """
        )
        for try await (id, storedText, storedAt) in stored.decode((Int, String, Date).self) {
            guard storedText == text else { throw IdempotencyKeyReused(key: idempotencyKey) }
            return SavedNote(note: Note(id: id, text: storedText, createdAt: Note.timestamp(storedAt)), replayed: true)
        }
        throw ConfigurationError("the note stored with idempotency key \(idempotencyKey) could not be read back")
    }

    /// The notes of `user`, oldest first.
    public func notes(of user: String) async throws -> [Note] {
        let user = UserName.normalized(user)
        return try await reading { connection, schema in
            let rows = try await connection.query(
                "SELECT id, text, created_at FROM \(unescaped: schema).notes WHERE owner = \(user) ORDER BY id",
                logger: Logger(label: "notes-server.store")
            )
            var notes: [Note] = []
            for try await (id, text, created) in rows.decode((Int, String, Date).self) {
                notes.append(Note(id: id, text: text, createdAt: Note.timestamp(created)))
            }
            return notes
        }
    }

    /// How many notes the database keeps.
    public func count() async throws -> Int {
        try await reading { connection, schema in
            let rows = try await connection.query(
                "SELECT count(*) FROM \(unescaped: schema).notes",
                logger: Logger(label: "notes-server.store")
            )
            var count = 0
            for try await row in rows.decode(Int.self) { count = row }
            return count
        }
    }

    private func reading<R: Sendable>(_ body: (PostgresConnection, String) async throws -> R) async throws -> R {
        let database = try configured()
        return try await database.withConnection { try await body($0, database.configuration.schema) }
    }

    /// Runs `body` in a transaction of its own, in a scope that holds it: for a write made outside a request.
    private func inOwnTransaction<R: Sendable>(_ body: () async throws -> R) async throws -> R {
        try await configured().withTransaction { transaction in
            try await withInjectedValues {
                $0.transaction = transaction
            } operation: {
                try await body()
            }
        }
    }

    private func configured() throws -> NotesDatabase {
        guard let database else {
            throw ConfigurationError("the PostgreSQL store needs a database; none is configured")
        }
        return database
    }
}

/// The audit log in PostgreSQL: each entry is written in the request's transaction, with the change it records.
public struct PostgresAuditLog: AuditLog {
    @Injected(\.database) private var database
    @Injected(\.transaction) private var transaction
    @Injected(\.requestID) private var requestID
    @Injected(\.currentUser) private var user
    @Injected(\.clock) private var clock

    /// The audit log of the configured database.
    public init() {}

    /// Writes the entry in the request's transaction.
    ///
    /// - Throws: `ConfigurationError` outside a transaction, since an entry belongs with the change it records.
    public func record(_ action: String) async throws {
        guard let transaction else {
            throw ConfigurationError("an audit entry is written in the transaction of the change it records")
        }
        try await transaction.query(
            """
            INSERT INTO \(unescaped: transaction.schema).audit_entries (request_id, owner, action, at)
            VALUES (\(requestID), \(user.map(UserName.normalized)), \(action), \(clock.now()))
            """
        )
    }

    /// The entries, oldest first.
    public func entries() async throws -> [AuditEntry] {
        guard let database else { throw ConfigurationError("the PostgreSQL audit log needs a database") }
        return try await database.withConnection { connection in
            let rows = try await connection.query(
                """
                SELECT request_id, owner, action, at FROM \(unescaped: database.configuration.schema).audit_entries
                ORDER BY id
                """,
                logger: Logger(label: "notes-server.audit")
            )
            var entries: [AuditEntry] = []
            for try await (requestID, user, action, at) in rows.decode((String, String?, String, Date).self) {
                entries.append(AuditEntry(requestID: requestID, user: user, action: action, at: at))
            }
            return entries
        }
    }
}
