import Foundation
import HTTPTypes
import Hummingbird
import Injected
import PostgresNIO
import Synchronization

extension HTTPField.Name {
    /// The `X-User` header, which names the user making the request.
    ///
    /// This demo trusts it; a real service would check a token instead.
    public static let user = Self("X-User")!

    /// The `X-Request-ID` header: the request's id, taken from the client when it sends one, and echoed back.
    public static let requestID = Self("X-Request-ID")!
}

/// What the service answers when a request names no user, or names it in a way that could be taken for another.
enum RequestErrors {
    /// 401, naming the header that is missing.
    static let missingUser = HTTPError(
        .unauthorized,
        message: "Missing X-User header: name the user making the request, for example X-User: alice."
    )

    /// 400: two `X-User` headers name two users, or one twice; the server takes neither, rather than both joined.
    static let repeatedUser = HTTPError(
        .badRequest,
        message: "The X-User header appears more than once: name one user, in one X-User header."
    )

    /// 400: the name is not valid UTF-8, so two different names could read as the same one.
    static let userNotUTF8 = HTTPError(
        .badRequest,
        message: "The X-User header is not valid UTF-8: send the user's name in UTF-8."
    )

    /// The user a request names in its one `X-User` header, in Unicode's NFC form; `nil` if the header is missing or
    /// blank.
    ///
    /// NIO's HTTP/1 parser decodes a header's bytes with every byte that is not UTF-8 replaced by U+FFFD, so names
    /// that differ only there would read as one user: a name holding U+FFFD is refused, as are raw bytes that are not
    /// UTF-8. A name spelled in NFD (`e` then a combining accent) and in NFC (`é`) is one name, and one user in both
    /// stores, since both are given its NFC form.
    ///
    /// - Throws: ``repeatedUser`` for more than one `X-User` header, ``userNotUTF8`` for a name that is not UTF-8.
    static func user(of request: Request) throws -> String? {
        let fields = request.headers[fields: .user]
        guard let field = fields.first else { return nil }
        guard fields.count == 1 else { throw repeatedUser }
        guard let value = field.withUnsafeBytesOfValue({ String(validating: $0, as: UTF8.self) }),
            !value.unicodeScalars.contains("\u{FFFD}")
        else { throw userNotUTF8 }
        let user = value.trimmingCharacters(in: .whitespaces)
        return user.isEmpty ? nil : UserName.normalized(user)
    }
}

/// How the service spells a user's name: one spelling per name, so that both stores compare names alike.
public enum UserName {
    /// `name` in Unicode's normalization form C, which both stores key notes by: Swift's strings compare canonically
    /// equivalent spellings as equal, PostgreSQL compares bytes, so without it NFC and NFD spellings of one name would
    /// be one user in memory and two in PostgreSQL.
    ///
    /// - Parameter name: A user's name, in any normalization.
    /// - Returns: The name in NFC.
    public static func normalized(_ name: String) -> String {
        // ASCII is already in NFC, and is what nearly every request sends.
        if name.utf8.allSatisfy({ $0 < 0x80 }) { return name }
        return name.precomposedStringWithCanonicalMapping
    }
}

