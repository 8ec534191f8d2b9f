#!/usr/bin/env bash
# Times reads in two child tasks at once against one, in pairs of batches, for the article's pattern, for Injected with
# nothing overridden (a factory key, and a key of the default lifetime, whose value the store keeps), for Injected
# inside one scope that both tasks inherit, and for Injected in a scope of each task's own, as a server's requests,
# reading a key that scope does not override, alone or nested in one scope both share, and for both tasks reading
# through one object made in a scope that has ended. Prints a Markdown table.
#
# It is a program of its own rather than a benchmark of the harness because, inside the harness, a benchmark's child
# tasks ran one after the other, even for the article's pattern, which takes no lock.
set -euo pipefail
cd "$(dirname "$0")"
bash instructions.sh --build-only
client=.build/instructions/client
echo "| Two child tasks vs one | Median of 40 pairs | Middle half of pairs |"
echo "|---|---|---|"
for mode in article nothing-overridden cached-default inside-one-scope scope-overrides-another-key \
    nested-scope-overrides-another-key one-object-made-in-an-ended-scope; do
    # The client prints (median, lower quartile, upper quartile).
    read -r median low high < <("$client" "tasks-$mode" 200000 | tr -d '(),')
    label="Injected, ${mode//-/ }"
    if [ "$mode" = article ]; then label="Article pattern (the control)"; fi
    if [ "$mode" = nothing-overridden ]; then label="Injected, nothing overridden (a factory key)"; fi
    if [ "$mode" = cached-default ]; then label="Injected, nothing overridden (a key the store keeps the value of)"; fi
    if [ "$mode" = scope-overrides-another-key ]; then
        label="Injected, each task in a scope of its own, reading a key that scope does not override"
    fi
    if [ "$mode" = nested-scope-overrides-another-key ]; then
        label="The same, each task's scope nested in one scope that both share"
    fi
    if [ "$mode" = one-object-made-in-an-ended-scope ]; then
        label="Injected, both tasks through one object made in a scope that has ended"
    fi
    awk -v l="$label" -v m="$median" -v a="$low" -v b="$high" 'BEGIN { printf "| %s | %.2f× | %.2f–%.2f× |\n", l, m, a, b }'
done
