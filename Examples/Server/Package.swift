// swift-tools-version: 6.1
// A small notes service on Hummingbird 2 that wires its services with Injected and gives every request its own
// dependency scope, storing its notes in PostgreSQL (through PostgresNIO) or, with no database configured, in memory.
// A package of its own, so that the library keeps zero dependencies.
import PackageDescription

let package = Package(
    name: "InjectedServerExample",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Injected", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        // Already in the graph through Hummingbird and AsyncHTTPClient; named here because the code imports
        // HTTPTypes (header names) and NIOCore (timeouts and buffers) itself, pinned at the versions they resolve to.
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        // The HTTP parts a channel handler of the server's sees (NIOHTTPTypes), in the graph through Hummingbird.
        .package(url: "https://github.com/apple/swift-nio-extras.git", exact: "1.35.2"),
        // The database client, and the logging API it and Hummingbird log through.
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        // The service group that runs the server and the pool, with a bound on the graceful shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // Only for the comparison route, /bench/dependencies.
        .package(url: "https://github.com/pointfreeco/swift-dependencies", exact: "1.17.1"),
        // Only for the load-check client.
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
    ],
    targets: [
        // The service: keys, services, the per-request middleware and the routes.
        .target(
            name: "NotesServer",
            dependencies: [
                .product(name: "Injected", package: "Injected"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ]
        ),
        // `swift run notes-server`: serves on 127.0.0.1:8080, with the in-memory defaults or on PostgreSQL.
        .executableTarget(
            name: "notes-server",
            dependencies: [
                "NotesServer",
                .product(name: "Injected", package: "Injected"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // A client that checks, under load, that every response names its own request's user.
        .executableTarget(
            name: "load-check",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "NotesServerTests",
            dependencies: [
                "NotesServer",
                .product(name: "Injected", package: "Injected"),
                .product(name: "InjectedTesting", package: "Injected"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
