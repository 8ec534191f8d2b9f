#!/usr/bin/env bash
# Compiles two apps against the single library file, as users who copy it do, and runs them:
# one in Swift 5 mode with the article's key forms, one in Swift 6 mode with complete concurrency checking.
# Also checks that Swift 6 mode rejects a dependency that is not Sendable, and an article key's variable that does not
# say `nonisolated(unsafe)`, both of which Swift 5 mode accepts, and builds an app
# whose default isolation is the main actor, with the file copied in and with the package, and the code the
# documentation shows as an app module with its test module (modules.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
library=Sources/Injected/Injected.swift

swiftc -swift-version 5 -warnings-as-errors "$library" Tests/Clients/Swift5Client/main.swift -o "$out/swift5"
swiftc -swift-version 6 -strict-concurrency=complete -warnings-as-errors \
    "$library" Tests/Clients/Swift6Client/main.swift -o "$out/swift6"

# A dependency that is not Sendable: rejected in Swift 6 mode with the compiler's own error, accepted in Swift 5 mode.
if swiftc -swift-version 6 -typecheck "$library" Tests/Clients/NonSendableClient/main.swift 2>"$out/nonsendable.log"
then
    echo "error: a key whose value is not Sendable compiled in Swift 6 mode" >&2
    exit 1
fi
grep -q "type 'Cart' does not conform to the 'Sendable' protocol" "$out/nonsendable.log" || {
    cat "$out/nonsendable.log" >&2
    echo "error: Swift 6 mode rejected the non-Sendable key, but not with the Sendable error" >&2
    exit 1
}
echo "non-sendable client: rejected in Swift 6 mode"
swiftc -swift-version 5 -warnings-as-errors -typecheck "$library" Tests/Clients/NonSendableClient/main.swift

# An article-style key whose stored variable is not marked: rejected in Swift 6 mode, which reports the global variable
# that nothing isolates, and accepted in Swift 5 mode.
if swiftc -swift-version 6 -typecheck "$library" Tests/Clients/UnmarkedVariableClient/main.swift 2>"$out/unmarked.log"
then
    echo "error: an InjectionKey whose stored currentValue is not nonisolated(unsafe) compiled in Swift 6 mode" >&2
    exit 1
fi
grep -q "static property 'currentValue' is not concurrency-safe because it is nonisolated global shared mutable state" \
    "$out/unmarked.log" || {
    cat "$out/unmarked.log" >&2
    echo "error: Swift 6 mode rejected the unmarked variable, but not with the global-variable error" >&2
    exit 1
}
echo "unmarked variable client: rejected in Swift 6 mode"
swiftc -swift-version 5 -warnings-as-errors "$library" Tests/Clients/UnmarkedVariableClient/main.swift -o "$out/unmarked"
"$out/unmarked" | grep -qx "unmarked variable client: https://staging.example.com"

# Copied beside a user's own types with every name the file uses, and beside a Sendable key-path conformance.
bash Tests/Clients/copy-in.sh

"$out/swift5" | tee "$out/swift5.log"
"$out/swift6" | tee "$out/swift6.log"
grep -qx "swift5 client: ok" "$out/swift5.log"
grep -qx "swift6 client: ok" "$out/swift6.log"

# An app whose default isolation is the main actor (SE-0466, Swift 6.2 and newer): with the file copied into it, and
# with the library as a package, built, run and tested.
app=Tests/Clients/MainActorApp
if swiftc -default-isolation MainActor -parse-as-library -typecheck - </dev/null 2>/dev/null; then
    swiftc -swift-version 6 -default-isolation MainActor -warnings-as-errors \
        "$library" "$app/Sources/WeatherCore/Weather.swift" "$app/Sources/WeatherApp/main.swift" -o "$out/main-actor"
    "$out/main-actor" | tee "$out/main-actor.log"
    grep -qx "main-actor client: ok" "$out/main-actor.log"
    swift build --package-path "$app" --scratch-path "$out/main-actor-package" -Xswiftc -warnings-as-errors
    swift run --package-path "$app" --scratch-path "$out/main-actor-package" WeatherApp | tee "$out/main-actor-package.log"
    grep -qx "main-actor client: ok" "$out/main-actor-package.log"
    swift test --package-path "$app" --scratch-path "$out/main-actor-package"
    # And with both files copied in: the library into the app's module, the test support into its test target, with the
    # one line the test support's header asks for.
    copied="$out/main-actor-copied"
    mkdir -p "$copied/Sources/WeatherCore" "$copied/Tests/WeatherCoreTests"
    cp "$app/Sources/WeatherCore/Weather.swift" "$library" "$copied/Sources/WeatherCore/"
    cp "$app/Tests/WeatherCoreTests/WeatherViewModelTests.swift" "$copied/Tests/WeatherCoreTests/"
    sed 's/^#if canImport(Injected)$/@testable import WeatherCore\n\n&/' Sources/InjectedTesting/InjectedTesting.swift \
        >"$copied/Tests/WeatherCoreTests/InjectedTesting.swift"
    cat >"$copied/Package.swift" <<'MANIFEST'
// swift-tools-version: 6.2
import PackageDescription

let mainActorByDefault: [SwiftSetting] = [.defaultIsolation(MainActor.self)]

let package = Package(
    name: "MainActorAppCopied",
    targets: [
        .target(name: "WeatherCore", swiftSettings: mainActorByDefault),
        .testTarget(name: "WeatherCoreTests", dependencies: ["WeatherCore"], swiftSettings: mainActorByDefault),
    ]
)
MANIFEST
    swift build --build-tests --package-path "$copied" -Xswiftc -warnings-as-errors
    swift test --package-path "$copied"
    # The compiler messages the main-actor recipe quotes, word for word.
    bash Tests/Clients/MainActorMessages/messages.sh
else
    echo "skipped: this compiler has no -default-isolation (Swift 6.2 and newer)"
fi
bash Tests/Clients/modules.sh
