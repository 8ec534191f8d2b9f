#!/usr/bin/env bash
# A throw-away PostgreSQL cluster for the notes server and its tests: made in a directory of its own, listening on
# 127.0.0.1 only, with one database, `notes`, and a superuser, `notes`, that needs no password. Nothing of the system's
# own PostgreSQL (if it runs one) is touched.
#
#     bash db.sh start     # makes the cluster if needed, starts it, prints its URL for --database-url
#     bash db.sh url       # prints the URL
#     bash db.sh status    # succeeds if it is running
#     bash db.sh psql ...  # runs psql on the `notes` database, with these arguments
#     bash db.sh stop      # stops it (its data stays, for the next start)
#     bash db.sh destroy   # stops it and deletes it
#
# It needs Debian's `postgresql` package (`apt-get install postgresql`). NOTES_DB_DIR (/tmp/notes-postgres) and
# NOTES_DB_PORT (54329) choose where it lives and listens. PostgreSQL refuses to run as root, so run as root it runs the
# cluster as the `postgres` user the package creates.
set -euo pipefail
dir=${NOTES_DB_DIR:-/tmp/notes-postgres}
port=${NOTES_DB_PORT:-54329}
url="postgres://notes@127.0.0.1:$port/notes"

bin=$(dirname "$(readlink -f "$(command -v initdb 2>/dev/null || ls -d /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1)")")
if [[ ! -x $bin/initdb ]]; then
    echo "db.sh: PostgreSQL is not installed; install it with: apt-get install -y postgresql" >&2
    exit 1
fi

# Runs a PostgreSQL program as the cluster's owner.
as_owner() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

start() {
    if [[ ! -f $dir/data/PG_VERSION ]]; then
        mkdir -p "$dir"
        if [[ $(id -u) -eq 0 ]]; then chown postgres: "$dir"; fi
        as_owner "$bin/initdb" --pgdata "$dir/data" --username notes --auth trust --encoding UTF8 --no-sync \
            > "$dir/initdb.log"
    fi
    # A cluster started by an earlier db.sh, which committed asynchronously, is restarted with the settings below.
    if as_owner "$bin/pg_ctl" --pgdata "$dir/data" status > /dev/null 2>&1 \
        && [[ $(as_owner "$bin/psql" -X -h 127.0.0.1 -p "$port" -U notes -d postgres -tAc "SHOW synchronous_commit" \
            2> /dev/null) != on ]]; then
        as_owner "$bin/pg_ctl" --pgdata "$dir/data" --mode fast --wait --silent stop
    fi
    if ! as_owner "$bin/pg_ctl" --pgdata "$dir/data" status > /dev/null 2>&1; then
        # A throw-away cluster, with room for a pool per test process beside the server's. Each COMMIT waits for its
        # WAL to be written (synchronous_commit stays on), so a note answered 201 survives a crash of PostgreSQL
        # itself: kill -9 of a backend, or of the whole server, replays the WAL from the operating system's cache.
        # What it does not wait for is the disk (fsync=off, full_page_writes=off): a crash of the machine or of its
        # operating system can lose recent commits or leave the cluster unreadable, so `bash db.sh destroy` and
        # start again. The server's output goes to its log, and pg_ctl's nowhere: the server must not hold the
        # caller's output open, or a caller reading it to the end would wait for as long as the server runs.
        as_owner "$bin/pg_ctl" --pgdata "$dir/data" --log "$dir/server.log" --wait --silent \
            -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=on \
                -c full_page_writes=off -c max_connections=300" start > /dev/null 2>&1 < /dev/null
    fi
    if ! as_owner "$bin/psql" -h 127.0.0.1 -p "$port" -U notes -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'notes'" | grep -q 1; then
        as_owner "$bin/createdb" -h 127.0.0.1 -p "$port" -U notes notes
    fi
    echo "$url"
}

stop() {
    if [[ -f $dir/data/PG_VERSION ]] && as_owner "$bin/pg_ctl" --pgdata "$dir/data" status > /dev/null 2>&1; then
        as_owner "$bin/pg_ctl" --pgdata "$dir/data" --mode fast --wait --silent stop
    fi
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    url) echo "$url" ;;
    status) [[ -f $dir/data/PG_VERSION ]] && as_owner "$bin/pg_ctl" --pgdata "$dir/data" status > /dev/null 2>&1 ;;
    psql) as_owner "$bin/psql" -X -h 127.0.0.1 -p "$port" -U notes -d notes "${@:2}" ;;
    destroy)
        stop
        rm -rf "$dir"
        ;;
    *)
        echo "usage: bash db.sh start | url | status | psql [ARGUMENTS] | stop | destroy" >&2
        exit 64
        ;;
esac
