// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Injected",
    // The oldest systems the single file supports; it needs POSIX threads, so Linux and Android work too.
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6), .visionOS(.v1)],
    products: [
        .library(name: "Injected", targets: ["Injected"]),
        .library(name: "InjectedTesting", targets: ["InjectedTesting"]),
        .executable(name: "InjectedDemo", targets: ["InjectedDemo"]),
    ],
    targets: [
        // The whole library is one file, Sources/Injected/Injected.swift, so that it can be copied into a project.
        .target(name: "Injected"),
        // Test support: a Swift Testing trait and an XCTest base class. Kept apart so the library never imports Testing.
        .target(name: "InjectedTesting", dependencies: ["Injected"]),
        .executableTarget(name: "InjectedDemo", dependencies: ["Injected"]),
        .testTarget(name: "InjectedTests", dependencies: ["Injected", "InjectedTesting"]),
        .testTarget(name: "InjectedTestingTests", dependencies: ["Injected", "InjectedTesting"]),
        .testTarget(
            name: "InjectedDemoTests",
            dependencies: ["InjectedDemo", "Injected", "InjectedTesting"],
            exclude: ["Helpers"]
        ),
        // Code copied from the article declares keys as plain `static var`s, which only Swift 5 mode accepts.
        // This target compiles that code unchanged, the way projects still on Swift 5 build it.
        .testTarget(
            name: "InjectedSwift5Tests",
            dependencies: ["Injected"],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
    ],
    swiftLanguageModes: [.v6]
)
