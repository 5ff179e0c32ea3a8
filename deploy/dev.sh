#!/usr/bin/env bash
# StoreSync developer and CI entry point.
#
#   deploy/dev.sh run  [work args…]        release build, migrate, then `storesync serve`, `storesync work`
#                                          and `storesync console` (on STORESYNC_CONSOLE_LISTEN, default
#                                          127.0.0.1:8090) in the foreground, and on a database
#                                          without accounts a demo (`storesync-dev demo --keep-running`:
#                                          an account on a local App Store simulator at
#                                          STORESYNC_DEMO_LISTEN, default 127.0.0.1:8095, with a few
#                                          purchases mirrored; STORESYNC_DEMO=off skips it); Ctrl-C
#                                          stops them all, then PostgreSQL
#   deploy/dev.sh test [swift test args…]  debug build (warnings are errors), a migrated template
#                                          database, then `swift test`, the fuzz run and a short
#                                          chaos run (deploy/bench/chaos.sh); exits with its code
#   deploy/dev.sh pg-start | pg-stop       start or stop the embedded PostgreSQL by hand
#   deploy/dev.sh env                      print `export …` lines for it: eval "$(deploy/dev.sh env)"
#
# Works on a fresh Debian 12 with the Swift toolchain, as root (as CI runs it) or as a user with
# sudo: missing Debian packages are installed first. Unless DATABASE_URL is set, a private
# PostgreSQL cluster lives in .storesync/ (port STORESYNC_PG_PORT, default 54329, 127.0.0.1 only);
# the system cluster 15/main that Debian's package creates is left alone.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_PORT=${STORESYNC_PG_PORT:-54329}
PG_USER=storesync                # OS user that owns the cluster when this script runs as root
TEMPLATE_DB=storesync_test_template
PACKAGES=(postgresql libpq-dev libssl-dev libcurl4-openssl-dev libmicrohttpd-dev libsystemd-dev wrk)
# Only `test` needs these: the console's browser tests drive headless Chromium and save screenshots with its text.
TEST_PACKAGES=(chromium fonts-dejavu-core)
# Where the cluster lives when the storesync user can't reach the checkout (e.g. under /root).
FALLBACK_STATE=/var/tmp/storesync-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)

STARTED_PG=0                     # 1 once this invocation started the embedded server
DAEMON_PIDS=()
DEMO_PID=                        # `storesync-dev demo` while it runs next to the daemons

die() { echo "dev.sh: $*" >&2; exit 1; }
note() { echo "dev.sh: $*" >&2; }

usage() {
    sed -n '2,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
    exit 2
}

# Run a command as root: directly, or through sudo.
as_root() {
    if [[ $EUID -eq 0 ]]; then
        "$@"
    else
        command -v sudo >/dev/null || die "need root to run '$*' (install sudo or run as root)"
        sudo "$@"
    fi
}

# Install the Debian packages named (default PACKAGES) that are missing; no apt work at all when none are.
ensure_packages() {
    local missing=() p
    for p in "${@:-${PACKAGES[@]}}"; do
        [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) == "install ok installed" ]] \
            || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    note "installing ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# Run a command as the OS user that owns the cluster, from a directory it can read.
as_pg() {
    if [[ $EUID -eq 0 ]]; then
        (cd / && runuser -u "$PG_USER" -- "$@")
    else
        (cd / && "$@")
    fi
}

