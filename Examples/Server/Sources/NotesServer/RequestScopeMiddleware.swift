import Foundation
import HTTPTypes
import Hummingbird
import Injected
import Synchronization

extension HTTPField.Name {
    /// The `X-User` header, which names the user making the request.
    ///
    /// This demo trusts it; a real service would check a token instead.
    public static let user = Self("X-User")!

    /// The `X-Request-ID` header: the request's id, taken from the client when it sends one, and echoed back.
    public static let requestID = Self("X-Request-ID")!
}

/// What the service answers when a request names no user.
enum RequestErrors {
    /// 401, naming the header that is missing.
    static let missingUser = HTTPError(
        .unauthorized,
        message: "Missing X-User header: name the user making the request, for example X-User: alice."
    )

    /// The user a request names in `X-User`, or `nil` if the header is missing or blank.
    static func user(of request: Request) -> String? {
        guard let user = request.headers[.user]?.trimmingCharacters(in: .whitespaces), !user.isEmpty else {
            return nil
        }
        return user
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

    /// Serves `request` inside a scope that holds its id and user, and echoes the id in the response.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - context: The request's context.
    ///   - next: The rest of the chain, down to the route's handler.
    /// - Returns: The handler's response, with an `X-Request-ID` header.
    /// - Throws: A 401 `HTTPError` when the request names no user, or what the handler throws.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let user = RequestErrors.user(of: request) else { throw RequestErrors.missingUser }
        let id = request.headers[.requestID] ?? RequestIDs.next()
        var response = try await withInjectedValues {
            $0.requestID = id
            $0.currentUser = user
        } operation: {
            try await next(request, context)
        }
        response.headers[.requestID] = id
        return response
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
