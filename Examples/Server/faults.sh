#!/usr/bin/env bash
# The fault suite: the release notes-server under the faults it must survive, on loopback only, against the throw-away
# PostgreSQL cluster of db.sh. Each phase is bounded in time and fails the script, with the reason, when its check does:
#
#   backends  load-check --notes over 64 connections for 30 s, retrying 503s and unanswered requests with the same
#             Idempotency-Key, while the server's PostgreSQL backends are ended with pg_terminate_backend() (6 rounds,
#             2 s apart), one backend is killed with kill -9 (PostgreSQL then restarts every backend), and the cluster
#             is stopped and started once. Every note written must be in the database exactly once, with its audit
#             entry; no single attempt may take longer than the request deadline (5 s) and 1 s; and then the pool must
#             be back: 2,000 requests without retries, all answered 2xx, in at most 10 s.
#   sigterm   8 requests (4 posts, 4 lists) hung on a lock that psql holds on the notes table; SIGTERM must end the
#             server within its bound of 10 s (and 0.5 s for the process to go), and each request must be answered 503:
#             under a 60 s request deadline, which outlasts the graceful shutdown, by the shutdown 7 s after the
#             signal, and under the default of 5 s, at its deadline.
#   input     hostile input over loopback, on the in-memory store: two X-User headers and a name not in UTF-8 (400),
#             a body over 64 KiB (413), a text/plain body (415), HEAD /notes (200, no body), a 401 with its
#             X-Request-ID, a half-sent head (closed within NOTES_HEADER_TIMEOUT=1 and 0.5 s, unanswered) and an idle
#             keep-alive connection (closed within NOTES_IDLE_TIMEOUT=2 and 0.5 s, not before 1.5 s).
#   idle      IDLE_CONNECTIONS idle connections, opened as fast as they connect, against the cap of 1,024
#             (NOTES_MAX_CONNECTIONS at its default; NOTES_IDLE_TIMEOUT=300, so that none is closed for idleness while
#             measured): exactly the cap held, every other one answered 503 and closed (or, its accept queue full, not
#             connected within 5 s); the server's VmRSS, warmed up, must grow by at most IDLE_RSS_GROWTH_MB while they
#             are held, and be within IDLE_RSS_RETURN_MB of where it started 3 s after they close; and the server
#             serves again.
#
#     bash Examples/Server/faults.sh
#     PHASES=idle IDLE_CONNECTIONS=15000 bash Examples/Server/faults.sh   # the by-hand measurement of the README
#
# Settings, from the environment: PORT (8100; the phases use PORT to PORT+4), PHASES ("backends sigterm input idle"),
# IDLE_CONNECTIONS (2000), IDLE_RSS_GROWTH_MB (30), IDLE_RSS_RETURN_MB (5), and BIN_DIR: the release build's
# directory, when it is built already, as ci.sh's is (else it runs `swift build -c release`, which takes 10 s or more
# even when nothing changed). It installs PostgreSQL and python3 if they are missing, starts the cluster (and stops it
# at the end if it was not running before), and stops every server it started. The report is printed at the end and
# kept in .build/faults/report.md, the servers' logs and load-check's output beside it.
set -euo pipefail
cd "$(dirname "$0")"
source ./serve.sh

started=$SECONDS
port=${PORT:-8100}
phases=${PHASES:-backends sigterm input idle}
idle_connections=${IDLE_CONNECTIONS:-2000}
rss_growth_limit=${IDLE_RSS_GROWTH_MB:-30}
rss_return_limit=${IDLE_RSS_RETURN_MB:-5}
deadline=5
out=.build/faults
report=()
passed=0

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }
field() { awk -v key="$2:" '$1 == key { print $2 }' "$1"; }
fail() {
    echo "faults: $*" >&2
    exit 1
}
now() { date +%s.%N; }
since() { awk -v from="$1" -v to="$(now)" 'BEGIN { printf "%.2f", to - from }'; }
# Whether the number $1 is at most $2.
at_most() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
figure() { report+=("| $1 | $2 |"); }
wants() { [[ " $phases " == *" $1 "* ]]; }

