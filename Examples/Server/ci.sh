#!/usr/bin/env bash
# What CI runs for the server example: build, test, then serve a release build and load it for about ten seconds,
# checking that every response names its own request's user. Fails on a warning in this package's own code, a test
# failure, an error response, or a single mismatch.
#
#     bash Examples/Server/ci.sh          # PORT=18080 by default; set PORT to use another
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
start_server "$bin" "$port" .build/ci-server.log ci

step "load for ${seconds} s with the isolation check"
"$bin/load-check" --port "$port" --seconds "$seconds" --connections 256

step "done"
echo "ci.sh took $((SECONDS - started)) s"
