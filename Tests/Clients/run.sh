#!/usr/bin/env bash
# Compiles two apps against the single library file, as users who copy it do, and runs them:
# one in Swift 5 mode with the article's key forms, one in Swift 6 mode with complete concurrency checking.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
library=Sources/Injected/Injected.swift

swiftc -swift-version 5 -warnings-as-errors "$library" Tests/Clients/Swift5Client/main.swift -o "$out/swift5"
swiftc -swift-version 6 -strict-concurrency=complete -warnings-as-errors \
    "$library" Tests/Clients/Swift6Client/main.swift -o "$out/swift6"

"$out/swift5" | tee "$out/swift5.log"
"$out/swift6" | tee "$out/swift6.log"
grep -qx "swift5 client: ok" "$out/swift5.log"
grep -qx "swift6 client: ok" "$out/swift6.log"