stop_server() {
    if [[ -n ${server:-} ]]; then
        kill "$server" 2> /dev/null || true
        wait "$server" 2> /dev/null || true
        server=""
    fi
}
finish() {
    stop_server
    if [[ -n ${load:-} ]]; then kill "$load" 2> /dev/null || true; fi
    if [[ -n ${lock:-} ]]; then kill "$lock" 2> /dev/null || true; fi
    if [[ ${database_started:-false} == true ]]; then
        end_sessions "application_name = 'faults-lock'" > /dev/null 2>&1 || true
        stop_database
    fi
}
# Starts the release server on PORT with LOG, in the environment given before it, and keeps the cleanup in place.
serve() {
    start_server "$bin" "$1" "$out/$2" faults
    trap finish EXIT
}

# Ends the sessions on the notes database that match the condition, and prints how many it ended.
end_sessions() {
    bash db.sh psql -tA -c "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity
        WHERE datname = 'notes' AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND $1"
}
# Waits, for at most 30 s, until the cluster answers a query.
await_database() {
    for _ in $(seq 1 300); do
        if bash db.sh psql -tAc "SELECT 1" > /dev/null 2>&1; then return 0; fi
        sleep 0.1
    done
    fail "PostgreSQL did not come back within 30 s"
}

# A raw HTTP/1 client on loopback, for what curl cannot do: it prints "key: value" lines.
#   raw half-head PORT          sends part of a head and waits for the server to close: elapsed, bytes
#   raw idle PORT               sends a request, reads its answer, and waits for the close: status, idle (seconds)
#   raw head PORT               HEAD /notes with Connection: close: status, body (bytes after the head)
#   raw idle-connections PORT PID N
#                               opens N connections and holds them: opened, held, refused (503), closed (without
#                               an answer), failed (to connect), open-seconds, and the server's
#                               VmRSS in MB before, while held and 3 s after they close, and its peak (VmHWM)
raw() {
    python3 - "$@" << 'PYTHON'
import selectors, socket, sys, time

mode, port = sys.argv[1], int(sys.argv[2])

def connect():
    connection = socket.create_connection(("127.0.0.1", port), timeout=5)
    connection.settimeout(10)
    return connection

def read_to_close(connection):
    data = b""
    try:
        while chunk := connection.recv(65536):
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    return data

def vmrss(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} for {pid}")

if mode == "half-head":
    connection = connect()
    connection.sendall(b"GET /whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User: slow\r\n")
    start = time.monotonic()
    data = read_to_close(connection)
    print(f"elapsed: {time.monotonic() - start:.2f}")
    print(f"bytes: {len(data)}")
elif mode == "idle":
    connection = connect()
    connection.sendall(b"GET /whoami HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User: idle\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        data += connection.recv(65536)
    head, body = data.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    length = next(int(line.split(b":")[1]) for line in lines if line.lower().startswith(b"content-length:"))
    while len(body) < length:
        body += connection.recv(65536)
    start = time.monotonic()
    rest = read_to_close(connection)
    print(f"status: {head.split()[1].decode()}")
    print(f"idle: {time.monotonic() - start:.2f}")
    print(f"bytes: {len(rest)}")
elif mode == "head":
    connection = connect()
    connection.sendall(b"HEAD /notes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-User: head\r\nConnection: close\r\n\r\n")
    data = read_to_close(connection)
    head, _, body = data.partition(b"\r\n\r\n")
    print(f"status: {head.split()[1].decode()}")
    print(f"body: {len(body)}")
elif mode == "idle-connections":
    pid, count = int(sys.argv[3]), int(sys.argv[4])
    print(f"before: {vmrss(pid):.1f}")
    selector = selectors.DefaultSelector()
    connections, failed, begun = [], 0, time.monotonic()
    for _ in range(count):
        try:
            connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            failed += 1
            continue
        connection.setblocking(False)
        selector.register(connection, selectors.EVENT_READ)
        connections.append(connection)
    opened = time.monotonic()
    # A connection over the cap is answered 503 and closed at once; a held one hears nothing. Waits for the answers
    # to stop coming: 2 s without one, or 20 s in all.
    refused, closed, last = 0, 0, time.monotonic()
    while time.monotonic() - last < 2 and time.monotonic() - opened < 20:
        for key, _ in selector.select(timeout=0.5):
            connection = key.fileobj
            try:
                data = connection.recv(65536)
            except OSError:
                data = b""
            if data and not data.startswith(b"HTTP/1.1 503"):
                raise SystemExit(f"a connection was answered: {data[:60]!r}")
            selector.unregister(connection)
            connection.close()
            if data:
                refused += 1
            else:
                closed += 1
            last = time.monotonic()
    held = [key.fileobj for key in selector.get_map().values()]
    time.sleep(1)
    print(f"opened: {len(connections)}")
    print(f"held: {len(held)}")
    print(f"refused: {refused}")
    print(f"failed: {failed}")
    print(f"closed: {closed}")
    print(f"open-seconds: {opened - begun:.1f}")
    print(f"held-rss: {vmrss(pid):.1f}")
    print(f"peak-rss: {vmrss(pid, 'VmHWM'):.1f}")
    for connection in held:
        connection.close()
    time.sleep(3)
    print(f"after: {vmrss(pid):.1f}")
PYTHON
}

if [[ -n ${BIN_DIR:-} ]]; then
    bin=$BIN_DIR
else
    step "release build"
    swift build -c release
    bin=$(swift build -c release --show-bin-path)
fi
mkdir -p "$out"
rm -f "$out"/*.txt "$out"/*.log
if ! command -v python3 > /dev/null; then install_package python3; fi

if wants backends || wants sigterm; then
    step "start PostgreSQL"
    start_database
    database_started=true
    trap finish EXIT
    url=$database_url
    echo "$url"
fi

if wants backends; then
    step "backends: start notes-server on 127.0.0.1:$port on $url"
    NOTES_DATABASE_URL=$url serve "$port" backends-server.log
    step "backends: load-check --notes, 64 connections for 30 s, while the server's backends are ended"
    timeout 150 "$bin/load-check" --port "$port" --seconds 30 --connections 64 --notes --retry-for 30 \
        --written "$out/written.tsv" --slowest-limit $((deadline + 1)) > "$out/backends.txt" 2>&1 &
    load=$!
    terminated=0 rounds=0 kills=0 restarts=0
    for fault in terminate terminate kill terminate terminate restart terminate terminate; do
        sleep 2
        case $fault in
            terminate)
                ended=$(end_sessions true)
                terminated=$((terminated + ended))
                rounds=$((rounds + 1))
                echo "ended $ended backends"
                ;;
            kill)
                pid=""
                for _ in $(seq 1 50); do
                    pid=$(bash db.sh psql -tA -c "SELECT pid FROM pg_stat_activity WHERE datname = 'notes'
                        AND backend_type = 'client backend' AND pid <> pg_backend_pid() LIMIT 1")
                    if [[ -n $pid ]]; then break; fi
                    sleep 0.1
                done
                [[ -n $pid ]] || fail "backends: the server had no backend to kill for 5 s"
                kill -9 "$pid"
                kills=$((kills + 1))
                echo "killed backend $pid with SIGKILL; PostgreSQL restarts its backends"
                await_database
                ;;
            restart)
                bash db.sh stop
                sleep 1
                bash db.sh start > /dev/null
                restarts=$((restarts + 1))
                echo "stopped and started the cluster"
                ;;
        esac
    done
    kill -0 "$load" 2> /dev/null || fail "the load ended before the faults did: $(cat "$out/backends.txt")"
    if ! wait "$load"; then
        load=""
        cat "$out/backends.txt" >&2
        fail "backends: load-check failed under the faults (errors, mismatches, or an attempt over $((deadline + 1)) s)"
    fi
    load=""
    cat "$out/backends.txt"
    run=$(field "$out/backends.txt" run)
    written=$(field "$out/backends.txt" written)
    check_stored_notes "$run" "$out/written.tsv" "$written" "$out" faults
    echo "$stored notes of $users users in the database, each as written and audited once"

    step "backends: the pool is back: 2,000 requests, no retries"
    "$bin/load-check" --port "$port" --requests 2000 --connections 64 --notes --retry-for 0 \
        --slowest-limit "$deadline" > "$out/pool.txt" 2>&1 || {
        cat "$out/pool.txt" >&2
        fail "backends: the pool is not back: requests failed without retries after the faults"
    }
    cat "$out/pool.txt"
    at_most "$(field "$out/pool.txt" elapsed)" 10 || fail "backends: 2,000 requests took over 10 s after the faults"
    stop_server

    figure "Backend faults: pg_terminate_backend() rounds, backends ended" "$rounds, $terminated"
    figure "Backend faults: kill -9 of a backend, cluster stopped and started" "$kills, $restarts"
    figure "Backend faults: requests (30 s, 64 connections), retries" \
        "$(field "$out/backends.txt" requests), $(field "$out/backends.txt" retries) \
($(field "$out/backends.txt" unavailable) answered 503, $(field "$out/backends.txt" unanswered) unanswered)"
    figure "Backend faults: posts answered as replays" "$(field "$out/backends.txt" replayed)"
    figure "Backend faults: errors, mismatches" \
        "$(field "$out/backends.txt" errors), $(field "$out/backends.txt" mismatches)"
    figure "Backend faults: notes written, in the database (each once, audited)" "$written, $stored"
    figure "Backend faults: slowest attempt (deadline ${deadline} s)" "$(field "$out/backends.txt" slowest) ms"
    figure "Pool back: 2,000 requests without retries, errors, elapsed, slowest" \
        "$(field "$out/pool.txt" errors), $(field "$out/pool.txt" elapsed) s, $(field "$out/pool.txt" slowest) ms"
fi

# Serves on PORT with request deadline DEADLINE, hangs 8 requests on a lock of the notes table, sends SIGTERM, and
# checks that the server ends within its bound; with ANSWERS, that every hung request was answered so.
sigterm_with_hung_requests() {
    local port=$1 deadline=$2 answers_expected=${3:-} hung_user i waiting signalled took status answers kept
    step "sigterm: start notes-server on 127.0.0.1:$port on $url, NOTES_REQUEST_DEADLINE=$deadline"
    NOTES_DATABASE_URL=$url NOTES_REQUEST_DEADLINE=$deadline serve "$port" "sigterm-$deadline-server.log"
    step "sigterm: hold the notes table locked, and send 8 requests that wait for it"
    PGAPPNAME=faults-lock bash db.sh psql -c "BEGIN; LOCK TABLE notes IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);" \
        > /dev/null 2>&1 &
    lock=$!
    for _ in $(seq 1 100); do
        if [[ $(bash db.sh psql -tAc "SELECT count(*) FROM pg_stat_activity
            WHERE application_name = 'faults-lock' AND wait_event = 'PgSleep'") == 1 ]]; then break; fi
        kill -0 "$lock" 2> /dev/null || fail "sigterm: psql could not lock the notes table"
        sleep 0.1
    done
    hung_user="hung-$RANDOM$RANDOM"
    rm -f "$out"/hung-*.txt
    for i in $(seq 1 8); do
        if ((i % 2)); then
            curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 -H "X-User: $hung_user" \
                -H "Idempotency-Key: hung-$i" --json "{\"text\": \"hung $i\"}" "http://127.0.0.1:$port/notes"
        else
            curl -s -o /dev/null -w '%{http_code}\n' --max-time 30 -H "X-User: $hung_user" \
                "http://127.0.0.1:$port/notes"
        fi > "$out/hung-$i.txt" &
    done
    waiting=0
    for _ in $(seq 1 100); do
        waiting=$(bash db.sh psql -tAc "SELECT count(*) FROM pg_stat_activity
            WHERE datname = 'notes' AND wait_event_type = 'Lock'")
        if ((waiting >= 8)); then break; fi
        sleep 0.1
    done
    ((waiting >= 8)) || fail "sigterm: only $waiting requests waited on the lock after 10 s"
    echo "$waiting requests wait on the lock (4 posts, 4 lists)"
    step "sigterm: SIGTERM, with the requests hung"
    signalled=$(now)
    kill -TERM "$server"
    for _ in $(seq 1 300); do
        kill -0 "$server" 2> /dev/null || break
        sleep 0.05
    done
    took=$(since "$signalled")
    status=0
    if kill -0 "$server" 2> /dev/null; then
        fail "sigterm: the server still runs $took s after SIGTERM"
    fi
    wait "$server" || status=$?
    server=""
    echo "the server ended $took s after SIGTERM, with status $status"
    at_most "$took" 10.5 || fail "sigterm: the server took $took s to end after SIGTERM, over its bound of 10 s"
    end_sessions "application_name = 'faults-lock'" > /dev/null
    wait "$lock" 2> /dev/null || true
    lock=""
    wait
    answers=$(cat "$out"/hung-*.txt | sort | uniq -c | awk '{ printf "%s%s × %s", sep, $1, $2; sep = ", " }')
    echo "the hung requests' answers (000: none): $answers"
    if [[ -n $answers_expected && $answers != "$answers_expected" ]]; then
        fail "sigterm: the hung requests were answered $answers, not $answers_expected"
    fi
    sleep 1
    kept=$(bash db.sh psql -tAc "SELECT count(*) FROM notes WHERE owner = '$hung_user'")
    echo "notes the hung posts stored: $kept"
    figure "SIGTERM, 8 requests hung on a lock, deadline $deadline s: exit after (bound 10 s), status" \
        "$took s, $status"
    figure "SIGTERM, deadline $deadline s: the hung requests' answers (000: none), notes they stored" "$answers; $kept"
}

if wants sigterm; then
    # The hung requests outlast the graceful shutdown's first 7 s: they are answered 503 then, before the group cancels
    # the server at 8 s, and the process ends within its bound.
    sigterm_with_hung_requests $((port + 1)) 60 "8 × 503"
    # The hung requests are answered 503 at their deadline, and the server ends once they are.
    sigterm_with_hung_requests $((port + 4)) "$deadline" "8 × 503"
fi

expect() {
    if [[ $2 != "$3" ]]; then fail "input: $1: expected $2, got $3"; fi
    echo "$1: $3"
    passed=$((passed + 1))
}

if wants input; then
    step "input: start notes-server on 127.0.0.1:$((port + 2)), in memory, NOTES_HEADER_TIMEOUT=1 NOTES_IDLE_TIMEOUT=2"
    NOTES_DATABASE_URL="" NOTES_HEADER_TIMEOUT=1 NOTES_IDLE_TIMEOUT=2 serve $((port + 2)) input-server.log
    base="http://127.0.0.1:$((port + 2))"
    code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"; }
    expect "two X-User headers" 400 "$(code -H 'X-User: alice' -H 'X-User: bob' "$base/whoami")"
    expect "an X-User not in UTF-8" 400 "$(code -H $'X-User: a\xff' "$base/whoami")"
    printf '{"text": "%s"}' "$(head -c 70000 /dev/zero | tr '\0' a)" > "$out/large.json"
    expect "a body over 64 KiB" 413 "$(code -H 'X-User: alice' -H 'Content-Type: application/json' \
        --data-binary "@$out/large.json" "$base/notes")"
    expect "a text/plain body" 415 "$(code -H 'X-User: alice' -H 'Content-Type: text/plain' -d 'hello' "$base/notes")"
    raw head $((port + 2)) > "$out/head.txt"
    expect "HEAD /notes" "200, 0 bytes of body" \
        "$(field "$out/head.txt" status), $(field "$out/head.txt" body) bytes of body"
    id=$(curl -s -D - -o /dev/null --max-time 10 "$base/whoami" \
        | awk -F': ' 'tolower($1) == "x-request-id" { print $2 }' | tr -d '\r')
    [[ -n $id ]] || fail "input: the 401 of a request without X-User carries no X-Request-ID"
    expect "a 401 with its X-Request-ID ($id)" 401 "$(code "$base/whoami")"
    raw half-head $((port + 2)) > "$out/half-head.txt"
    half=$(field "$out/half-head.txt" elapsed)
    expect "a half-sent head, answered with" "0 bytes" "$(field "$out/half-head.txt" bytes) bytes"
    at_most "$half" 1.5 || fail "input: a half-sent head was closed after $half s, over NOTES_HEADER_TIMEOUT=1"
    at_most 0.9 "$half" || fail "input: a half-sent head was closed after $half s, before NOTES_HEADER_TIMEOUT=1"
    echo "a half-sent head: closed after $half s"
    raw idle $((port + 2)) > "$out/idle.txt"
    idle=$(field "$out/idle.txt" idle)
    expect "an idle keep-alive connection's request" 200 "$(field "$out/idle.txt" status)"
    at_most "$idle" 2.5 || fail "input: an idle connection was closed after $idle s, over NOTES_IDLE_TIMEOUT=2"
    at_most 1.5 "$idle" || fail "input: an idle connection was closed after $idle s, before NOTES_IDLE_TIMEOUT=2"
    echo "an idle keep-alive connection: closed after $idle s"
    stop_server
    figure "Hostile input: two X-User headers, X-User not UTF-8, body over 64 KiB, text/plain, HEAD /notes, no X-User" \
        "400, 400, 413, 415, 200 (0 bytes of body), 401 (with X-Request-ID)"
    figure "Half-sent head closed after (NOTES_HEADER_TIMEOUT=1)" "$half s"
    figure "Idle keep-alive connection closed after (NOTES_IDLE_TIMEOUT=2)" "$idle s"
fi

if wants idle; then
    step "idle: start notes-server on 127.0.0.1:$((port + 3)), in memory, default cap, NOTES_IDLE_TIMEOUT=300"
    NOTES_DATABASE_URL="" NOTES_IDLE_TIMEOUT=300 serve $((port + 3)) idle-server.log
    "$bin/load-check" --port $((port + 3)) --requests 20000 --connections 64 > "$out/warm-up.txt" \
        || fail "idle: the warm-up load failed: $(cat "$out/warm-up.txt")"
    step "idle: $idle_connections idle connections"
    need=$((idle_connections + 64))
    if (($(ulimit -n) < need)); then
        ulimit -n "$need" 2> /dev/null || fail "idle: $idle_connections connections need ulimit -n $need"
    fi
    timeout 120 bash -c "$(declare -f raw); raw idle-connections $((port + 3)) $server $idle_connections" \
        > "$out/idle-connections.txt" || fail "idle: the connections' opener failed: $(cat "$out/idle-connections.txt")"
    cat "$out/idle-connections.txt"
    before=$(field "$out/idle-connections.txt" before)
    held_rss=$(field "$out/idle-connections.txt" held-rss)
    peak_rss=$(field "$out/idle-connections.txt" peak-rss)
    after=$(field "$out/idle-connections.txt" after)
    held=$(field "$out/idle-connections.txt" held)
    refused=$(field "$out/idle-connections.txt" refused)
    failed=$(field "$out/idle-connections.txt" failed)
    closed=$(field "$out/idle-connections.txt" closed)
    cap=1024
    expected_held=$((idle_connections < cap ? idle_connections : cap))
    ((held == expected_held)) || fail "idle: $held connections held, not $expected_held"
    # A connection that the kernel could not hand to the server within 5 s (its accept queue full) fails to connect:
    # it is not held either.
    ((refused + failed == idle_connections - expected_held)) \
        || fail "idle: $refused answered 503, $closed closed unanswered, $failed not connected, of the" \
            "$((idle_connections - expected_held)) over the cap"
    growth=$(awk -v a="$before" -v b="$held_rss" 'BEGIN { printf "%.1f", b - a }')
    left=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.1f", b - a }')
    at_most "$growth" "$rss_growth_limit" \
        || fail "idle: VmRSS grew by $growth MB while the connections were held, over $rss_growth_limit MB"
    at_most "$left" "$rss_return_limit" \
        || fail "idle: VmRSS was $left MB over its start 3 s after the connections closed, over $rss_return_limit MB"
    expect "a request after the connections closed" 200 \
        "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -H 'X-User: after' \
            "http://127.0.0.1:$((port + 3))/whoami")"
    stop_server
    figure "Idle connections: opened, held, answered 503 and closed, not connected within 5 s" \
        "$idle_connections, $held, $refused, $failed"
    figure "Idle connections: server VmRSS before, held, 3 s after close; its peak (VmHWM)" \
        "$before MB, $held_rss MB, $after MB; $peak_rss MB"
fi

{
    echo "Machine: $(nproc) cores, $(uname -m), $(swift --version 2>&1 | head -1)$(if [[ -n ${url:-} ]]; then
        echo ", PostgreSQL $(bash db.sh psql -tAc 'SHOW server_version')"
    fi)"
    echo
    echo "faults.sh, phases: $phases; release build, loopback, server, load-check and PostgreSQL unpinned."
    echo
    echo "| Check | Figure |"
    echo "|---|---|"
    printf '%s\n' "${report[@]}"
    echo
    echo "faults.sh took $((SECONDS - started)) s."
} > "$out/report.md"

step "report"
cat "$out/report.md"
