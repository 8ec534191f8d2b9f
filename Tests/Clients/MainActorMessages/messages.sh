#!/usr/bin/env bash
# Checks the compiler messages that the main-actor recipe in Docs/Injected.docc/Recipes.md quotes: Weather.swift, in a
# module whose default isolation is the main actor and which imports the library's module, compiles; with one
# `nonisolated` removed, it fails with the quoted message, word for word, and the recipe quotes it. A compiler that
# words them differently fails this check, so the table is updated with it. The same for the two messages that the
# XCTest section of Docs/Injected.docc/TestingWithInjected.md quotes, from CartTests.swift.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fixture=Tests/Clients/MainActorMessages/Weather.swift
recipe=Docs/Injected.docc/Recipes.md
swift build --target Injected >/dev/null
modules=$(swift build --show-bin-path)/Modules
compile() {
    swiftc -swift-version 6 -default-isolation MainActor -parse-as-library -typecheck -I "$modules" "$1"
}
compile "$fixture"
status=0
# Each line: the declaration whose `nonisolated` is removed, then the message that must follow.
while IFS='|' read -r removed message; do
    sed "s/^\( *\)nonisolated $removed/\1$removed/" "$fixture" >"$out/Weather.swift"
    if compile "$out/Weather.swift" >"$out/log" 2>&1; then
        echo "error: Weather.swift compiled without '$removed'" >&2
        status=1
    elif ! grep -qF "error: $message" "$out/log"; then
        sed -n '1,20p' "$out/log" >&2
        echo "error: without '$removed', Swift did not say: $message" >&2
        status=1
    elif ! grep -qF "$message" "$recipe"; then
        echo "error: the recipe does not quote: $message" >&2
        status=1
    else
        echo "ok: without '$removed': $message"
    fi
done <<'CASES'
enum WeatherKey|main actor-isolated conformance of 'WeatherKey' to 'ReadOnlyInjectionKey' cannot be used in nonisolated context
var weather|cannot form key path to main actor-isolated property 'weather'
var weather|type 'WritableKeyPath<InjectedValues, any WeatherService>' does not conform to the 'Sendable' protocol
var weather|main actor-isolated default value in a actor-isolated context
protocol WeatherService|call to main actor-isolated instance method 'unit()' in a synchronous nonisolated context
struct Forecast|call to main actor-isolated instance method 'summary()' in a synchronous nonisolated context
CASES

# The XCTest section of the testing article quotes two more, from CartTests.swift: each line is the sed script that
# takes the mark away (the first makes the test method what a test method first is, synchronous and unmarked), then
# the message that must follow.
swift build --target InjectedTesting >/dev/null
fixture=Tests/Clients/MainActorMessages/CartTests.swift
article=Docs/Injected.docc/TestingWithInjected.md
compile "$fixture"
while IFS='|' read -r script message; do
    sed "$script" "$fixture" >"$out/CartTests.swift"
    if compile "$out/CartTests.swift" >"$out/log" 2>&1; then
        echo "error: CartTests.swift compiled after '$script'" >&2
        status=1
    elif ! grep -qF "error: $message" "$out/log"; then
        sed -n '1,20p' "$out/log" >&2
        echo "error: after '$script', Swift did not say: $message" >&2
        status=1
    elif ! grep -qF "$message" <(tr '\n' ' ' <"$article" | tr -s ' '); then
        echo "error: the testing article does not quote: $message" >&2
        status=1
    else
        echo "ok: after '$script': $message"
    fi
done <<'CASES'
/^    @MainActor$/d; s/ async {$/ {/|call to main actor-isolated instance method 'add' in a synchronous nonisolated context
s/^nonisolated final class/final class/|main actor-isolated instance method 'invokeTest()' has different actor isolation from nonisolated overridden declaration
CASES
exit $status