# Choose and prepare STATE (cluster, password, log) and RUN_DIR (unix socket); set PG_BIN.
prepare_state() {
    [[ -z ${PG_DATA_DIR:-} ]] || return 0
    PG_BIN=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)
    [[ -x ${PG_BIN:-}/pg_ctl ]] || die "no PostgreSQL server under /usr/lib/postgresql/*/bin"

    STATE=$ROOT/.storesync
    if [[ $EUID -eq 0 ]]; then
        # PostgreSQL refuses to run as root: the cluster belongs to a system user.
        id -u "$PG_USER" >/dev/null 2>&1 ||
            useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "$PG_USER"
        if ! runuser -u "$PG_USER" -- test -x "$ROOT"; then
            STATE=$FALLBACK_STATE
            note "user $PG_USER can't reach $ROOT; keeping the database in $STATE"
        fi
    fi
    # The socket path must fit in sockaddr_un (107 bytes); deep checkouts get one under /tmp.
    RUN_DIR=$STATE/run
    if ((${#RUN_DIR} + ${#PG_PORT} + 10 > 107)); then
        RUN_DIR=/tmp/storesync-$(printf '%s' "$ROOT" | sha256sum | cut -c1-12)-run
    fi
    local d
    for d in "$STATE" "$RUN_DIR"; do
        [[ ! -L $d ]] || die "$d is a symlink; refusing to use it"
        mkdir -p "$d"
        chmod 0700 "$d"
    done

    local pwfile=$STATE/password
    [[ -s $pwfile ]] || (umask 077 && head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$pwfile")
    PASSWORD=$(<"$pwfile")

    if [[ $EUID -eq 0 ]]; then
        [[ $(stat -c %U "$STATE" "$pwfile" | sort -u) == "$PG_USER" ]] || chown -R "$PG_USER:$PG_USER" "$STATE"
        [[ $(stat -c %U "$RUN_DIR") == "$PG_USER" ]] || chown "$PG_USER:$PG_USER" "$RUN_DIR"
    fi
    PG_DATA_DIR=$STATE/pgdata
    PG_LOG=$STATE/postgres.log
}

# Quote a value for postgresql.conf.
conf_quote() { printf "'%s'" "${1//\'/\'\'}"; }

# Create the cluster once, and (re)write the settings it runs with.
init_cluster() {
    if [[ ! -f $PG_DATA_DIR/PG_VERSION ]]; then
        note "creating the PostgreSQL cluster in $PG_DATA_DIR"
        as_pg "$PG_BIN/initdb" -D "$PG_DATA_DIR" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
            --pwfile="$STATE/password" -E UTF8 --locale=C.UTF-8 >"$STATE/initdb.log" 2>&1 ||
            { tail -n 20 "$STATE/initdb.log" >&2; die "initdb failed (log: $STATE/initdb.log)"; }
        echo "include_if_exists = 'storesync.conf'" | as_pg tee -a "$PG_DATA_DIR/postgresql.conf" >/dev/null
    fi
    # Durability stays on: benchmarks measure durable commits.
    as_pg tee "$PG_DATA_DIR/storesync.conf" >/dev/null <<EOF
# Written by deploy/dev.sh on every start; edits are lost.
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = $(conf_quote "$RUN_DIR")
max_connections = 300
shared_buffers = 256MB
synchronous_commit = on
fsync = on
EOF
}

# psql over the unix socket as the superuser; extra arguments go to psql.
admin_psql() {
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$RUN_DIR" -p "$PG_PORT" -U postgres -d postgres "$@"
}

# Start the embedded cluster unless it runs already; create the app role and database.
start_pg() {
    prepare_state
    if as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA_DIR" status >/dev/null 2>&1; then
        # Already up (pg-start, or another dev.sh): use the port and socket it actually has.
        PG_PORT=$(sed -n 4p "$PG_DATA_DIR/postmaster.pid")
        RUN_DIR=$(sed -n 5p "$PG_DATA_DIR/postmaster.pid")
    else
        init_cluster
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA_DIR" -l "$PG_LOG" -w -t 60 start >/dev/null ||
            { tail -n 20 "$PG_LOG" >&2; die "PostgreSQL did not start (log: $PG_LOG; is port $PG_PORT taken?)"; }
        STARTED_PG=1
        note "PostgreSQL started on 127.0.0.1:$PG_PORT"
    fi
    # Idempotent; also re-syncs the passwords with the password file.
    admin_psql -v pw="$PASSWORD" >/dev/null <<'SQL' || die "can't create the storesync role and database (log: $PG_LOG)"
SELECT format('CREATE ROLE storesync LOGIN NOCREATEDB NOCREATEROLE NOSUPERUSER PASSWORD %L', :'pw')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'storesync') \gexec
ALTER ROLE storesync PASSWORD :'pw';
ALTER ROLE postgres PASSWORD :'pw';
SELECT 'CREATE DATABASE storesync OWNER storesync'
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'storesync') \gexec
SELECT format('CREATE ROLE %I NOLOGIN', r)
  FROM unnest(ARRAY['storesync_worker', 'storesync_ingest', 'storesync_api', 'storesync_console']) r
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) \gexec
SELECT format('CREATE ROLE storesync_api_login LOGIN PASSWORD %L IN ROLE storesync_api', :'pw')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'storesync_api_login') \gexec
ALTER ROLE storesync_api_login PASSWORD :'pw';
SELECT format('CREATE ROLE storesync_console_login LOGIN PASSWORD %L IN ROLE storesync_console', :'pw')
 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'storesync_console_login') \gexec
