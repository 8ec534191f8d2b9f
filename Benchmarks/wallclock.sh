#!/usr/bin/env bash
# Times reads against the article's pattern on the wall clock: 41 rounds of 50,000 reads of each kind, in an order that
# turns with the round, the library compiled as its own release module (as instructions.sh builds it). Prints the median
# of the per-round ratios, and the middle half, as a Markdown table. Timings move with the shared machine's load: read
# them beside the instruction counts, which do not.
set -euo pipefail
cd "$(dirname "$0")"
bash instructions.sh --build-only
echo "| @Injected read, against the article's pattern | Median of 41 rounds | Middle half of rounds |"
echo "|---|---|---|"
.build/instructions/client wall-clock 50000 | while read -r median low high; do
    case "${row:-0}" in
        0) label="Injected: nothing overridden" ;;
        1) label="Injected: inside a scope, through an object made outside it" ;;
        *) label="Injected: inside the scope the object was made in" ;;
    esac
    row=$((${row:-0} + 1))
    awk -v l="$label" -v m="$median" -v a="$low" -v b="$high" 'BEGIN { printf "| %s | %.2f× | %.2f–%.2f× |\n", l, m, a, b }'
done
