import Foundation
import Injected
import Synchronization

/// A source of the current time, so that tests can stamp notes with a time they know.
public protocol NoteClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock, the default outside tests.
public struct SystemClock: NoteClock {
    /// Makes the system clock.
    public init() {}

    /// The current time, read from the system.
    public func now() -> Date { Date() }
}

/// A clock that always reads the same instant: the default inside tests.
public struct FixedClock: NoteClock {
    /// The instant the clock reads.
    public let instant: Date

    /// Makes a clock stopped at `instant`.
    ///
    /// - Parameter instant: The instant every read returns.
    public init(_ instant: Date) {
        self.instant = instant
    }

    /// The instant the clock was stopped at.
    public func now() -> Date { instant }
}

extension Date {
    /// 2023-11-14T22:13:20Z, the instant tests' clocks read unless a test sets another.
    public static let referenceInstant = Date(timeIntervalSince1970: 1_700_000_000)
}

/// One note, as the API returns it.
public struct Note: Codable, Equatable, Sendable {
    /// The note's number, unique in its store.
    public var id: Int
    /// What the user wrote.
    public var text: String
    /// When the store saved the note, as an ISO 8601 string in UTC.
    public var createdAt: String

    /// Makes a note.
    ///
    /// - Parameters:
    ///   - id: The note's number.
    ///   - text: What the note says.
    ///   - createdAt: When it was saved, in ISO 8601.
    public init(id: Int, text: String, createdAt: String) {
        self.id = id
        self.text = text
        self.createdAt = createdAt
    }
}

/// One change a request made, with the request and the user it came from.
public struct AuditEntry: Equatable, Sendable {
    /// The id of the request that made the change.
    public var requestID: String
    /// The user who made it, or `nil` if no user was known.
    public var user: String?
    /// What changed.
    public var action: String
    /// When, according to the clock.
    public var at: Date

    /// Makes an entry.
    ///
    /// - Parameters:
    ///   - requestID: The id of the request that made the change.
    ///   - user: The user who made it, if known.
    ///   - action: What changed.
    ///   - at: When.
    public init(requestID: String, user: String?, action: String, at: Date) {
        self.requestID = requestID
        self.user = user
        self.action = action
        self.at = at
    }
}

/// Where the service records what each request changed.
///
/// A log reads the request's id and user itself, through `@Injected`, so callers pass only what changed. With a
/// database, the entry is written in the request's transaction, with the change it records, or not at all.
public protocol AuditLog: Sendable {
    /// Records `action`, with the current request's id and user, at the clock's time.
    func record(_ action: String) async throws

    /// The entries recorded, oldest first.
    func entries() async throws -> [AuditEntry]
}

/// An in-memory log of what requests changed, which keeps the most recent entries: the log without a database, and
/// every test's.
///
/// The service has one log, built at start-up. It never takes the request id or the user as arguments: it reads both
/// through `@Injected`, and since it was made outside every scope, each read resolves in the scope of the request
/// that is being served.
public struct InMemoryAuditLog: AuditLog {
    @Injected(\.requestID) private var requestID
    @Injected(\.currentUser) private var user
    @Injected(\.clock) private var clock

    private let storage: Storage

    /// Makes an empty log that keeps up to `capacity` entries, dropping the oldest first.
    ///
    /// - Parameter capacity: How many entries the log keeps.
    public init(capacity: Int = 1_000) {
        storage = Storage(capacity: capacity)
    }

    /// Records `action`, with the current request's id and user, at the clock's time.
    ///
    /// - Parameter action: What changed, in a few words.
    public func record(_ action: String) {
        storage.append(AuditEntry(requestID: requestID, user: user, action: action, at: clock.now()))
    }

    /// The entries kept, oldest first.
    public func entries() -> [AuditEntry] {
        storage.snapshot()
    }

    /// The entries, behind a lock shared by every copy of the log.
    private final class Storage: Sendable {
        private let capacity: Int
        private let entries = Mutex<[AuditEntry]>([])

        init(capacity: Int) {
            self.capacity = max(1, capacity)
        }

        func append(_ entry: AuditEntry) {
            entries.withLock { entries in
                if entries.count == capacity {
                    entries.removeFirst()
                }
                entries.append(entry)
            }
        }

        func snapshot() -> [AuditEntry] {
            entries.withLock { $0 }
        }
    }
}

