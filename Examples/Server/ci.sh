#!/usr/bin/env bash
# What CI runs for the server example: build; test, with the integration suite on a throw-away PostgreSQL (db.sh);
# serve a release build and load it for about ten seconds, checking that every response names its own request's user;
# then the notes load against the in-memory store and PostgreSQL (db-load.sh, 20,000 requests), checking every user's
# notes in the database; then the fault suite on the same release build (faults.sh, about 70 s):
# PostgreSQL's backends ended, killed and restarted under load, SIGTERM with requests hung, hostile input, and 2,000
# idle connections against the cap. Fails on a warning in this package's own code, a test failure, an error response,
# a single mismatch, or a fault check. It installs PostgreSQL (and python3, for faults.sh) if it is missing.
#
#     bash Examples/Server/ci.sh          # PORT=18080 by default (PORT+1 for the notes load, PORT+2 to PORT+6 for
#                                         # the fault suite); set PORT to change
set -euo pipefail
cd "$(dirname "$0")"
source ./serve.sh

started=$SECONDS
port=${PORT:-18080}
seconds=${LOAD_SECONDS:-10}
mkdir -p .build
log=.build/ci-build.log

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }

# Warnings from this package's own files, in what a build printed: dependencies' warnings are not ours to fix.
own_warnings() {
    grep -E "/Examples/Server/(Sources|Tests|Package\.swift).*warning:" "$1" || true
}

step "swift build"
swift build --build-tests 2>&1 | tee "$log"
warnings=$(own_warnings "$log")

step "start PostgreSQL for the integration suite"
start_database
trap stop_database EXIT
export NOTES_TEST_DATABASE_URL=$database_url
echo "$NOTES_TEST_DATABASE_URL"

step "swift test, with the integration suite on $NOTES_TEST_DATABASE_URL"
swift test --skip-build
stop_database
trap - EXIT

step "release build"
swift build -c release 2>&1 | tee -a "$log"
warnings+=$(own_warnings "$log")
if [[ -n "$warnings" ]]; then
    echo "ci: warnings in the example's own code:" >&2
    echo "$warnings" >&2
    exit 1
fi
bin=$(swift build -c release --show-bin-path)

step "start notes-server on 127.0.0.1:$port"
start_server "$bin" "$port" .build/ci-server.log ci

step "load for ${seconds} s with the isolation check"
"$bin/load-check" --port "$port" --seconds "$seconds" --connections 256
kill "$server" && wait "$server" 2> /dev/null || true

step "notes load, in memory and on PostgreSQL"
BIN_DIR=$bin PORT=$((port + 1)) CHECK_REQUESTS=${DB_LOAD_REQUESTS:-20000} bash db-load.sh

step "fault suite: backends ended under load, SIGTERM with requests hung, hostile input, idle connections"
BIN_DIR=$bin PORT=$((port + 2)) bash faults.sh

step "done"
echo "ci.sh took $((SECONDS - started)) s"
