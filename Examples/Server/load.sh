#!/usr/bin/env bash
# Measures the notes server on this machine: the isolation check (100,000 requests over 256 connections, each a random
# user that must come back in its own answer), wrk on the three /bench routes with the same settings, and a soak of
# 1,000,000 requests that reports the server's resident memory after warm-up and at the end.
#
#     bash Examples/Server/load.sh
#
# The server runs on one core with one event loop, and wrk and load-check on another, so that the server is what limits
# the throughput and the routes are compared on the server's work alone, not on how the load generator and the server
# share the cores. On a machine with one core, both run unpinned.
#
# Settings, from the environment: PORT (8080), DURATION of each wrk run in seconds (1), WRK_CONNECTIONS (64), ROUNDS
# of wrk over the three routes (60), CHECK_REQUESTS (100000), SOAK_REQUESTS (1000000), CONNECTIONS for load-check
# (256), SERVER_CPU and CLIENT_CPU (1 and 0). The report is printed at the end and kept in .build/load/report.md.
set -euo pipefail
cd "$(dirname "$0")"
source ./serve.sh

started=$SECONDS
port=${PORT:-8080}
duration=${DURATION:-1}
wrk_connections=${WRK_CONNECTIONS:-64}
check_requests=${CHECK_REQUESTS:-100000}
soak_requests=${SOAK_REQUESTS:-1000000}
connections=${CONNECTIONS:-256}
rounds=${ROUNDS:-60}
out=.build/load
base="http://127.0.0.1:$port"

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }

if ! command -v wrk > /dev/null; then install_package wrk; fi

step "release build"
swift build -c release
bin=$(swift build -c release --show-bin-path)
mkdir -p "$out"

client=()
if [[ $(nproc) -ge 2 ]]; then
    export SERVER_CPU=${SERVER_CPU:-1}
    client=(taskset -c "${CLIENT_CPU:-0}")
fi

step "start notes-server on 127.0.0.1:$port${SERVER_CPU:+, on core $SERVER_CPU with one event loop}"
start_server "$bin" "$port" "$out/server.log" load

# Resident memory of the server, in kB.
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$server/status"; }
# The server's processor time so far, user and system, in clock ticks.
ticks() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
# A field of load-check's output, such as "requests/s".
field() { awk -v key="$2:" '$1 == key { print $2 }' "$1"; }

step "isolation check: $check_requests requests over $connections connections"
"${client[@]}" "$bin/load-check" --port "$port" --requests "$check_requests" --connections "$connections" \
    | tee "$out/isolation.txt"

wrk_args=(-t1 -c"$wrk_connections" -d"${duration}s" --latency -H 'X-User: alice')
# The routes take turns, round after round, so a slow spell on the shared machine hits each of them alike, and each
# round compares the routes measured next to each other; the report gives the median of those per-round changes, each
# route's median, and every round's figure. Rounds are short and many because this virtual machine's speed changes in
# steps: a step then spoils one round's comparison, not a long one's, and the median sets it aside.
for round in $(seq 1 "$rounds"); do
    for route in plain injected dependencies; do
        step "round $round of $rounds: wrk ${wrk_args[*]} $base/bench/$route"
        before=$(ticks)
        "${client[@]}" wrk "${wrk_args[@]}" "$base/bench/$route" | tee "$out/wrk-$route-$round.txt"
        echo "$(($(ticks) - before))" > "$out/ticks-$route-$round.txt"
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
"${client[@]}" "$bin/load-check" --port "$port" --requests "$soak_requests" --connections "$connections" \
    | tee "$out/soak.txt"
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
# Each round's server processor time per request for a route, in µs, one a line.
hz=$(getconf CLK_TCK)
cpu_per_request() {
    for r in $(seq 1 "$rounds"); do
        awk -v ticks="$(cat "$out/ticks-$1-$r.txt")" -v hz="$hz" \
            '$2 == "requests" && $3 == "in" { printf "%.2f\n", ticks / hz * 1000000 / $1 }' "$out/wrk-$1-$r.txt"
    done
}
# Each round's change in requests/s of route $1 against route $2 in the same round, in percent, one a line.
round_changes() {
    paste <(requests_per_second "$1") <(requests_per_second "$2") | awk '{ printf "%+.1f\n", ($1 - $2) / $2 * 100 }'
}
# The median of the numbers on standard input, printed with the given format (whole numbers by default).
median() {
    sort -g | awk -v format="${1:-%.0f}\n" '{ v[NR] = $1 }
        END { printf format, (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
rounds_of() { paste -sd/ - | sed 's|/| / |g'; }
mb() { awk -v kb="$1" 'BEGIN { printf "%.1f MB", kb / 1024 }'; }
row() {
    local change=""
    if [[ $1 != plain ]]; then change=$(round_changes "$1" plain | median %+.1f)%; fi
    echo "| $2 | $(requests_per_second "$1" | median) | $(p99 "$1" | median %.2f) ms |" \
        "$(cpu_per_request "$1" | median %.1f) µs | $change | $(requests_per_second "$1" | rounds_of) |" \
        "$(p99 "$1" | rounds_of) |"
}

{
    echo "Machine: $(nproc) cores, $(uname -m), $(swift --version 2>&1 | head -1)"
    echo
    echo "wrk ${wrk_args[*]}, $rounds rounds of $duration s per route taking turns, on loopback;" \
        "${SERVER_CPU:+server on core $SERVER_CPU with one event loop, wrk on core ${CLIENT_CPU:-0};}" \
        "medians, then each round. The change against \`/bench/plain\` is the median of each round's change."
    echo
    echo "| Route | Requests/s | p99 latency | Server CPU per request | vs \`/bench/plain\` |" \
        "Requests/s, each round | p99 (ms), each round |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    row plain "\`/bench/plain\` (no injection)"
    row injected "\`/bench/injected\` (withInjectedValues per request)"
    row dependencies "\`/bench/dependencies\` (withDependencies per request)"
    echo
    echo "Injected vs swift-dependencies, requests/s, median of each round's change:" \
        "$(round_changes injected dependencies | median %+.1f)% (each round, %: $(round_changes injected dependencies | rounds_of))"
    echo "Injected vs no injection, each round's change in requests/s, %: $(round_changes injected plain | rounds_of)"
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
