import Foundation
import HTTPTypes
import Hummingbird
import Injected
import NIOCore

/// Builds the notes service: its router, and the application that serves it.
public enum NotesApplication {
    /// The request context every route uses.
    public typealias Context = BasicRequestContext

    /// Makes the service's application, listening where `configuration` says.
    ///
    /// Tests call it inside their own scope, so the routes use that test's store, clock and audit log. With a database
    /// configured, the application runs its connection pool as one of its services, creates the tables before it
    /// listens, and shuts the pool down after the server when it stops.
    ///
    /// - Parameters:
    ///   - configuration: Where to listen, and the server's other settings.
    ///   - requestDeadline: How long a request may take before it is answered 503 and its work abandoned.
    ///   - limits: The header and idle timeouts of its connections, and the cap on how many it holds at once.
    ///   - memoryTrimming: When it gives the memory of closed connections back to the operating system.
    ///   - inFlight: The requests in flight, which ``ShutdownBound`` answers when the server shuts down.
    /// - Returns: The application, ready to run or to test.
    public static func make(
        configuration: ApplicationConfiguration = .init(),
        requestDeadline: Duration = defaultRequestDeadline,
        limits: ConnectionLimits = ConnectionLimits(),
        memoryTrimming: MemoryTrimming = MemoryTrimming(),
        inFlight: InFlightRequests = InFlightRequests()
    ) -> some ApplicationProtocol {
        let count = ConnectionCount(cap: limits.maximumConnections)
        var application = Application(
            responder: DeadlineResponder(
                inner: makeRouter().buildResponder(),
                deadline: requestDeadline,
                inFlight: inFlight
            ),
            server: server(limits: limits, count: count),
            configuration: configuration
        )
        application.addServices(MemoryTrimmer(count: count, trimming: memoryTrimming))
        if let database = InjectedValues[\.database] {
            application.addServices(database.client)
            application.beforeServerStarts { try await database.migrate() }
        }
        return application
    }

    /// How long a request may take, unless `NOTES_REQUEST_DEADLINE` says otherwise: 5 s.
    public static let defaultRequestDeadline = Duration.seconds(5)

    /// The request deadline that `NOTES_REQUEST_DEADLINE` names, as a number of seconds (`5`, `0.5`); `nil` unless
    /// it is a number above 0.
    ///
    /// - Parameter seconds: The variable's value.
    /// - Returns: The deadline, or `nil`.
    public static func requestDeadline(seconds: String) -> Duration? {
        guard let value = Double(seconds.trimmingCharacters(in: .whitespaces)), value > 0, value.isFinite else {
            return nil
        }
        return .milliseconds(max(1, Int((value * 1_000).rounded())))
    }

    /// Makes the router with every route of the service.
    ///
    /// Middleware is attached to route groups, so each route has only what it needs: `/notes` and `/whoami` run
    /// inside ``RequestScopeMiddleware`` and, with a database, ``TransactionMiddleware``, `/bench/injected` and `/bench/dependencies` inside their one-value scopes,
    /// and `/bench/plain` inside none. Every `GET` route answers `HEAD` too: the same status and headers, no body.
    ///
    /// - Returns: The router.
    public static func makeRouter() -> Router<Context> {
        let router = Router(context: Context.self, options: .autoGenerateHeadEndpoints)
        let notes = NotesController()

        router.group()
            .add(middleware: RequestScopeMiddleware())
            .add(middleware: TransactionMiddleware())
            .post("notes") { request, context in try await notes.create(request, context: context) }
            .get("notes") { _, _ in try await notes.list() }
            .get("whoami") { _, _ in try notes.whoAmI() }

        BenchRoutes.add(to: router)
        return router
    }
}

/// The request body of `POST /notes`.
struct NewNote: Decodable {
    var text: String?
}

/// What `GET /whoami` answers: who the server thinks is asking.
public struct WhoAmI: Codable, Equatable, Sendable {
    /// The user named in the request's `X-User` header.
    public var user: String
    /// The request's id: its `X-Request-ID` header, or one the server made up.
    public var requestID: String

    /// Makes an answer.
    ///
    /// - Parameters:
    ///   - user: The user asking.
    ///   - requestID: The request's id.
    public init(user: String, requestID: String) {
        self.user = user
        self.requestID = requestID
    }
}

extension Note: ResponseEncodable {}
extension WhoAmI: ResponseEncodable {}

/// The handlers of `/notes` and `/whoami`, made once with the router.
///
/// It keeps no request state: its `@Injected` properties are read on every request, inside that request's scope, so
/// they return the request's own id and user, and the store the scope sees.
struct NotesController: Sendable {
    @Injected(\.notesStore) private var store
    @Injected(\.currentUser) private var user
    @Injected(\.requestID) private var requestID

