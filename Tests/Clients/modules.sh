#!/usr/bin/env bash
# Builds and tests the code that the documentation shows as the modules of a package, an app and its test target, the
# way users lay it out: each block marked `<!-- snippet: module NAME -->` goes into module NAME (a test target when
# NAME ends in Tests), with the sample types, in a package that depends on this one. The README's test value beside its
# key, and the test that reads it, are such code.
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
    for module in "$modules"/*; do
        name=$(basename "$module")
        if [[ "$name" == *Tests ]]; then
            mkdir -p "$package/Tests/$name"
            cp "$module/code.swift" "$package/Tests/$name/$name.swift"
        else
            mkdir -p "$package/Sources/$name"
            cp "$module/code.swift" "$package/Sources/$name/$name.swift"
            sed '1d' "$out/snippets/SampleTypes/main.swift" >"$package/Sources/$name/SampleTypes.swift"
            sed -i '1i import Injected' "$package/Sources/$name/SampleTypes.swift"
            libraries="$libraries \"$name\","
        fi
    done
    for module in "$modules"/*; do
        name=$(basename "$module")
        injected='.product(name: "Injected", package: "Injected")'
        testing='.product(name: "InjectedTesting", package: "Injected")'
        if [[ "$name" == *Tests ]]; then
            targets="$targets .testTarget(name: \"$name\", dependencies: [$libraries $injected, $testing]),"
        else
            targets="$targets .target(name: \"$name\", dependencies: [$injected]),"
        fi
    done
    cat >"$package/Package.swift" <<MANIFEST
// swift-tools-version: 6.0
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
