#!/usr/bin/env bash
# What CI runs for the server example: build, test, then serve a release build and load it for about ten seconds,
# checking that every response names its own request's user. Fails on a warning in this package's own code, a test
# failure, an error response, or a single mismatch.
#
#     bash Examples/Server/ci.sh          # PORT=18080 by default; set PORT to use another
set -euo pipefail
cd "$(dirname "$0")"

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

step "swift test"
swift test --skip-build

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
"$bin/notes-server" --port "$port" > .build/ci-server.log 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
    if curl -fsS -H 'X-User: ci' "http://127.0.0.1:$port/whoami" > /dev/null 2>&1; then break; fi
    if ! kill -0 "$server" 2>/dev/null; then
        echo "ci: notes-server exited:" >&2
        cat .build/ci-server.log >&2
        exit 1
    fi
    sleep 0.1
done
kill -0 "$server" 2>/dev/null || { echo "ci: notes-server is not running" >&2; exit 1; }

step "load for ${seconds} s with the isolation check"
"$bin/load-check" --port "$port" --seconds "$seconds" --connections 256

step "done"
echo "ci.sh took $((SECONDS - started)) s"
