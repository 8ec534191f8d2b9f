// swift-tools-version: 6.1
// A small notes service on Hummingbird 2 that wires its services with Injected and gives every request its own
// dependency scope. A package of its own, so that the library keeps zero dependencies.
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
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ]
        ),
        // `swift run notes-server`: serves on 127.0.0.1:8080 with the in-memory defaults.
        .executableTarget(
            name: "notes-server",
            dependencies: [
                "NotesServer",
                .product(name: "Hummingbird", package: "hummingbird"),
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
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
