#!/usr/bin/env bash
# The isolation check with notes, against the in-memory store and then against PostgreSQL: each of 256 connections is
# a user of its own that writes a note and lists its notes, alternately, and checks every list; at the end, every
# user's notes are read back through the API, and straight from the database with psql, and must be exactly the ones
# that user wrote, count and content, each with its audit entry.
#
#     bash Examples/Server/db-load.sh
#
# It installs PostgreSQL if it is missing (Debian's `postgresql`), starts the throw-away cluster of `db.sh` (and stops
# it at the end if it was not running before), and serves both runs with the same release build, unpinned.
#
# Settings, from the environment: PORT (8090), CHECK_REQUESTS (100000), CONNECTIONS (256), and BIN_DIR: the release
# build's directory, when it is built already, as ci.sh's is (else it runs `swift build -c release`). The report is
# printed at the end and kept in .build/db-load/report.md.
set -euo pipefail
cd "$(dirname "$0")"
source ./serve.sh

started=$SECONDS
port=${PORT:-8090}
requests=${CHECK_REQUESTS:-100000}
connections=${CONNECTIONS:-256}
out=.build/db-load

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }
field() { awk -v key="$2:" '$1 == key { print $2 }' "$1"; }

if [[ -n ${BIN_DIR:-} ]]; then
    bin=$BIN_DIR
else
    step "release build"
    swift build -c release
    bin=$(swift build -c release --show-bin-path)
fi
mkdir -p "$out"

step "start PostgreSQL"
start_database
url=$database_url
echo "$url"

stop_server() {
    kill "$server" 2> /dev/null || true
    wait "$server" 2> /dev/null || true
}
finish() {
    stop_server
    stop_database
}

step "in memory: start notes-server on 127.0.0.1:$port"
NOTES_DATABASE_URL="" start_server "$bin" "$port" "$out/memory-server.log" db-load
trap finish EXIT
step "in memory: $requests requests over $connections connections"
"$bin/load-check" --port "$port" --requests "$requests" --connections "$connections" --notes | tee "$out/memory.txt"
stop_server

step "PostgreSQL: start notes-server on 127.0.0.1:$port with --database-url $url"
NOTES_DATABASE_URL=$url start_server "$bin" "$port" "$out/postgres-server.log" db-load
trap finish EXIT
step "PostgreSQL: $requests requests over $connections connections"
"$bin/load-check" --port "$port" --requests "$requests" --connections "$connections" --notes \
    --written "$out/written.tsv" | tee "$out/postgres.txt"
stop_server

run=$(field "$out/postgres.txt" run)
step "the database holds exactly the notes each user of run $run wrote, and an audit entry for each"
check_stored_notes "$run" "$out/written.tsv" "$(field "$out/postgres.txt" written)" "$out" db-load
echo "$stored notes of $users users, each as written and audited once"

row() {
    echo "| $2 | $(field "$1" requests) | $(field "$1" errors) | $(field "$1" mismatches) |" \
        "$(field "$1" requests/s) | $(field "$1" p50) ms | $(field "$1" p99) ms |"
}
{
    echo "Machine: $(nproc) cores, $(uname -m), $(swift --version 2>&1 | head -1), $(bash db.sh psql -tAc 'SHOW server_version')"
    echo
    echo "load-check --notes, $requests requests over $connections connections, server and load-check unpinned," \
        "on loopback. PostgreSQL: the pool's 20 connections, a 2 s wait for one; the cluster of db.sh (fsync off)."
    echo
    echo "| Store | Requests | Errors | Mismatches | Requests/s | p50 | p99 |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    row "$out/memory.txt" "In memory"
    row "$out/postgres.txt" "PostgreSQL"
    echo
    echo "In PostgreSQL afterwards: $stored notes of $users users, each exactly as its user wrote it, and each with its" \
        "audit entry."
} > "$out/report.md"

step "report"
cat "$out/report.md"
echo
echo "db-load.sh took $((SECONDS - started)) s"
