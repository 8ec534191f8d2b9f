// swift-tools-version: 6.1
// Benchmarks for Injected, side by side with the article's pattern, swift-dependencies and Swinject.
// A package of its own, so that the library keeps zero dependencies. Run it with `bash Benchmarks/run.sh`.
import PackageDescription

let package = Package(
    name: "InjectedBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Injected", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
        .package(url: "https://github.com/pointfreeco/swift-dependencies", exact: "1.17.1"),
    ],
    targets: [
        // The article's pattern as projects copied it: unprotected static storage, compiled in Swift 5 mode.
        .target(
            name: "ArticleBaseline",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // Up to 10,000 distinct keys, shared with Instructions/Client.swift.
        .target(
            name: "ManyKeys",
            dependencies: [.product(name: "Injected", package: "Injected")]
        ),
        .executableTarget(
            name: "InjectedBenchmarks",
            dependencies: [
                "ArticleBaseline",
                "ManyKeys",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Injected", package: "Injected"),
                .product(name: "Swinject", package: "Swinject"),
                .product(name: "Dependencies", package: "swift-dependencies"),
            ],
            path: "Benchmarks/InjectedBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
