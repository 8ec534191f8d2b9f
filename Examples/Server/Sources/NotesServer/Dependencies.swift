import Foundation
import Injected

// Every dependency of the service is a key whose default works with nothing configured, so `swift run notes-server`
// needs no set-up: with no database, the notes and the audit log live in memory. Services are `.cached`: the first read
// builds the one instance the process shares, and `ServerServices` makes that first read at start-up. Tests replace
// them per test, through the `.injectedValues` trait.

/// The key of the notes store: PostgreSQL when a database is configured, and else one shared, in-memory store.
///
/// It has no test value on purpose: a test that forgets to give itself a store would share notes with the other
/// tests, so a strict suite reports it instead.
enum NotesStoreKey: ReadOnlyInjectionKey {
    static var currentValue: any NotesStore {
        InjectedValues[\.database] == nil ? InMemoryNotesStore() : PostgresNotesStore()
    }
}

/// The key of the database's settings, which start-up sets from `--database-url` or `NOTES_DATABASE_URL`.
enum DatabaseConfigurationKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: DatabaseConfiguration? { nil }
    static var testValue: DatabaseConfiguration? { nil }
}

/// The key of the database: its connection pool, made once from the settings; `nil` with none.
///
/// Tests have none unless they set one, as the integration tests do, each with a schema of its own.
enum DatabaseKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: NotesDatabase? { InjectedValues[\.databaseConfiguration].map(NotesDatabase.init) }
    static var testValue: NotesDatabase? { nil }
}

/// The key of the current request's transaction, which `TransactionMiddleware` sets for each mutating request.
enum TransactionKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: DatabaseTransaction? { nil }
    static var testValue: DatabaseTransaction? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

/// The key of the current request's watch, which ``DeadlineResponder`` sets for each request it bounds.
enum RequestWatchKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: RequestWatch? { nil }
    static var testValue: RequestWatch? { nil }
    static var lifetime: InjectionLifetime { .uncached }
}

/// The key of the clock that stamps notes and audit entries; tests start from a clock that never moves.
enum ClockKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: any NoteClock { SystemClock() }
    static var testValue: any NoteClock { FixedClock(.referenceInstant) }
}

/// The key of the audit log: PostgreSQL's table when a database is configured, and else one shared in-memory log; a
/// new in-memory log for each test.
enum AuditLogKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: any AuditLog {
        InjectedValues[\.database] == nil ? InMemoryAuditLog() : PostgresAuditLog()
    }
    static var testValue: any AuditLog { InMemoryAuditLog() }
}

/// The key of the current request's id, which ``RequestScopeMiddleware`` sets for each request.
///
/// Outside a request it reads the same in tests as in the server, so its test value is its default.
enum RequestIDKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: String { "no-request" }
    static var testValue: String { currentValue }
}

/// The key of the user making the current request, which the per-request middlewares set from `X-User`.
///
/// `nil` outside a request, so a route wired without the middleware answers 401 instead of guessing a user; the same
/// in tests, so work that a test hands to a detached task reads `nil` there too, without a warning.
enum CurrentUserKey: ReadOnlyInjectionKey, TestValueKey {
    static var currentValue: String? { nil }
    static var testValue: String? { currentValue }
}

extension InjectedValues {
    /// Where the notes are kept: PostgreSQL, or memory.
    public var notesStore: any NotesStore {
        get { Self[NotesStoreKey.self] }
        set { Self[NotesStoreKey.self] = newValue }
    }

    /// The clock that stamps new notes and audit entries.
    public var clock: any NoteClock {
        get { Self[ClockKey.self] }
        set { Self[ClockKey.self] = newValue }
    }

    /// The log of what each request changed.
    public var auditLog: any AuditLog {
        get { Self[AuditLogKey.self] }
        set { Self[AuditLogKey.self] = newValue }
    }

    /// The database's settings; `nil` to keep everything in memory.
    public var databaseConfiguration: DatabaseConfiguration? {
        get { Self[DatabaseConfigurationKey.self] }
        set { Self[DatabaseConfigurationKey.self] = newValue }
    }

    /// The database, with its connection pool; `nil` when none is configured.
    public var database: NotesDatabase? {
        get { Self[DatabaseKey.self] }
        set { Self[DatabaseKey.self] = newValue }
    }

    /// The transaction of the request being served, while it is open; `nil` outside a mutating request.
    public var transaction: DatabaseTransaction? {
        get { Self[TransactionKey.self] }
        set { Self[TransactionKey.self] = newValue }
    }

    /// The watch of the request being served, which closes its database connections if its deadline passes; `nil`
    /// outside a request.
    public var requestWatch: RequestWatch? {
        get { Self[RequestWatchKey.self] }
        set { Self[RequestWatchKey.self] = newValue }
    }

    /// The id of the request being served: its `X-Request-ID` header, or one the server made up.
    public var requestID: String {
        get { Self[RequestIDKey.self] }
        set { Self[RequestIDKey.self] = newValue }
    }

    /// The user making the request being served, from its `X-User` header; `nil` outside a request.
    public var currentUser: String? {
        get { Self[CurrentUserKey.self] }
        set { Self[CurrentUserKey.self] = newValue }
    }
}

/// Builds the service's shared dependencies once, before the server takes its first request.
public enum ServerServices {
    /// Reads each `.cached` service once, so that the store and the audit log exist before the first request.
    ///
    /// Call it outside any `withInjectedValues` scope, at start-up. The services' `@Injected` properties are then
    /// made outside every scope too, so they remember none, and each read they make resolves in the scope of the
    /// request that reads: the audit log, built once, still sees each request's own id and user.
    ///
    /// With a database configured, this makes its connection pool; the pool connects once the application runs it.
    public static func startUp() {
        _ = InjectedValues[\.database]
        _ = InjectedValues[\.notesStore]
        _ = InjectedValues[\.auditLog]
    }
}
