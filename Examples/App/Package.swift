// swift-tools-version: 6.1
// The model layer of a small reading-list app that wires its dependencies with Injected: Observation models on the
// main actor, an API client that is an actor, a clock, a store that saves JSON files, a callback-style API, and their
// tests. It builds and tests on Linux too, since Observation ships with the toolchain. A package of its own, beside
// Examples/Server, so that the library keeps zero dependencies.
import PackageDescription

let package = Package(
    name: "InjectedAppExample",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "Injected", path: "../..")
    ],
    targets: [
        // The models, their dependencies' keys, and the live and in-memory services.
        .target(
            name: "ReadingList",
            dependencies: [.product(name: "Injected", package: "Injected")]
        ),
        .testTarget(
            name: "ReadingListTests",
            dependencies: [
                "ReadingList",
                .product(name: "Injected", package: "Injected"),
                .product(name: "InjectedTesting", package: "Injected"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