    /// The longest body `POST /notes` reads.
    static let maximumBodySize = 64 * 1_024

    /// `POST /notes`: saves a note for the current user, and answers 201 with it.
    ///
    /// With an `Idempotency-Key`, a post whose key the user has used before stores nothing and answers as the first
    /// did, 201 with the note it stored, marked `Idempotent-Replayed: true`; or 422 if that note's text differs.
    func create(_ request: Request, context: some RequestContext) async throws -> EditedResponse<Note> {
        let user = try currentUser()
        let key = try IdempotencyKey.of(request)
        let text = try await Self.text(of: request)
        let saved: SavedNote
        do {
            saved = try await store.add(text, for: user, idempotencyKey: key)
        } catch let reused as IdempotencyKeyReused {
            throw reused.httpError
        }
        var headers = HTTPFields()
        if saved.replayed { headers[.idempotentReplayed] = "true" }
        return EditedResponse(status: .created, headers: headers, response: saved.note)
    }

    /// `GET /notes`: the current user's notes, oldest first.
    func list() async throws -> [Note] {
        let user = try currentUser()
        return try await store.notes(of: user)
    }

    /// `GET /whoami`: the user and the request id, as the request's scope holds them.
    func whoAmI() throws -> WhoAmI {
        WhoAmI(user: try currentUser(), requestID: requestID)
    }

    private func currentUser() throws -> String {
        guard let user else { throw RequestErrors.missingUser }
        return user
    }

    /// The body of `POST /notes`, read to its end: JSON, at most ``maximumBodySize`` bytes.
    ///
    /// A body that does not say it is `application/json` is refused with 415 before it is read. A body over the limit
    /// is refused with 413 as soon as that is known: from its `Content-Length` before reading any of it, or else once
    /// the bytes read pass the limit. The 413 closes the connection (`Connection: close`), so the rest of the body is
    /// not read to its end (``CloseAfterResponseHandler``).
    ///
    /// - Parameter request: The request; its body is kept in it, collected, so that reading it again costs nothing.
    /// - Returns: The body.
    /// - Throws: A 415 or a 413 `HTTPError`.
    static func body(of request: inout Request) async throws -> ByteBuffer {
        let mediaType = request.headers[.contentType]?.split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard mediaType == "application/json" else {
            let sent = request.headers[.contentType].map { "is \($0)" } ?? "is missing"
            throw HTTPError(
                .unsupportedMediaType,
                message:
                    "The request body must be JSON, sent with Content-Type: application/json; its Content-Type \(sent)."
            )
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > maximumBodySize {
            throw tooLarge
        }
        do {
            return try await request.collectBody(upTo: maximumBodySize)
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
    }

    /// 413, closing the connection so that the rest of the body is not read.
    static let tooLarge = HTTPError(
        .contentTooLarge,
        headers: [.connection: "close"],
        message: "The request body is larger than \(maximumBodySize / 1_024) KiB: a note must be shorter."
    )

    /// The text of a new note, or a 415, 413 or 400 error that says what is wrong with the body.
    static func text(of request: Request) async throws -> String {
        var request = request
        let body = try await body(of: &request)
        let example = #"send a JSON object like {"text": "Buy milk"}"#
        guard body.readableBytes > 0 else {
            throw HTTPError(.badRequest, message: "The request body is empty: \(example).")
        }
        let input: NewNote
        do {
            input = try JSONDecoder().decode(NewNote.self, from: Data(body.readableBytesView))
        } catch DecodingError.typeMismatch(_, let context) where !context.codingPath.isEmpty {
            throw HTTPError(.badRequest, message: #"The "text" field must be a string: \#(example)."#)
        } catch DecodingError.typeMismatch {
            throw HTTPError(.badRequest, message: "The request body must be a JSON object: \(example).")
        } catch {
            throw HTTPError(.badRequest, message: "The request body is not valid JSON: \(example).")
        }
        guard let text = input.text else {
            throw HTTPError(.badRequest, message: #"The JSON body has no "text" field: \#(example)."#)
        }
        guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw HTTPError(.badRequest, message: #"The "text" field is empty: write something in the note."#)
        }
        // PostgreSQL's text cannot hold the NUL character; the in-memory store refuses it too, so both answer alike.
        guard !text.unicodeScalars.contains("\u{0}") else {
            throw HTTPError(
                .badRequest,
                message: #"The "text" field contains a NUL character (\u0000), which a note cannot hold."#
            )
        }
        return text
    }
}
