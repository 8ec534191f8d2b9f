import HTTPTypes
import Hummingbird

// Safe retries of `POST /notes`. A client that sends `Idempotency-Key` with a post may send the same post again, with
// the same key, as often as it likes (after a 503, a timeout, a connection that died before the answer): the note is
// stored once for the user and the key, and each retry is answered as the first post was.

extension HTTPField.Name {
    /// The `Idempotency-Key` header of a `POST /notes`: the client's name for one note it means to store once.
    public static let idempotencyKey = Self("Idempotency-Key")!

    /// The `Idempotent-Replayed` header, `true` on an answer that repeats the answer to an earlier post with the same
    /// key, rather than storing the note again.
    public static let idempotentReplayed = Self("Idempotent-Replayed")!
}

/// The key a client gives a post so that retrying it stores its note once: visible ASCII, 1 to 128 characters.
///
/// Keys are compared byte by byte, per user: two users may use the same key for notes of their own. They are kept
/// with the note, for as long as the note is.
public struct IdempotencyKey: Hashable, Sendable, CustomStringConvertible {
    /// The longest key accepted, in characters.
    public static let maximumLength = 128

    /// The key, as the client sent it.
    public let value: String

    /// The key, if `value` is one: 1 to ``maximumLength`` characters from `!` to `~` (ASCII, no spaces).
    ///
    /// ASCII only, so that a key has one spelling: a key in another normalization would be another key in PostgreSQL.
    public init?(_ value: String) {
        guard (1...Self.maximumLength).contains(value.utf8.count), value.utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        self.value = value
    }

    /// The key, as the client sent it.
    public var description: String { value }

    /// The key a request gives in its one `Idempotency-Key` header; `nil` without one.
    ///
    /// - Throws: A 400 `HTTPError` for two headers, or for a key that is empty, too long, or not visible ASCII.
    static func of(_ request: Request) throws -> IdempotencyKey? {
        let fields = request.headers[fields: .idempotencyKey]
        guard let field = fields.first else { return nil }
        guard fields.count == 1 else {
            throw HTTPError(
                .badRequest,
                message: "The Idempotency-Key header appears more than once: give a post one key."
            )
        }
        guard let key = IdempotencyKey(field.value) else {
            throw HTTPError(
                .badRequest,
                message: "The Idempotency-Key header must be 1 to \(maximumLength) visible ASCII characters, "
                    + "such as a UUID; it has \(field.value.utf8.count) bytes."
            )
        }
        return key
    }
}

/// A note as a post stored it: new, or the one an earlier post with the same idempotency key stored.
public struct SavedNote: Equatable, Sendable {
    /// The note.
    public var note: Note
    /// Whether an earlier post with the same key stored it, so that this post stored nothing.
    public var replayed: Bool

    /// Makes the outcome of a post.
    ///
    /// - Parameters:
    ///   - note: The note stored.
    ///   - replayed: Whether an earlier post stored it.
    public init(note: Note, replayed: Bool) {
        self.note = note
        self.replayed = replayed
    }
}

/// A post reused the idempotency key of an earlier post of the same user, with another note's text: answered 422,
/// storing nothing.
public struct IdempotencyKeyReused: Error, CustomStringConvertible {
    /// The key.
    public var key: IdempotencyKey

    /// Makes the error.
    ///
    /// - Parameter key: The key that was reused.
    public init(key: IdempotencyKey) {
        self.key = key
    }

    /// The message the client gets.
    public var description: String {
        "The Idempotency-Key \(key) was already used for a note with another text: "
            + "a retry must send the same note, and a new note needs a new key."
    }

    /// The 422 the client gets.
    var httpError: HTTPError { HTTPError(.unprocessableContent, message: description) }
}