ALTER ROLE storesync_console_login PASSWORD :'pw';
SQL
    export DATABASE_URL=postgresql://storesync:$PASSWORD@127.0.0.1:$PG_PORT/storesync
    # The Mobile Stores API logs in with only the storesync_api role's grants, as in production.
    export STORESYNC_API_DATABASE_URL=postgresql://storesync_api_login:$PASSWORD@127.0.0.1:$PG_PORT/storesync
    # So does the on-call console, with the storesync_console role's.
    export STORESYNC_CONSOLE_DATABASE_URL=postgresql://storesync_console_login:$PASSWORD@127.0.0.1:$PG_PORT/storesync
    export STORESYNC_TEST_ADMIN_URL=postgresql://postgres:$PASSWORD@127.0.0.1:$PG_PORT/postgres
}

# Stop the embedded cluster if it is running.
stop_pg() {
    prepare_state
    if as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA_DIR" status >/dev/null 2>&1; then
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA_DIR" -m fast -w -t 60 stop >/dev/null
        note "PostgreSQL stopped"
    fi
}

# The DATABASE_URL that `env` printed for this checkout, if it has an embedded cluster.
embedded_url() {
    local f
    for f in "$ROOT/.storesync/password" "$FALLBACK_STATE/password"; do
        if [[ -r $f ]]; then
            printf 'postgresql://storesync:%s@127.0.0.1:%s/storesync' "$(<"$f")" "$PG_PORT"
            return
        fi
    done
}

# Use DATABASE_URL when it names another server; otherwise start the embedded one.
ensure_database() {
    if [[ -n ${DATABASE_URL:-} && $DATABASE_URL != "$(embedded_url)" ]]; then
        export STORESYNC_TEST_ADMIN_URL=${STORESYNC_TEST_ADMIN_URL:-$DATABASE_URL}
        export STORESYNC_API_DATABASE_URL=${STORESYNC_API_DATABASE_URL:-$DATABASE_URL}
        export STORESYNC_CONSOLE_DATABASE_URL=${STORESYNC_CONSOLE_DATABASE_URL:-$DATABASE_URL}
        return
    fi
    start_pg
}

