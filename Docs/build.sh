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
swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members --emit-extension-block-symbols >/dev/null
graphs=$(dirname "$(find .build -path '*symbolgraph/Injected.symbols.json' | head -n 1)")
cp "$graphs"/Injected.symbols.json "$work/graphs/Injected/"
cp "$graphs"/InjectedTesting.symbols.json "$graphs"/InjectedTesting@*.symbols.json "$work/graphs/InjectedTesting/"

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
swift build --target InjectedTesting >/dev/null
modules=$(swift build --show-bin-path)/Modules
python3 Docs/Snippets/extract.py Docs/Injected.docc "$work/snippets"
python3 Docs/Snippets/extract.py README.md "$work/snippets"
status=0
for unit in "$work"/snippets/*; do
    name=$(basename "$unit")
    case "$name" in
        *-before) flags=(-swift-version 5) ;;  # the article's code, as Swift 5 projects build it
        *) flags=(-swift-version 6 -warnings-as-errors) ;;
    esac
    if swiftc -typecheck "${flags[@]}" -I "$modules" Docs/Snippets/Prelude.swift "$unit/main.swift"; then
        echo "ok: $name"
    else
        echo "error: the code in $name does not compile (blocks extracted to $unit/main.swift)" >&2
        status=1
    fi
done
exit $status
