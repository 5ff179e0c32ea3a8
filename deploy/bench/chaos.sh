#!/usr/bin/env bash
# deploy/bench/chaos.sh STORESYNC_BIN [options]: StoreSync under chaos, checked against the stores' truth.
#
# Starts its own PostgreSQL (initdb in a temporary directory, unix socket only), `storesync serve` (port 0) and N
# `storesync work` processes, then `storesync-dev chaos` (STORESYNC_DEV_BIN, default the storesync-dev next to
# STORESYNC_BIN): the App Store and Play simulators with a scripted load of
# purchases, renewals, cancels and refunds, each action preceded with probability F by a store fault (429, 500,
# latency, a lost notification). Meanwhile a random worker is SIGKILLed every K seconds and replaced, and
# PostgreSQL is restarted once (`pg_ctl restart -m immediate`) half-way through the load. Any worker or serve that
# exits on its own is started again and counted. At the end `storesync-dev chaos` turns faults off, drains the queue,
# resyncs every purchase, drains again and compares the mirror with the simulators. Prints its one JSON line and
# exits with its status: non-zero on any loss, duplicate, mismatch or dead letter.
#
#   --workers N       worker processes (default 3)
#   --purchases N     purchases, half per store (default 100)
#   --duration S      seconds the load is spread over (default 60)
#   --kill-every S    seconds between SIGKILLs (default 3; 0: none)
#   --fault-rate F    share of actions preceded by a store fault (default 0.1)
#   --no-restart      do not restart PostgreSQL
#   --seed S          the load's and the kills' seed (default 1)
#   --drain-timeout S how long the queue may take to drain (default 300)
#   --keep            keep the temporary directory (logs, cluster) even when the run passes
set -euo pipefail

usage() { sed -n '2,22s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2; exit 2; }
die() { echo "chaos.sh: $*" >&2; exit 1; }
note() { echo "chaos.sh: $*" >&2; }

(($#)) || usage
[[ $1 != -* ]] || usage
BIN=$(realpath "$1")
shift
[[ -x $BIN ]] || die "$BIN is not an executable"
DEV_BIN=$(realpath "${STORESYNC_DEV_BIN:-$(dirname "$BIN")/storesync-dev}")
[[ -x $DEV_BIN ]] || die "$DEV_BIN is not an executable (build the storesync-dev product, or set STORESYNC_DEV_BIN)"
WORKERS=3 PURCHASES=100 DURATION=60 KILL_EVERY=3 FAULT_RATE=0.1 RESTART=1 SEED=1 DRAIN_TIMEOUT=300 KEEP=0
while (($#)); do
    case $1 in
        --workers) WORKERS=$2; shift 2 ;;
        --purchases) PURCHASES=$2; shift 2 ;;
        --duration) DURATION=$2; shift 2 ;;
        --kill-every) KILL_EVERY=$2; shift 2 ;;
        --fault-rate) FAULT_RATE=$2; shift 2 ;;
        --no-restart) RESTART=0; shift ;;
        --seed) SEED=$2; shift 2 ;;
        --drain-timeout) DRAIN_TIMEOUT=$2; shift 2 ;;
        --keep) KEEP=1; shift ;;
        -h | --help) usage ;;
        *) echo "chaos.sh: unknown option $1" >&2; usage ;;
    esac
done
for v in WORKERS PURCHASES DURATION KILL_EVERY SEED DRAIN_TIMEOUT; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "--${v,,} must be a whole number, not '${!v}'"
done
((WORKERS >= 1 && WORKERS <= 20)) || die "--workers is 1…20"
RANDOM=$SEED

PG_BIN=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1)
[[ -x ${PG_BIN:-}/pg_ctl ]] || die "no PostgreSQL server under /usr/lib/postgresql/*/bin (deploy/dev.sh installs it)"
DIR=$(mktemp -d /tmp/storesync-chaos.XXXXXX)
chmod 0755 "$DIR"
PG_HOME=$DIR/pg  # the cluster and its log, owned by the user PostgreSQL runs as
PG_DATA=$PG_HOME/data
PG_LOG=$PG_HOME/postgres.log
SOCKET=$DIR/run
mkdir -p "$SOCKET"

