// swift-tools-version: 6.2
// An app whose default isolation is the main actor (SE-0466), as new Xcode app projects make, using Injected as a
// package: keys, accessors, `@Injected` in a view model, a scope, and a Swift Testing test with the trait.
// `Tests/Clients/run.sh` builds, runs and tests it, and also compiles its sources with `Injected.swift` copied in.
import PackageDescription

let mainActorByDefault: [SwiftSetting] = [.defaultIsolation(MainActor.self)]

let package = Package(
    name: "MainActorApp",
    dependencies: [.package(name: "Injected", path: "../../..")],
    targets: [
        .target(
            name: "WeatherCore",
            dependencies: [.product(name: "Injected", package: "Injected")],
            swiftSettings: mainActorByDefault
        ),
        .executableTarget(name: "WeatherApp", dependencies: ["WeatherCore"], swiftSettings: mainActorByDefault),
        .testTarget(
            name: "WeatherCoreTests",
            dependencies: ["WeatherCore", .product(name: "InjectedTesting", package: "Injected")],
            swiftSettings: mainActorByDefault
        ),
    ]
)
