import Foundation
import Hummingbird
import Injected

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
    /// - Parameter configuration: Where to listen, and the server's other settings.
    /// - Returns: The application, ready to run or to test.
    public static func make(configuration: ApplicationConfiguration = .init()) -> some ApplicationProtocol {
        var application = Application(router: makeRouter(), configuration: configuration)
        if let database = InjectedValues[\.database] {
            application.addServices(database.client)
            application.beforeServerStarts { try await database.migrate() }
        }
        return application
    }

    /// Makes the router with every route of the service.
    ///
    /// Middleware is attached to route groups, so each route has only what it needs: `/notes` and `/whoami` run
    /// inside ``RequestScopeMiddleware`` and, with a database, ``TransactionMiddleware``, `/bench/injected` and `/bench/dependencies` inside their one-value scopes,
    /// and `/bench/plain` inside none.
    ///
    /// - Returns: The router.
    public static func makeRouter() -> Router<Context> {
        let router = Router(context: Context.self)
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
    func create(_ request: Request, context: some RequestContext) async throws -> EditedResponse<Note> {
        let user = try currentUser()
        let text = try await Self.text(of: request)
        let note = try await store.add(text, for: user)
        return EditedResponse(status: .created, response: note)
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

    /// The text of a new note, or a 400 error that says what is wrong with the body.
    static func text(of request: Request) async throws -> String {
        let body = try await request.body.collect(upTo: maximumBodySize)
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
