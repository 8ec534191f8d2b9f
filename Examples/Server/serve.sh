# Sourced by ci.sh, load.sh, db-load.sh and faults.sh, whose `step` prints a heading.
#
#     start_server BIN_DIR PORT LOG NAME    # starts the release notes-server in the background, stops it when the
#                                           # script exits, and waits until it answers; sets `server` to its process
#                                           # id; NAME prefixes error messages
#     install_package NAME                  # installs Debian's package NAME, as root or through sudo
#     start_database                        # installs PostgreSQL if missing, starts db.sh's cluster, and sets
#                                           # `database_url`
#     stop_database                         # stops the cluster, unless it was running before start_database
#     check_stored_notes RUN WRITTEN COUNT DIR NAME
#                                           # checks that the database holds exactly the notes that load-check's
#                                           # run RUN wrote, as its --written file WRITTEN lists them, COUNT in
#                                           # all, each once and with its audit entry; keeps its files in DIR and
#                                           # sets `stored` and `users`; NAME prefixes error messages
#
# SERVER_CPU, from the environment, pins the server to that core, with one NIO event loop.
install_package() {
    step "install $1"
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then sudo=sudo; fi
    $sudo apt-get update && $sudo apt-get install -y "$1"
}

start_database() {
    if ! bash db.sh url > /dev/null 2>&1; then install_package postgresql; fi
    if bash db.sh status; then database_was_running=true; else database_was_running=false; fi
    database_url=$(bash db.sh start)
}

stop_database() {
    if [[ ${database_was_running:-true} == false ]]; then bash db.sh stop; fi
}

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

check_stored_notes() {
    local run=$1 written=$2 count=$3 dir=$4 name=$5 audited
    bash db.sh psql -tA -F $'\t' -c "SELECT owner, text FROM notes WHERE owner LIKE '$run-%'" \
        | LC_ALL=C sort > "$dir/stored.tsv"
    LC_ALL=C sort "$written" > "$dir/written-sorted.tsv"
    if ! cmp -s "$dir/stored.tsv" "$dir/written-sorted.tsv"; then
        echo "$name: the database's notes differ from the notes written:" >&2
        diff "$dir/written-sorted.tsv" "$dir/stored.tsv" | head -20 >&2
        exit 1
    fi
    stored=$(wc -l < "$dir/stored.tsv")
    users=$(cut -f1 "$dir/stored.tsv" | sort -u | wc -l)
    audited=$(bash db.sh psql -tA -c "SELECT count(*) FROM audit_entries a JOIN notes n
        ON n.owner = a.owner AND a.action = 'created note ' || n.id WHERE n.owner LIKE '$run-%'")
    if [[ $stored -ne $count || $audited -ne $stored ]]; then
        echo "$name: $count notes written, $stored stored, $audited audited" >&2
        exit 1
    fi
}