/// Opens one dependency scope per request, holding that request's id and user.
///
/// Everything that handles the request runs inside the scope, including tasks it starts with `async let` or
/// `Task {}`, so each read of `\.requestID` and `\.currentUser`, by a handler or by a service built once at start-up,
/// returns this request's values, however many requests run at once. A request without an `X-User` header is
/// answered with 401 before any handler runs.
public struct RequestScopeMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Makes the middleware.
    public init() {}

    /// Serves `request` inside a scope that holds its id and user, and echoes the id in the response, errors included.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - context: The request's context.
    ///   - next: The rest of the chain, down to the route's handler.
    /// - Returns: The handler's response, with an `X-Request-ID` header.
    /// - Throws: A 401 `HTTPError` when the request names no user; an `HTTPError` the handler throws, with the id;
    ///   and for any other error, a 500 `HTTPError` that gives the id.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let id = request.headers[.requestID] ?? RequestIDs.next()
        do {
            guard let user = try RequestErrors.user(of: request) else { throw RequestErrors.missingUser }
            var response = try await withInjectedValues {
                $0.requestID = id
                $0.currentUser = user
            } operation: {
                try await next(request, context)
            }
            response.headers[.requestID] = id
            return response
        } catch var error as HTTPError {
            error.headers[.requestID] = id
            throw error
        } catch let error as any HTTPResponseError {
            // An error that knows its status, such as NIO's for a body over its limit (413): that status, with the id.
            throw HTTPError(
                error.status,
                headers: [.requestID: id],
                message: "The request failed (\(error.status.code) \(error.status.reasonPhrase)); its id is \(id)."
            )
        } catch {
            // Anything else is the server's fault: a 500 that says so, with the id to find it in the logs by.
            throw HTTPError(
                .internalServerError,
                headers: [.requestID: id],
                message: "The server failed to handle the request; its id is \(id)."
            )
        }
    }
}

/// Request ids the server makes up: a random prefix for this run, then a counter.
enum RequestIDs {
    private static let prefix = String(UInt32.random(in: .min ... .max), radix: 16)
    private static let counter = Atomic<Int>(0)

    /// A new id, unique in this process.
    static func next() -> String {
        let number = counter.add(1, ordering: .relaxed).newValue
        return "\(prefix)-\(number)"
    }
}

/// Runs each mutating request in a database transaction, whose connection the request's scope holds, and answers 503
/// while the database cannot be reached.
///
/// Put it after `RequestScopeMiddleware`, so that the transaction's scope is nested in the request's. The store and
/// the audit log read the transaction through `@Injected(\.transaction)` and write through it, so that a note and its
/// audit entry are committed together, or, if anything in the request throws (a 400 for a bad body included), rolled
/// back together. Reads (`GET`, `HEAD`) need no transaction. With no database configured, it passes requests on.
///
/// It reads the request's body before it takes a connection, so that a client sending its body slowly holds no
/// connection of the pool's meanwhile.
public struct TransactionMiddleware<Context: RequestContext>: RouterMiddleware {
    @Injected(\.database) private var database

    /// Makes the middleware; it reads the database where it is made, which is at start-up.
    public init() {}

    /// Serves `request`, in a transaction if it changes anything.
    ///
    /// - Throws: A 503 `HTTPError` naming the cause when the database cannot be reached, or what the handler throws.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            guard let database, ![.get, .head].contains(request.method) else { return try await next(request, context) }
            var buffered = request
            _ = try await NotesController.body(of: &buffered)
            let request = buffered
            return try await database.withTransaction { transaction in
                try await withInjectedValues {
                    $0.transaction = transaction
                } operation: {
                    try await next(request, context)
                }
            }
        } catch let unavailable as DatabaseUnavailable {
            throw HTTPError(.serviceUnavailable, message: unavailable.description)
        } catch let error as PSQLError where Self.saysTheDatabaseIsUnavailable(error) {
            throw HTTPError(.serviceUnavailable, message: DatabaseUnavailable(cause: Self.cause(of: error)).description)
        }
    }

    /// Whether `error` says that the connection to the database was lost, or that the database is shutting down or
    /// starting, rather than that a query was wrong.
    static func saysTheDatabaseIsUnavailable(_ error: PSQLError) -> Bool {
        if [.connectionError, .serverClosedConnection, .clientClosedConnection, .poolClosed].contains(error.code) {
            return true
        }
        // Class 57, operator intervention: the server was shut down or restarted, or is not yet accepting connections.
        return error.serverInfo?[.sqlState]?.hasPrefix("57") == true
    }

    /// What a 503 names as the cause: the database's own message, or the error under the lost connection.
    static func cause(of error: PSQLError) -> String {
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return String(describing: underlying) }
        return "the connection to the database was lost (\(error.code))"
    }
}
