#!/usr/bin/env bash
# Runs the benchmark suite on this machine and writes the results to Docs/Benchmarks.md and Docs/Benchmarks.svg.
# Takes about ten minutes after the first build. Every ratio comes from benchmarks of this run, never old numbers.
set -euo pipefail
cd "$(dirname "$0")"
if [ -d /opt/swift/usr/bin ]; then export PATH="/opt/swift/usr/bin:$PATH"; fi
# The raw results stay in .build, so report.py can be rerun on them without measuring again.
results=.build/benchmark-results
mkdir -p "$results"
swift package --allow-writing-to-package-directory benchmark --format jmh --path "$results" --no-progress
instructions=""
if command -v valgrind >/dev/null; then
    bash instructions.sh > "$results/instructions.md"
    instructions="$results/instructions.md"
fi
bash tasks.sh > "$results/tasks.md"
wallclock=""
if [ -n "$instructions" ]; then
    bash wallclock.sh > "$results/wallclock.md"
    wallclock="$results/wallclock.md"
fi
python3 report.py "$results/Current_run.jmh.json" ../Docs/Benchmarks.md ../Docs/Benchmarks.svg "$results/tasks.md" \
    $instructions $wallclock
echo "Wrote Docs/Benchmarks.md and Docs/Benchmarks.svg"
