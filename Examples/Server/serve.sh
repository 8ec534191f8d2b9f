# Sourced by ci.sh and load.sh: starts the release notes-server in the background, stops it when the script exits,
# and waits until it answers.
#
#     start_server BIN_DIR PORT LOG NAME    # sets `server` to its process id; NAME prefixes error messages
#
# SERVER_CPU, from the environment, pins the server to that core, with one NIO event loop.
start_server() {
    local bin=$1 port=$2 log=$3 name=$4
    local pin=()
    if [[ -n ${SERVER_CPU:-} ]]; then pin=(taskset -c "$SERVER_CPU" env NIO_SINGLETON_GROUP_LOOP_COUNT=1); fi
    "${pin[@]}" "$bin/notes-server" --port "$port" > "$log" 2>&1 &
    server=$!
    trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
    for _ in $(seq 1 100); do
        if curl -fsS -H "X-User: $name" "http://127.0.0.1:$port/whoami" > /dev/null 2>&1; then return 0; fi
        if ! kill -0 "$server" 2>/dev/null; then
            echo "$name: notes-server exited:" >&2
            cat "$log" >&2
            exit 1
        fi
        sleep 0.1
    done
    echo "$name: notes-server did not answer within 10 s" >&2
    exit 1
}
