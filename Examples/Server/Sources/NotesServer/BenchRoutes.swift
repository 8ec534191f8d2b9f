import Dependencies
import Hummingbird
import Injected

// Three routes that do the same trivial work, answer the name of the user making the request, in three ways, each
// behind a middleware that checks the header. The difference between their throughputs is what a per-request scope
// costs. Each scoped route's middleware sets just
// the user, so the two libraries are compared on the same work; `RequestScopeMiddleware`, which also makes up a
// request id, is what /notes and /whoami use.

/// The comparison routes under `/bench`.
enum BenchRoutes {
    static func add(to router: Router<NotesApplication.Context>) {
        // No injection: a middleware that checks the header as the others do, and a handler that reads it itself.
        router.group("bench/plain")
            .add(middleware: PlainUserMiddleware())
            .get { request, _ -> String in
                guard let user = try RequestErrors.user(of: request) else { throw RequestErrors.missingUser }
                return user
            }

        // A withInjectedValues scope per request; the handler reads the user through Injected.
        router.group("bench/injected")
            .add(middleware: InjectedUserMiddleware())
            .get { _, _ -> String in
                @Injected(\.currentUser) var user
                guard let user else { throw RequestErrors.missingUser }
                return user
            }

        // A withDependencies scope per request; the handler reads the user through swift-dependencies.
        router.group("bench/dependencies")
            .add(middleware: DependenciesUserMiddleware())
            .get { _, _ -> String in
                @Dependency(\.benchUser) var user
                guard let user else { throw RequestErrors.missingUser }
                return user
            }
    }
}

/// Checks the user header and passes the request on: the same middleware layer as the scoped routes, without a scope,
/// so that the comparison measures the scope alone.
struct PlainUserMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard try RequestErrors.user(of: request) != nil else { throw RequestErrors.missingUser }
        return try await next(request, context)
    }
}

/// Opens a `withInjectedValues` scope per request that holds the request's user, and nothing else.
struct InjectedUserMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let user = try RequestErrors.user(of: request) else { throw RequestErrors.missingUser }
        return try await withInjectedValues {
            $0.currentUser = user
        } operation: {
            try await next(request, context)
        }
    }
}

/// Opens a swift-dependencies `withDependencies` scope per request that holds the request's user, and nothing else.
struct DependenciesUserMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let user = try RequestErrors.user(of: request) else { throw RequestErrors.missingUser }
        return try await withDependencies {
            $0.benchUser = user
        } operation: {
            try await next(request, context)
        }
    }
}

/// The swift-dependencies key of the request's user, for `/bench/dependencies` only.
private enum BenchUserKey: DependencyKey {
    static let liveValue: String? = nil
    static let testValue: String? = nil
}

extension DependencyValues {
    /// The user making the request, as `DependenciesUserMiddleware` sets it.
    var benchUser: String? {
        get { self[BenchUserKey.self] }
        set { self[BenchUserKey.self] = newValue }
    }
}
