#!/usr/bin/env bash
# Measures the notes server on this machine: the isolation check (100,000 requests over 256 connections, each a random
# user that must come back in its own answer), wrk on the three /bench routes with the same settings, and a soak of
# 1,000,000 requests that reports the server's resident memory after warm-up and at the end.
#
#     bash Examples/Server/load.sh
#
# Settings, from the environment: PORT (8080), DURATION of each wrk run in seconds (15), WRK_THREADS (2),
# WRK_CONNECTIONS (64), ROUNDS of wrk over the three routes (3), CHECK_REQUESTS (100000), SOAK_REQUESTS (1000000), CONNECTIONS for load-check (256).
# The report is printed at the end and kept in .build/load/report.md.
set -euo pipefail
cd "$(dirname "$0")"
source ./serve.sh

started=$SECONDS
port=${PORT:-8080}
duration=${DURATION:-15}
wrk_threads=${WRK_THREADS:-2}
wrk_connections=${WRK_CONNECTIONS:-64}
check_requests=${CHECK_REQUESTS:-100000}
soak_requests=${SOAK_REQUESTS:-1000000}
connections=${CONNECTIONS:-256}
rounds=${ROUNDS:-3}
out=.build/load
base="http://127.0.0.1:$port"

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }

if ! command -v wrk > /dev/null; then
    step "install wrk"
    sudo=""
    if [[ $(id -u) -ne 0 ]]; then sudo=sudo; fi
    $sudo apt-get update && $sudo apt-get install -y wrk
fi

step "release build"
swift build -c release
bin=$(swift build -c release --show-bin-path)
mkdir -p "$out"

step "start notes-server on 127.0.0.1:$port"
start_server "$bin" "$port" "$out/server.log" load

# Resident memory of the server, in kB.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$server/status"; }
# A field of load-check's output, such as "requests/s".
field() { awk -v key="$2:" '$1 == key { print $2 }' "$1"; }

step "isolation check: $check_requests requests over $connections connections"
"$bin/load-check" --port "$port" --requests "$check_requests" --connections "$connections" | tee "$out/isolation.txt"

wrk_args=(-t"$wrk_threads" -c"$wrk_connections" -d"${duration}s" --latency -H 'X-User: alice')
# The routes take turns, round after round, so a slow spell on the shared machine hits each of them alike; the report
# gives each route's median and every round's figure.
for round in $(seq 1 "$rounds"); do
    for route in plain injected dependencies; do
        step "round $round of $rounds: wrk ${wrk_args[*]} $base/bench/$route"
        wrk "${wrk_args[@]}" "$base/bench/$route" | tee "$out/wrk-$route-$round.txt"
        if grep -q "Non-2xx" "$out/wrk-$route-$round.txt"; then
            echo "load: /bench/$route answered with errors" >&2
            exit 1
        fi
        if grep -q "Socket errors" "$out/wrk-$route-$round.txt"; then
            echo "load: warning: wrk saw socket errors on /bench/$route (see above)" >&2
        fi
    done
done

step "soak: $soak_requests requests over $connections connections"
rss_warm=$(rss)
"$bin/load-check" --port "$port" --requests "$soak_requests" --connections "$connections" | tee "$out/soak.txt"
rss_end=$(rss)

# Each round's requests/s for a route, one a line.
requests_per_second() { for r in $(seq 1 "$rounds"); do awk '$1 == "Requests/sec:" { printf "%d\n", $2 }' "$out/wrk-$1-$r.txt"; done; }
# Each round's p99 latency for a route, in ms, one a line.
p99() {
    for r in $(seq 1 "$rounds"); do
        awk '$1 == "99%" {
            v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v)
            printf "%.2f\n", v * (unit == "us" ? 0.001 : unit == "s" ? 1000 : unit == "m" ? 60000 : 1)
        }' "$out/wrk-$1-$r.txt"
    done
}
# The median of the numbers on standard input, printed with the given format (whole numbers by default).
median() {
    sort -g | awk -v format="${1:-%.0f}\n" '{ v[NR] = $1 }
        END { printf format, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
rounds_of() { paste -sd/ - | sed 's|/| / |g'; }
plain=$(requests_per_second plain | median)
injected=$(requests_per_second injected | median)
dependencies=$(requests_per_second dependencies | median)
percent() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", (a - b) / b * 100 }'; }
mb() { awk -v kb="$1" 'BEGIN { printf "%.1f MB", kb / 1024 }'; }
row() {
    echo "| $2 | $3 | $(p99 "$1" | median %.2f) ms | $4 | $(requests_per_second "$1" | rounds_of) |" \
        "$(p99 "$1" | rounds_of) |"
}

{
    echo "Machine: $(nproc) cores, $(uname -m), $(swift --version 2>&1 | head -1)"
    echo
    echo "wrk ${wrk_args[*]}, $rounds rounds of $duration s per route, server and wrk on the same machine;"
    echo "medians, then each round:"
    echo
    echo "| Route | Requests/s | p99 latency | vs \`/bench/plain\` | Requests/s, each round | p99 (ms), each round |"
    echo "|---|---:|---:|---:|---:|---:|"
    row plain "\`/bench/plain\` (no injection)" "$plain" ""
    row injected "\`/bench/injected\` (withInjectedValues per request)" "$injected" "$(percent "$injected" "$plain")"
    row dependencies "\`/bench/dependencies\` (withDependencies per request)" "$dependencies" \
        "$(percent "$dependencies" "$plain")"
    echo
    echo "Injected vs swift-dependencies, requests/s: $(percent "$injected" "$dependencies")"
    echo
    echo "| Check | Requests | Errors | Mismatches | Elapsed | Requests/s |"
    echo "|---|---:|---:|---:|---:|---:|"
    for run in isolation soak; do
        echo "| $run (\`/whoami\`, $connections connections) | $(field "$out/$run.txt" requests) |" \
            "$(field "$out/$run.txt" errors) | $(field "$out/$run.txt" mismatches) |" \
            "$(field "$out/$run.txt" elapsed) s | $(field "$out/$run.txt" requests/s) |"
    done
    echo
    echo "Soak memory (VmRSS of notes-server): $(mb "$rss_warm") after warm-up, $(mb "$rss_end") after" \
        "$soak_requests more requests, ratio $(awk -v a="$rss_end" -v b="$rss_warm" 'BEGIN { printf "%.2f", a / b }')"
} > "$out/report.md"

step "report"
cat "$out/report.md"
echo
echo "load.sh took $((SECONDS - started)) s"