# PostgreSQL refuses to run as root: as root the cluster belongs to the `storesync` system user, as in dev.sh.
as_pg() {
    if [[ $EUID -eq 0 ]]; then
        (cd / && runuser -u storesync -- "$@")
    else
        (cd / && "$@")
    fi
}
if [[ $EUID -eq 0 ]]; then
    id -u storesync >/dev/null 2>&1 || useradd --system --user-group --no-create-home --shell /usr/sbin/nologin storesync
    chown storesync:storesync "$SOCKET"
fi

PG_STARTED=0 SERVE_PID= DRIVER_PID=
declare -a WORKER_PIDS=()
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    local pids=("${WORKER_PIDS[@]}" ${SERVE_PID:+"$SERVE_PID"} ${DRIVER_PID:+"$DRIVER_PID"})
    if ((${#pids[@]})); then
        kill -TERM "${pids[@]}" 2>/dev/null || true
        local i
        for i in $(seq 1 50); do
            kill -0 "${pids[@]}" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
    if ((PG_STARTED)); then
        as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -m immediate -w -t 60 stop >/dev/null 2>&1 || true
    fi
    if ((rc == 0 && !KEEP)); then
        rm -rf "$DIR"
    else
        note "logs and cluster kept in $DIR"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A cluster reachable only through its unix socket in $DIR: no TCP port at all, so nothing else is disturbed.
chown_pg() { [[ $EUID -ne 0 ]] || chown -R storesync:storesync "$@"; }
mkdir -p "$PG_DATA"
chown_pg "$PG_HOME"
as_pg "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 ||
    { tail -n 20 "$DIR/initdb.log" >&2; die "initdb failed"; }
as_pg tee -a "$PG_DATA/postgresql.conf" >/dev/null <<EOF
listen_addresses = ''
unix_socket_directories = '$SOCKET'
max_connections = 200
fsync = on
synchronous_commit = on
EOF
as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -w -t 60 start >/dev/null ||
    { tail -n 20 "$PG_LOG" >&2; die "PostgreSQL did not start"; }
PG_STARTED=1
"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKET" -U postgres -d postgres -c 'CREATE DATABASE chaos' >/dev/null
export DATABASE_URL="host=$SOCKET user=postgres dbname=chaos"
export STORESYNC_LOG_LEVEL=${STORESYNC_LOG_LEVEL:-warning}
"$BIN" migrate >"$DIR/migrate.log" 2>&1 || { cat "$DIR/migrate.log" >&2; die "migrate failed"; }

# Short leases so a killed worker's jobs come back within seconds; resyncs spread at 10× the default rate.
export STORESYNC_LEASE_DURATION=5s STORESYNC_POLL_INTERVAL=250ms STORESYNC_GRACE_PERIOD=1s STORESYNC_METRICS_LISTEN=off
export STORESYNC_RESYNC_RATE_SHARE=5

SERVE_PORT=0 SERVE_EXITS=0
start_serve() {
    # At info: the port it bound is in its "listening" line.
    STORESYNC_LOG_LEVEL=info "$BIN" serve --listen "127.0.0.1:$SERVE_PORT" >>"$DIR/serve.log" 2>&1 &
    SERVE_PID=$!
}
start_serve
for _ in $(seq 1 100); do
    SERVE_PORT=$(sed -n 's/.*"message":"listening".*"port":\([0-9]*\).*/\1/p' "$DIR/serve.log" | tail -n 1)
    [[ -z $SERVE_PORT ]] || break
    kill -0 "$SERVE_PID" 2>/dev/null || { cat "$DIR/serve.log" >&2; die "serve exited"; }
    sleep 0.1
done
[[ -n $SERVE_PORT ]] || die "serve did not log its port within 10 s (log: $DIR/serve.log)"

WORKER_EXITS=0
start_worker() { # slot
    "$BIN" work >>"$DIR/work-$1.log" 2>&1 &
    WORKER_PIDS[$1]=$!
}
for ((i = 0; i < WORKERS; i++)); do start_worker "$i"; done

"$DEV_BIN" chaos --ingest "http://127.0.0.1:$SERVE_PORT" --purchases "$PURCHASES" --duration "${DURATION}s" \
    --fault-rate "$FAULT_RATE" --seed "$SEED" --progress "$DIR/progress" --counters "$DIR/counters.json" \
    --drain-timeout "${DRAIN_TIMEOUT}s" >"$DIR/result.json" 2>"$DIR/chaos.log" &
DRIVER_PID=$!

KILLS=0 RESTARTS=0 COUNTED=0
write_counters() {
    printf '{"kills":%d,"restarts":%d,"worker_exits":%d,"serve_exits":%d,"workers":%d}\n' \
        "$KILLS" "$RESTARTS" "$WORKER_EXITS" "$SERVE_EXITS" "$WORKERS" >"$DIR/counters.tmp"
    mv "$DIR/counters.tmp" "$DIR/counters.json"
}
now() { date +%s; }
DEADLINE=$(($(now) + DURATION + 2 * DRAIN_TIMEOUT + 300))
NEXT_KILL=$(($(now) + KILL_EVERY))
while kill -0 "$DRIVER_PID" 2>/dev/null; do
    (($(now) < DEADLINE)) || die "storesync-dev chaos did not finish in time (log: $DIR/chaos.log)"
    # Whatever exited on its own (a worker started while PostgreSQL was down may) is started again.
    for ((i = 0; i < WORKERS; i++)); do
        if ! kill -0 "${WORKER_PIDS[$i]}" 2>/dev/null; then
            wait "${WORKER_PIDS[$i]}" 2>/dev/null || true
            WORKER_EXITS=$((WORKER_EXITS + 1))
            start_worker "$i"
        fi
    done
    if ! kill -0 "$SERVE_PID" 2>/dev/null; then
        wait "$SERVE_PID" 2>/dev/null || true
        SERVE_EXITS=$((SERVE_EXITS + 1))
        start_serve
    fi
    progress=$(cat "$DIR/progress" 2>/dev/null || true)
    if [[ $progress =~ ^load\ ([0-9]+)/([0-9]+) ]]; then
        done_=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
        if ((KILL_EVERY > 0 && $(now) >= NEXT_KILL)); then
            slot=$((RANDOM % WORKERS))
            kill -KILL "${WORKER_PIDS[$slot]}" 2>/dev/null || true
            wait "${WORKER_PIDS[$slot]}" 2>/dev/null || true
            KILLS=$((KILLS + 1))
            start_worker "$slot"
            NEXT_KILL=$(($(now) + KILL_EVERY))
        fi
        if ((RESTART && RESTARTS == 0 && total > 0 && done_ * 2 >= total)); then
            note "restarting PostgreSQL (immediate) at $done_/$total"
            as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_LOG" -m immediate -w -t 120 restart >/dev/null ||
                { tail -n 20 "$PG_LOG" >&2; die "PostgreSQL did not restart"; }
            RESTARTS=1
        fi
    elif [[ $progress == settle* ]] && ((!COUNTED)); then
        write_counters
        COUNTED=1
    fi
    sleep 0.5
done
((COUNTED)) || write_counters
rc=0
wait "$DRIVER_PID" || rc=$?
DRIVER_PID=
if [[ -s $DIR/result.json ]]; then
    cat "$DIR/result.json"
else
    tail -n 20 "$DIR/chaos.log" >&2
fi
if ((rc != 0)); then
    grep '^chaos:' "$DIR/chaos.log" | head -n 20 >&2 || true
    note "failed (status $rc); logs in $DIR"
fi
exit "$rc"
