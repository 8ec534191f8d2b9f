// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Injected",
    platforms: [.iOS(.v13), .macOS(.v10_15), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Injected", targets: ["Injected"]),
        .executable(name: "InjectedDemo", targets: ["InjectedDemo"]),
    ],
    targets: [
        // The whole library is one file, Sources/Injected/Injected.swift, so that it can be copied into a project.
        .target(name: "Injected"),
        .executableTarget(name: "InjectedDemo", dependencies: ["Injected"]),
        .testTarget(name: "InjectedTests", dependencies: ["Injected"]),
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
