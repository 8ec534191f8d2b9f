#!/usr/bin/env bash
# Counts the instructions one read executes, with callgrind, for the article's pattern and for Injected. Unlike wall
# time on a shared machine, the counts do not depend on load or on code layout, so their ratios repeat exactly.
# Each side is its own module built with -O, as in an app. Prints a Markdown table; needs valgrind. With
# --build-only, it only builds the client, for tasks.sh and wallclock.sh. With --check, it counts each read that
# instructions-baseline.txt lists and fails if any costs more than 3% above its baseline: callgrind's counts repeat
# exactly, so this check cannot flake.
set -euo pipefail
cd "$(dirname "$0")"
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
work=.build/instructions
mkdir -p "$work"
swiftc -O -wmo -parse-as-library -module-name Injected -emit-module -emit-library \
    -o "$work/libInjected.so" -emit-module-path "$work/Injected.swiftmodule" ../Sources/Injected/Injected.swift
swiftc -O -wmo -swift-version 5 -parse-as-library -module-name ArticleBaseline -emit-module -emit-library \
    -o "$work/libArticleBaseline.so" -emit-module-path "$work/ArticleBaseline.swiftmodule" \
    Sources/ArticleBaseline/ArticleBaseline.swift
swiftc -O -wmo -parse-as-library -module-name ManyKeys -emit-module -emit-library -I "$work" -L "$work" -lInjected \
    -o "$work/libManyKeys.so" -emit-module-path "$work/ManyKeys.swiftmodule" Sources/ManyKeys/ManyKeys.swift
swiftc -O -I "$work" -L "$work" -lInjected -lArticleBaseline -lManyKeys -Xlinker -rpath -Xlinker "$PWD/$work" \
    Instructions/Client.swift -o "$work/client"
if [ "${1:-}" = "--build-only" ]; then exit 0; fi

# Dictionaries hash with a seed chosen per process, which moves keys between buckets and changes the count of a
# lookup by a few instructions from run to run; a fixed seed makes the counts repeat exactly.
export SWIFT_DETERMINISTIC_HASHING=1

# Instructions for 11,000 reads (or requests) minus those for 1,000, over 10,000: start-up cancels out.
per_read() {
    local small large
    small=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/client" "$1" 1000 2>&1 \
        | awk '/Collected/ { print $4 }')
    large=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/client" "$1" 11000 2>&1 \
        | awk '/Collected/ { print $4 }')
    echo $(((large - small) / 10000))
}

if [ "${1:-}" = "--check" ]; then
    failed=0
    echo "| Read | Baseline | Now | Change |"
    echo "|---|---|---|---|"
    while read -r mode baseline _; do
        case "$mode" in ''|'#'*) continue ;; esac
        count=$(per_read "$mode")
        change=$(awk "BEGIN { printf \"%+.1f%%\", ($count - $baseline) * 100 / $baseline }")
        echo "| ${mode//-/ } | $baseline | $count | $change |"
        if [ $((count * 100)) -gt $((baseline * 103)) ]; then
            echo "error: ${mode//-/ } costs $count instructions, more than 3% above its baseline of $baseline" >&2
            failed=1
        fi
    done < instructions-baseline.txt
    exit $failed
fi

article=$(per_read article)
echo "| Read | Instructions | Ratio to the article's pattern |"
echo "|---|---|---|"
echo "| Article pattern: @Injected read | $article | 1.00× |"
for mode in nothing-overridden cached-default global-override inside-one-scope scope-overrides-another-key made-in-an-ended-scope \
    article-style-key; do
    count=$(per_read "$mode")
    echo "| Injected: @Injected read, ${mode//-/ } | $count | $(awk "BEGIN { printf \"%.2f\", $count / $article }")× |"
done

# Reads of ten keys in turn with 10 and with 10,000 keys overridden: the store's cost should not grow with the number
# of keys.
ten=$(per_read 10-keys)
many=$(per_read 10000-keys)
echo
echo "| Read through a key's subscript, ten keys in turn | Instructions | Ratio to 10 keys |"
echo "|---|---|---|"
echo "| Injected: read with 10 keys overridden | $ten | 1.00× |"
echo "| Injected: read with 10000 keys overridden | $many | $(awk "BEGIN { printf \"%.2f\", $many / $ten }")× |"

# A server's request, in one task: a middleware's scope holding the request's user, and a handler that makes an
# @Injected property and reads it; against a bare task-local binding of the same value, the least any task-local scope
# costs, and against no scope at all.
plain=$(per_read request-plain)
task_local=$(per_read request-task-local)
scope=$(per_read request-scope)
echo
echo "| One request | Instructions | Ratio to a bare task-local |"
echo "|---|---|---|"
echo "| No scope: the handler is passed the value | $plain | $(awk "BEGIN { printf \"%.2f\", $plain / $task_local }")× |"
echo "| A bare \`TaskLocal.withValue\` binding the value | $task_local | 1.00× |"
echo "| Injected: \`withInjectedValues\` and an \`@Injected\` read | $scope | $(awk "BEGIN { printf \"%.2f\", $scope / $task_local }")× |"