# On exit: stop the daemon if it still runs, then the embedded server if this script started it.
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if ((${#DAEMON_PIDS[@]})) || [[ -n $DEMO_PID ]]; then
        kill -TERM "${DAEMON_PIDS[@]}" ${DEMO_PID:+"$DEMO_PID"} 2>/dev/null || true
        wait "${DAEMON_PIDS[@]}" ${DEMO_PID:+"$DEMO_PID"} 2>/dev/null || true
    fi
    if ((STARTED_PG)); then
        stop_pg || true
    fi
    exit "$rc"
}

# Replace the path of a postgres URL with another database name, keeping any ?query.
url_with_db() {
    [[ $1 =~ ^(postgres(ql)?://[^/?]*)(/[^?]*)?(\?.*)?$ ]] || die "can't parse database URL"
    printf '%s/%s%s' "${BASH_REMATCH[1]}" "$2" "${BASH_REMATCH[4]}"
}

# Drop leftover test databases and build a fresh, migrated template for the tests to copy.
prepare_template() {
    psql -X -q -v ON_ERROR_STOP=1 "$STORESYNC_TEST_ADMIN_URL" >/dev/null <<SQL
SET client_min_messages = warning;
SELECT format('DROP DATABASE %I WITH (FORCE)', datname) FROM pg_database
 WHERE datname LIKE 'storesync\_t\_%' \gexec
UPDATE pg_database SET datistemplate = false WHERE datname = '$TEMPLATE_DB';
DROP DATABASE IF EXISTS $TEMPLATE_DB WITH (FORCE);
CREATE DATABASE $TEMPLATE_DB;
SQL
    DATABASE_URL=$(url_with_db "$STORESYNC_TEST_ADMIN_URL" "$TEMPLATE_DB") "$STORESYNC_BIN" migrate
    psql -X -q -v ON_ERROR_STOP=1 "$STORESYNC_TEST_ADMIN_URL" \
        -c "ALTER DATABASE $TEMPLATE_DB IS_TEMPLATE true" >/dev/null
    export STORESYNC_TEST_TEMPLATE=$TEMPLATE_DB
}

# The URL of `serve`'s Apple webhook for a `HOST:PORT` it listens on (a wildcard becomes loopback).
ingest_url() {
    local host=${1%:*} port=${1##*:}
    case $host in
        0.0.0.0 | "") host=127.0.0.1 ;;
        "[::]" | "::") host="[::1]" ;;
    esac
    printf 'http://%s:%s/webhook/apple' "$host" "$port"
}

# `run`: release build, migrate, then the webhook endpoints (`serve`) and a worker (`work`) in the
# foreground until one of them exits or Ctrl-C; extra arguments go to `work`. Next to them, unless
# STORESYNC_DEMO=off, `storesync-dev demo --keep-running`: it seeds a database without accounts and keeps
# its simulator up; whatever it does, its end never stops the daemons.
cmd_run() {
    # Both products: the daemons, and the dev tools for the demo (the second build reuses the first's modules).
    local product
    for product in storesync storesync-dev; do
        swift build --package-path "$ROOT" -c release --product "$product" -Xswiftc -warnings-as-errors
    done
    local bin=$ROOT/.build/release/storesync dev_bin=$ROOT/.build/release/storesync-dev
    local listen=${STORESYNC_LISTEN:-127.0.0.1:8080}
    ensure_database
    "$bin" migrate
    # In the background so this shell can forward signals and then stop PostgreSQL. Background
    # jobs of a script ignore SIGINT, so the daemons are always sent SIGTERM.
    "$bin" serve --listen "$listen" &
    DAEMON_PIDS+=($!)
    "$bin" work "$@" &
    DAEMON_PIDS+=($!)
    # The on-call console, on loopback (STORESYNC_CONSOLE_LISTEN, default 127.0.0.1:8090).
    "$bin" console --listen "${STORESYNC_CONSOLE_LISTEN:-127.0.0.1:8090}" &
    DAEMON_PIDS+=($!)
    trap 'kill -TERM "${DAEMON_PIDS[@]}" ${DEMO_PID:+"$DEMO_PID"} 2>/dev/null || true' INT TERM
    if [[ ${STORESYNC_DEMO:-on} == off ]]; then
        note "demo skipped (STORESYNC_DEMO=off)"
    else
        # It waits for `serve` to be ready itself, and does nothing on a database with accounts.
        "$dev_bin" demo --keep-running --ingest "$(ingest_url "$listen")" \
            --simulator-listen "${STORESYNC_DEMO_LISTEN:-127.0.0.1:8095}" &
        DEMO_PID=$!
    fi
    local rc ended
    while true; do
        rc=0
        wait -n -p ended "${DAEMON_PIDS[@]}" ${DEMO_PID:+"$DEMO_PID"} || rc=$?
        # `ended` is unset when a signal interrupted the wait.
        [[ -n $DEMO_PID && ${ended:-} == "$DEMO_PID" ]] || break
        # The demo ended on its own: serve and work keep running either way.
        ((rc == 0)) || note "the demo failed (status $rc, reason above); serve and work keep running" \
            "(STORESYNC_DEMO=off skips the demo)"
        DEMO_PID=
    done
    # A daemon ended (or a signal arrived): stop the rest and wait for them.
    kill -TERM "${DAEMON_PIDS[@]}" ${DEMO_PID:+"$DEMO_PID"} 2>/dev/null || true
    local pid
    for pid in "${DAEMON_PIDS[@]}" ${DEMO_PID:+"$DEMO_PID"}; do wait "$pid" 2>/dev/null || true; done
    DAEMON_PIDS=()
    DEMO_PID=
    return "$rc"
}

# `test`: debug build with warnings as errors, a template database, then the tests.
cmd_test() {
    ensure_packages "${TEST_PACKAGES[@]}"
    # Every product, the test bundles included: storesync, storesync-dev and storesync-testworker.
    swift build --package-path "$ROOT" --build-tests -Xswiftc -warnings-as-errors
    export STORESYNC_BIN=$ROOT/.build/debug/storesync
    export STORESYNC_DEV_BIN=$ROOT/.build/debug/storesync-dev
    export STORESYNC_TESTWORKER_BIN=$ROOT/.build/debug/storesync-testworker
    ensure_database
    prepare_template
    # The tests give every daemon they start a database of its own; the checkout's API and console logins are not one.
    unset STORESYNC_API_DATABASE_URL STORESYNC_CONSOLE_DATABASE_URL
    local rc=0
    # Every test uses Swift Testing; without XCTest the run closes on one summary line. Unbounded, Swift
    # Testing starts every test at once; with hundreds of servers, simulators and RSA key generations on
    # two cores, loopback requests then time out. A bounded width keeps the run fast and its waits honest.
    export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-12}
    swift test --package-path "$ROOT" --skip-build --disable-xctest "$@" || rc=$?
    if ((rc == 0)) && [[ -f $ROOT/Tests/FuzzTesting/run.sh ]]; then
        bash "$ROOT/Tests/FuzzTesting/run.sh" || rc=$?
    fi
    # A short chaos run (about a minute, its own PostgreSQL): its verdict is the mirror against the simulators'
    # truth, never a timing; its waits are bounded and say what they waited for. STORESYNC_CHAOS=off skips it.
    if ((rc == 0)) && [[ ${STORESYNC_CHAOS:-on} != off ]]; then
        bash "$ROOT/deploy/bench/chaos.sh" "$STORESYNC_BIN" --workers 2 --purchases 24 --duration 20 --kill-every 3 \
            --drain-timeout 180 || rc=$?
    fi
    return "$rc"
}

# `env`: export lines for the database, to paste or eval.
cmd_env() {
    ensure_database
    local v
    for v in DATABASE_URL STORESYNC_TEST_ADMIN_URL STORESYNC_API_DATABASE_URL STORESYNC_CONSOLE_DATABASE_URL; do
        printf "export %s='%s'\n" "$v" "${!v//\'/\'\\\'\'}"
    done
}

main() {
    (($#)) || usage
    local cmd=$1
    shift
    case $cmd in
        run | test | env | pg-start) ;;
        pg-stop) stop_pg; return ;;
        -h | --help | help) usage ;;
        *) echo "dev.sh: unknown command '$cmd'" >&2; usage ;;
    esac
    trap cleanup EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    ensure_packages
    case $cmd in
        run) cmd_run "$@" ;;
        test) cmd_test "$@" ;;
        env) cmd_env; STARTED_PG=0 ;;             # leave it running for the developer
        pg-start) start_pg; STARTED_PG=0; note "PostgreSQL is up; DATABASE_URL=$DATABASE_URL" ;;
    esac
}

main "$@"
