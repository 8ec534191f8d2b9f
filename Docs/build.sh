#!/usr/bin/env bash
# Builds the documentation site into .build/docs with the toolchain's docc, and fails on any DocC warning.
# It also typechecks the Swift code in every article, and in the README, against the built modules, so the examples
# cannot drift.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi

work=.build/docs-work
rm -rf "$work" .build/docs
mkdir -p "$work/graphs/Injected" "$work/graphs/InjectedTesting"

echo "== Symbol graphs"
# Only the two library modules are built and extracted, so that the script works on a fresh clone, where no test
# module exists yet for `swift package dump-symbol-graph` to load.
swift build --target InjectedTesting >/dev/null
modules=$(swift build --show-bin-path)/Modules
triple=$(swiftc -print-target-info | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')
sdk=()
if command -v xcrun >/dev/null; then sdk=(-sdk "$(xcrun --show-sdk-path)"); fi
for module in Injected InjectedTesting; do
    swift-symbolgraph-extract -module-name "$module" -target "$triple" "${sdk[@]}" -I "$modules" \
        -minimum-access-level public -skip-synthesized-members -emit-extension-block-symbols \
        -output-dir "$work/graphs/$module" >/dev/null
done

echo "== Parameter documentation"
python3 Docs/Snippets/check_parameters.py "$work/graphs/Injected" "$work/graphs/InjectedTesting"

for module in Injected InjectedTesting; do
    echo "== docc convert $module"
    docc convert "Docs/$module.docc" \
        --additional-symbol-graph-dir "$work/graphs/$module" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.injected.$module" \
        --warnings-as-errors \
        --output-path "$work/$module.doccarchive"
done

echo "== docc merge"
docc merge "$work/Injected.doccarchive" "$work/InjectedTesting.doccarchive" \
    --synthesized-landing-page-name Injected \
    --output-path .build/docs
echo "Documentation written to .build/docs"

echo "== Article code"
# Each unit is a directory of files compiled as one module: main.swift holds the blocks that are fragments, and each
# block with imports of its own is a file of its own, compiled as written (Docs/Snippets/extract.py has the rule).
python3 Docs/Snippets/extract.py Docs/Injected.docc "$work/snippets"
python3 Docs/Snippets/extract.py README.md "$work/snippets"
# The migration guide's "before" code shows the one warning that code copied from the article gets; it must get that
# warning, and no other.
expected_warning="warning: variable 'controller' was never mutated"
status=0
# The sample types article declares what the others use; it is compiled with each of them.
prelude="$work/SampleTypes.swift"
cp "$work/snippets/SampleTypes/main.swift" "$prelude"
for unit in "$work"/snippets/*; do
    name=$(basename "$unit")
    # The sample types are the prelude; code shown as modules of a package is built by Tests/Clients/modules.sh.
    case "$name" in SampleTypes | *-modules) continue ;; esac
    # SwiftUI and UIKit code is typechecked where the framework exists, as on a Mac, and only there.
    if [[ "$name" == *-apple ]] && ! swiftc -typecheck - <<<"import SwiftUI" >/dev/null 2>&1; then
        if ! swiftc -parse "$unit"/*.swift; then
            echo "error: the SwiftUI and UIKit code in $name does not parse" >&2
            status=1
        else
            echo "parsed only: $name (SwiftUI and UIKit code; this platform has neither, so it is not typechecked)"
        fi
        continue
    fi
    case "$name" in
        *-before) flags=(-swift-version 5) ;;  # the article's code, as Swift 5 projects build it
        *) flags=(-swift-version 6 -warnings-as-errors) ;;
    esac
    # SwiftUI and UIKit code uses the article's other code, which it is compiled with; the article's main.swift is
    # renamed, since a module has one file of that name.
    article=()
    if [[ "$name" == *-apple ]] && [ -d "$work/snippets/${name%-apple}" ]; then
        for file in "$work/snippets/${name%-apple}"/*.swift; do
            if [ "$(basename "$file")" = main.swift ]; then
                cp "$file" "$work/${name%-apple}-main.swift"
                file="$work/${name%-apple}-main.swift"
            fi
            article+=("$file")
        done
    fi
    if output=$(swiftc -typecheck -diagnostic-style llvm "${flags[@]}" -I "$modules" "$prelude" "${article[@]}" \
        "$unit"/*.swift 2>&1); then
        unexpected=$(grep -E "(warning|error):" <<<"$output" | grep -vF "$expected_warning" || true)
        if [ -n "$unexpected" ]; then
            echo "$unexpected" >&2
            echo "error: the code in $name compiles with diagnostics (blocks extracted to $unit)" >&2
            status=1
        elif [ "$name" = MigratingFromTheArticle-before ] && ! grep -qF "$expected_warning" <<<"$output"; then
            echo "error: $name no longer gets the warning the migration guide describes" >&2
            status=1
        else
            echo "ok: $name"
        fi
    else
        echo "$output" >&2
        echo "error: the code in $name does not compile (blocks extracted to $unit)" >&2
        status=1
    fi
done
exit $status