/// Where the service keeps its notes.
public protocol NotesStore: Sendable {
    /// Saves a note for `user`, stamped with the clock's time, and records it in the audit log; with a database, both
    /// in the request's transaction.
    ///
    /// With an idempotency key, the store keeps at most one note per user and key, however many posts, one after
    /// another or at once, carry it: a post whose key is stored already stores nothing, writes no audit entry, and
    /// returns the note stored first, `replayed`. A post that waits for another with the same key still running
    /// returns once that one has stored its note, or failed.
    ///
    /// - Parameters:
    ///   - text: What the note says.
    ///   - user: Whose note it is.
    ///   - idempotencyKey: The client's key for this note, if it gave one.
    /// - Returns: The saved note, and whether an earlier post saved it.
    /// - Throws: ``IdempotencyKeyReused`` when the user's key holds a note with another text; what the storage or the
    ///   audit log throws, after which, with a database, neither the note nor its entry is kept.
    func add(_ text: String, for user: String, idempotencyKey: IdempotencyKey?) async throws -> SavedNote

    /// The notes of `user`, oldest first; empty for a user with none.
    func notes(of user: String) async throws -> [Note]

    /// How many notes the store keeps, for every user together.
    func count() async throws -> Int
}

extension NotesStore {
    /// Saves a note for `user`, with no idempotency key: each call stores a note of its own.
    ///
    /// - Returns: The saved note.
    public func add(_ text: String, for user: String) async throws -> Note {
        try await add(text, for: user, idempotencyKey: nil).note
    }
}

extension Note {
    /// `date`, to the whole second, cut rather than rounded, so that a note is never stamped later than it was made.
    static func stamp(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    /// A note's `createdAt` for `date`: ISO 8601, in UTC, to the second.
    static func timestamp(_ date: Date) -> String {
        stamp(date).formatted(.iso8601)
    }
}

/// The notes of every user, kept in memory and keyed by user name: the store without a database, and the tests'.
///
/// Names are keyed in NFC (``UserName/normalized(_:)``), as in PostgreSQL, so that both stores take the same names for
/// one user.
///
/// An actor, so requests for many users can add notes at once. It reads the clock and the audit log through
/// `@Injected`: a test that overrides either sees the store use its replacement, with no change to the store.
public actor InMemoryNotesStore: NotesStore {
    @Injected(\.clock) private var clock
    @Injected(\.auditLog) private var auditLog

    private var notesByUser: [String: [Note]] = [:]
    private var lastID = 0
    /// The note stored for each user's idempotency key.
    private var notesByKey: [KeyOfUser: Note] = [:]
    /// The posts waiting for a post with the same user and key to end, by that key; a key is here while a post
    /// holding it runs.
    private var waitingForKey: [KeyOfUser: [CheckedContinuation<Void, Never>]] = [:]

    private struct KeyOfUser: Hashable {
        var user: String
        var key: IdempotencyKey
    }

    /// Makes an empty store.
    public init() {}

    /// Saves a note for `user`, stamped with the clock's time, and records it in the audit log; with a key already
    /// stored for the user, returns the note stored with it instead.
    ///
    /// Nothing is saved if the audit log fails. The actor lets other calls in while the log records, so a key is
    /// held from the first look until the note is stored or has failed: a second post with the key waits meanwhile,
    /// and then finds the note, or, if the first failed, stores its own.
    public func add(_ text: String, for user: String, idempotencyKey: IdempotencyKey?) async throws -> SavedNote {
        let user = UserName.normalized(user)
        guard let idempotencyKey else { return SavedNote(note: try await store(text, for: user), replayed: false) }
        let key = KeyOfUser(user: user, key: idempotencyKey)
        while true {
            if let stored = notesByKey[key] {
                guard stored.text == text else { throw IdempotencyKeyReused(key: idempotencyKey) }
                return SavedNote(note: stored, replayed: true)
            }
            guard waitingForKey[key] != nil else { break }
            await withCheckedContinuation { waitingForKey[key, default: []].append($0) }
        }
        waitingForKey[key] = []
        defer {
            for waiting in waitingForKey.removeValue(forKey: key) ?? [] { waiting.resume() }
        }
        let note = try await store(text, for: user)
        notesByKey[key] = note
        return SavedNote(note: note, replayed: false)
    }

    private func store(_ text: String, for user: String) async throws -> Note {
        // The number is taken before the log records, since the actor may serve another request meanwhile; a note
        // whose entry fails leaves its number unused, as a database's sequence does.
        lastID += 1
        let note = Note(id: lastID, text: text, createdAt: Note.timestamp(clock.now()))
        try await auditLog.record("created note \(note.id)")
        notesByUser[user, default: []].append(note)
        return note
    }

    /// The notes of `user`, oldest first.
    public func notes(of user: String) -> [Note] {
        notesByUser[UserName.normalized(user)] ?? []
    }

    /// How many notes the store keeps, for every user together.
    public func count() -> Int {
        notesByUser.values.reduce(0) { $0 + $1.count }
    }
}
