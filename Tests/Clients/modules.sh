#!/usr/bin/env bash
# Builds and tests the code that the documentation shows as the modules of a package, an app and its test target, the
# way users lay it out: each block marked `<!-- snippet: module NAME -->` is a file of module NAME (a test target when
# NAME ends in Tests), in a package that depends on this one. The README's test value beside its key, and the test
# that reads it, are such code. A module marked `main-actor` gets the main actor as its default isolation, as a new
# Xcode app does; any other library module gets the sample types too. A module that imports a library the
# documentation only mentions, such as FactoryKit, gets a stand-in for it from Docs/Snippets/StandIns.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
root=$PWD
python3 Docs/Snippets/extract.py Docs/Injected.docc "$out/snippets"
python3 Docs/Snippets/extract.py README.md "$out/snippets"
for modules in "$out"/snippets/*-modules; do
    [ -d "$modules" ] || continue
    package="$out/packages/$(basename "$modules")"
    targets=""
    libraries=""
    standins=""
    for module in "$modules"/*; do
        name=$(basename "$module")
        if [[ "$name" == *Tests ]]; then
            mkdir -p "$package/Tests/$name"
            cp "$module"/*.swift "$package/Tests/$name/"
        else
            mkdir -p "$package/Sources/$name"
            cp "$module"/*.swift "$package/Sources/$name/"
            if [ ! -e "$module/main-actor" ]; then
                sed '1d' "$out/snippets/SampleTypes/main.swift" >"$package/Sources/$name/SampleTypes.swift"
                sed -i '1i import Injected' "$package/Sources/$name/SampleTypes.swift"
            fi
            libraries="$libraries \"$name\","
        fi
        for standin in Docs/Snippets/StandIns/*; do
            standin=$(basename "$standin")
            if cat "$module"/*.swift | grep -qx "import $standin" && [[ " $standins " != *" $standin "* ]]; then
                standins="$standins $standin"
                mkdir -p "$package/Sources/$standin"
                cp Docs/Snippets/StandIns/"$standin"/*.swift "$package/Sources/$standin/"
                targets="$targets .target(name: \"$standin\"),"
            fi
        done
    done
    for module in "$modules"/*; do
        name=$(basename "$module")
        injected='.product(name: "Injected", package: "Injected")'
        testing='.product(name: "InjectedTesting", package: "Injected")'
        settings=""
        if [ -e "$module/main-actor" ]; then settings="swiftSettings: [.defaultIsolation(MainActor.self)]"; fi
        uses=""
        for standin in $standins; do
            if cat "$module"/*.swift | grep -qx "import $standin"; then uses="$uses \"$standin\","; fi
        done
        if [[ "$name" == *Tests ]]; then
            # A test target links what the modules it tests use, stand-ins included, so it names them too.
            uses=""
            for standin in $standins; do uses="$uses \"$standin\","; done
            targets="$targets .testTarget(name: \"$name\", dependencies: [$libraries $uses $injected, $testing], $settings),"
        else
            targets="$targets .target(name: \"$name\", dependencies: [$uses $injected], $settings),"
        fi
    done
    cat >"$package/Package.swift" <<MANIFEST
// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "DocumentedModules",
    dependencies: [.package(name: "Injected", path: "$root")],
    targets: [$targets]
)
MANIFEST
    echo "== $(basename "$modules"): $(ls "$modules" | tr '\n' ' ')"
    swift build --build-tests --package-path "$package" -Xswiftc -warnings-as-errors
    swift test --package-path "$package"
done
