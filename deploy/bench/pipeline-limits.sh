#!/usr/bin/env bash
# One store's pipeline side by side with the physical floor of the work a production host does for it, in one run.
#
# usage: deploy/bench/pipeline-limits.sh STORESYNC_BIN ADMIN_DATABASE_URL [NOTIFICATIONS] [STORE_LATENCY_MS] [apple|google]
#   ADMIN_DATABASE_URL must allow CREATE DATABASE on a PostgreSQL running on this machine (its CPU is read
#   from /proc); one throwaway database, storesync_bench_limits, is created and dropped. The benchmark itself is
#   `storesync-dev` (STORESYNC_DEV_BIN, default the storesync-dev next to STORESYNC_BIN). The store defaults to apple.
#   ROUNDS (default 3) is how many times steps 1 and 2 alternate; the ratio compares their medians (on a shared
#   host one run of either can be slowed by a neighbour by half), and each round's figures are printed beside it.
#
# 1. `storesync-dev bench pipeline --store S` (defaults: 3,000 notifications, L = 100 ms), after a warm-up run of a
#    quarter of that and ANALYZE. Its simulator runs in a process of its own, so the benchmark process's CPU is
#    StoreSync's alone, and it reads every PostgreSQL process's CPU over the same window. StoreSync's CPU per
#    notification is the two together — what a production host pays. The simulator's (the stores' and the load's)
#    is reported beside it.
# 2. The PostgreSQL floor: pgbench, a C client with prepared statements, runs on the same database only the
#    writes the benchmark's notifications cannot do without, in the benchmark's mix — the body stored and enqueued
#    (Apple: 13 KB shaped like a signed notification; Google: the 1.8 KB push with its token), then in the worker's
#    transaction the jobs deleted, and for each a dedup receipt, one invoice and its payment and one timeline event,
#    with, for three renewals in four, the purchase and subscription updated, and for the fourth, each
#    subscription's first notification, its purchase, token and subscription inserted (Google: and its
#    acknowledgement queued, then taken and the purchase marked acknowledged) — ten notifications per transaction
#    (as group commit does), with no parsing, HTTP, verification or logic. Both sides of those exchanges count:
#    the PostgreSQL processes' CPU and pgbench's, the least a database client can spend on them. Each run of steps
#    1 and 2 is followed by a VACUUM whose PostgreSQL CPU counts as that run's.
# 3. The crypto floor: OpenSSL's single-core verify rate times the verifications a renewal costs the host (model
#    parameters, from the code path: Apple, the notification, the status's transaction and renewal info and the
#    new history transaction — 4 ES256; Google, the push's OIDC token — 1 RS256). Signing is the stores' work.
# 4. The HTTP floor: deploy/bench/http-floor.c, a libmicrohttpd server that answers without parsing or logic,
#    driven by wrk over loopback with the exchanges at their real sizes (model parameters, read with strace from
#    `bench pipeline`). The host is the server of the webhook and the client of the store's API, so two runs:
#    webhooks alone, of which the server's CPU counts, then the API exchanges alone, of which wrk's CPU counts
#    (Apple: the status request and its 15.3 KB answer, the history request and its 7.5 KB answer; Google: the
#    subscription's 0.6 KB answer with its share of the batched order read, 1.1 KB, and a quarter of an
#    acknowledgement).
# Prints one JSON line: StoreSync's and the simulator's CPU per notification, the floor's, the floor's bound on
# notifications per second for this machine's cores (cores / floor CPU), and StoreSync's CPU over the floor's.
set -euo pipefail
BIN=${1:?storesync binary}; ADMIN=${2:?admin database URL}; N=${3:-3000}; L=${4:-100}; STORE=${5:-apple}
ROUNDS=${ROUNDS:-3}
DEV_BIN=${STORESYNC_DEV_BIN:-$(dirname "$BIN")/storesync-dev}
[[ -x $DEV_BIN ]] || { echo "pipeline-limits.sh: $DEV_BIN is not an executable (set STORESYNC_DEV_BIN)" >&2; exit 1; }
BATCH=10
FLOOR_SECONDS=15
case $STORE in
  # API_MIX: the API exchanges of one wrk round (GET /status, GET /history, POST /ack); API_PER_NOTIFICATION of
  # them are one notification's.
  apple) VERIFY=ecdsap256; VERIFIES=4; WEBHOOK_BODY_BYTES=13050; STATUS_BYTES=15309; HISTORY_BYTES=7516
         API_MIX="status history"; API_PER_NOTIFICATION=2 ;;
  google) VERIFY=rsa2048; VERIFIES=1; WEBHOOK_BODY_BYTES=1800; STATUS_BYTES=1700; HISTORY_BYTES=0
          API_MIX="status status status status ack"; API_PER_NOTIFICATION=1.25 ;;
  *) echo "pipeline-limits.sh: the store is apple or google, not $STORE" >&2; exit 2 ;;
esac
DB=storesync_bench_limits
URL="${ADMIN%/*}/$DB"
WORK=$(mktemp -d)
cleanup() {
  { exec 3>&-; } 2>/dev/null || true
  psql -X "$ADMIN" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# CPU seconds × 100 of all PostgreSQL processes, reaped backends included (the postmaster's cutime).
pg_ticks() {
  local total=0 p stat
  for p in $(pgrep -x postgres); do
    { read -r stat < "/proc/$p/stat"; } 2>/dev/null || continue
    set -- ${stat#*) }
    total=$((total + ${12} + ${13} + ${14} + ${15}))
  done
  echo "$total"
}

psql -X "$ADMIN" -qc "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1
psql -X "$ADMIN" -qc "CREATE DATABASE $DB" >/dev/null
DATABASE_URL="$URL" "$BIN" migrate >/dev/null 2>&1

# A warm-up run fills the mirror's tables and ANALYZE gives the planner their statistics, as a production database
# has them: on empty tables the generic plans of the worker's prepared statements would scan instead of using
# indexes until autovacuum's first ANALYZE, a minute in. (Not the queue's table, whose size comes and goes.)
DATABASE_URL="$URL" "$DEV_BIN" bench pipeline --store "$STORE" --notifications $(( N / 4 + 1 )) --store-latency-ms 0 >/dev/null 2>&1
psql -X "$URL" -qc "ANALYZE store_purchases, purchase_tokens, customer_subscriptions, invoices, payments, refunds,
                            purchase_events, notification_receipts, customers, account_tokens, product_mappings"

# Apple: a body shaped like an App Store notification, random base64 with one 3.5 KB certificate chain three
# times. Google: random base64 the size of a push with its token.
psql -X -q -v ON_ERROR_STOP=1 -v store="$STORE" "$URL" >/dev/null <<'SQL'
CREATE FUNCTION pg_temp.random_bytes(n int) RETURNS bytea LANGUAGE sql AS
  $$ SELECT string_agg(decode(md5(random()::text), 'hex'), '') FROM generate_series(1, n / 16) $$;
CREATE TABLE limits_body AS
  SELECT convert_to(CASE WHEN :'store' = 'apple'
                         THEN chain || encode(pg_temp.random_bytes(1500), 'base64') || chain
                              || encode(pg_temp.random_bytes(500), 'base64') || chain
                         ELSE encode(pg_temp.random_bytes(1344), 'base64') END, 'UTF8') AS raw
  FROM (SELECT encode(pg_temp.random_bytes(2608), 'base64') AS chain) c;
CREATE TABLE limits_snapshot AS SELECT snapshot FROM store_purchases LIMIT 1;
CREATE TABLE limits_purchase AS
  SELECT connection_id, environment, customer_id, account_token, store_product_id, base_plan_id
  FROM store_purchases WHERE customer_id IS NOT NULL LIMIT 1;
CREATE TABLE limits_subscription AS
  SELECT account_id, customer_id, plan_price_id, source FROM customer_subscriptions WHERE purchase_id IS NOT NULL LIMIT 1;
SQL
read -r lo hi < <(psql -X -At -F' ' "$URL" -c \
  "SELECT min(purchase_id), max(purchase_id) FROM customer_subscriptions WHERE purchase_id IS NOT NULL")

{
  echo "BEGIN;"
  for _ in $(seq $BATCH); do
    echo "INSERT INTO jobs (kind, payload, raw, headers) SELECT '$STORE.notification', jsonb_build_object('account_id', 1, 'received_at', now()), raw, '{\"content-type\": \"application/json\"}' FROM limits_body;"
  done
  echo "COMMIT;"
} > "$WORK/ingest.sql"
# BATCH jobs of one kind and priority, in one transaction that takes them off the queue through the lease's index
# (acknowledgements have their own priority, as in StoreSync); `WRITES I` prints job I's writes. Each client mirrors
# its own purchases, so clients never wait on each other's row locks.
mirror_script() {
  local kind=$1 priority=$2 writes=$3
  echo "BEGIN;"
  echo "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE priority = $priority AND kind = '$kind' ORDER BY run_at, id LIMIT $BATCH FOR UPDATE SKIP LOCKED) RETURNING octet_length(raw);"
  for i in $(seq $BATCH); do
    echo "\\set p$i :lo + (:client_id * $BATCH + $i) % (:hi - :lo + 1)"
    "$writes" "$i"
  done
  echo "COMMIT;"
}
receipt="INSERT INTO notification_receipts (store, scope, message_id, received_at, processed_at, outcome, job_id) VALUES ('$STORE', '', gen_random_uuid()::text, now(), now(), 'mirrored', 1);"
charge() {
  echo "WITH i AS (INSERT INTO invoices (purchase_id, store, store_transaction_id, store_product_id, amount_minor, currency, description, period_start, period_end, issued_at) VALUES ($1, '$STORE', gen_random_uuid()::text, 'limits.monthly', 999, 'USD', '$2', now(), now() + interval '1 month', now()) RETURNING id, store_transaction_id) INSERT INTO payments (invoice_id, store, store_transaction_id, amount_minor, currency, paid_at) SELECT id, '$STORE', store_transaction_id, 999, 'USD', now() FROM i;"
  echo "INSERT INTO purchase_events (purchase_id, kind, source, reference, store_event, detail) VALUES ($1, 'refreshed', 'notification', gen_random_uuid()::text, '$2', '{\"state\": \"active\", \"auto_renew\": \"true\"}');"
}
renewal() {
  echo "$receipt"
  echo "UPDATE store_purchases SET expires_at = now() + interval '1 month', period_start = now(), snapshot = (SELECT snapshot FROM limits_snapshot), as_of = now(), updated_at = now() WHERE id = :p$1;"
  echo "UPDATE customer_subscriptions SET current_period_start = now(), current_period_end = now() + interval '1 month', expires_at = now() + interval '1 month', updated_at = now() WHERE purchase_id = :p$1;"
  charge ":p$1" renewal
}
# A purchase: a new lineage's purchase, token and subscription, its first charge, and (Google) the acknowledgement
# it needs queued.
purchase() {
  echo "$receipt"
  echo "INSERT INTO store_purchases (connection_id, lineage, environment, customer_id, linked_at, account_token, store_product_id, base_plan_id, store_state, expires_at, period_start, auto_renew, snapshot, as_of, needs_acknowledgement) SELECT connection_id, gen_random_uuid()::text, environment, customer_id, now(), account_token, store_product_id, base_plan_id, 'active', now() + interval '1 month', now(), true, (SELECT snapshot FROM limits_snapshot), now(), '$STORE' = 'google' FROM limits_purchase RETURNING id \\gset n$1_"
  echo "INSERT INTO purchase_tokens (connection_id, purchase_token, purchase_id) SELECT connection_id, gen_random_uuid()::text, :n$1_id FROM limits_purchase;"
  echo "INSERT INTO customer_subscriptions (account_id, customer_id, plan_price_id, source, purchase_id, store_state, status, current_period_start, current_period_end, expires_at) SELECT account_id, customer_id, plan_price_id, source, :n$1_id, 'active', 'active', now(), now() + interval '1 month', now() + interval '1 month' FROM limits_subscription;"
  charge ":n$1_id" purchase
  [ "$STORE" = google ] && echo "INSERT INTO jobs (kind, payload, priority) VALUES ('google.acknowledge', jsonb_build_object('purchase_id', :n$1_id::bigint), $ACK_PRIORITY);"
  return 0
}
# An acknowledgement's writes: the purchase marked acknowledged.
acknowledgement() {
  echo "UPDATE store_purchases SET needs_acknowledgement = false, acknowledged_at = now(), updated_at = now() WHERE id = :p$1;"
}
ACK_PRIORITY=10  # GoogleAcknowledgement.priority
mirror_script "$STORE.notification" 0 renewal > "$WORK/renewal.sql"
mirror_script "$STORE.notification" 0 purchase > "$WORK/purchase.sql"
mirror_script google.acknowledge $ACK_PRIORITY acknowledgement > "$WORK/acknowledgement.sql"
# The benchmark's mix, per four batches of notifications: four ingested, three renewals and one purchase (each
# subscription's first notification), and for Google the purchase's acknowledgements.
SCRIPTS=(-f "$WORK/ingest.sql@4" -f "$WORK/renewal.sql@3" -f "$WORK/purchase.sql@1")
[ "$STORE" = google ] && SCRIPTS+=(-f "$WORK/acknowledgement.sql@1")

# ROUNDS times, alternated: StoreSync's run, then the floor's. On a shared host either can be slowed by a
# neighbour; the medians of the rounds are what the ratio compares.
ours_all=""; floors=""
# Each run is followed by a VACUUM counted as its own: its dead rows are its cost. Left to autovacuum, one run's dead
# rows were cleaned up at random in the next run's window — the floor paying for the pipeline's or the other way
# round — and single floor rounds moved by several times.
vacuum() { psql -X "$URL" -qc "VACUUM" >/dev/null; }
vacuum
for _ in $(seq "$ROUNDS"); do
  ours=$(DATABASE_URL="$URL" "$DEV_BIN" bench pipeline --store "$STORE" --notifications "$N" --store-latency-ms "$L" \
         2>/dev/null | tail -1)
  before=$(pg_ticks)
  vacuum
  ours_all+="$(( $(pg_ticks) - before )) $ours"$'\n'
  before=$(pg_ticks)
  # `times` in the subshell prints its children's (pgbench's) user and system time on its second line.
  floor=$(pgbench -n -M prepared -c 16 -j 2 -T "$FLOOR_SECONDS" -D lo="$lo" -D hi="$hi" "${SCRIPTS[@]}" "$URL" 2>/dev/null; times)
  # The floor's jobs left queued would be the next run's; clearing them is the floor's work too.
  psql -X "$URL" -qc "DELETE FROM jobs WHERE kind IN ('$STORE.notification', 'google.acknowledge')"
  vacuum
  floor_pg_ticks=$(( $(pg_ticks) - before ))
  floor_client_cpu=$(echo "$floor" | tail -1 | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }; print t }')
  # pgbench reports each script's transactions in the order given: the second and third are the mirrored batches.
  floor_notifications=$(echo "$floor" | awk -v batch=$BATCH '/^ - [0-9]+ transactions/ { n++; if (n == 2 || n == 3) t += $2 }
                                                              END { print t * batch }')
  floors+="$floor_notifications $floor_pg_ticks $floor_client_cpu"$'\n'
done

# The HTTP floor: the server serves until its stdin (fd 3 here) closes.
HERE=$(cd "$(dirname "$0")" && pwd)
"${CC:-cc}" -O2 -o "$WORK/http-floor" "$HERE/http-floor.c" -lmicrohttpd
mkfifo "$WORK/http-floor.in"
"$WORK/http-floor" "$STATUS_BYTES" "$HISTORY_BYTES" < "$WORK/http-floor.in" > "$WORK/http-floor.port" &
http_pid=$!
exec 3> "$WORK/http-floor.in"
for _ in $(seq 100); do [ -s "$WORK/http-floor.port" ] && break; sleep 0.1; done
[ -s "$WORK/http-floor.port" ] || { echo "http-floor did not start" >&2; exit 1; }
PORT=$(cat "$WORK/http-floor.port")
cat > "$WORK/webhook.lua" <<LUA
local body = string.rep("a", $WEBHOOK_BODY_BYTES)
request = function() return wrk.format("POST", "/webhook", {["Content-Type"] = "application/json"}, body) end
LUA
{
  echo "local mix = {}"
  for exchange in $API_MIX; do
    case $exchange in
      ack) echo 'table.insert(mix, wrk.format("POST", "/ack", {["Content-Length"] = "0"}, ""))' ;;
      *) echo "table.insert(mix, wrk.format(\"GET\", \"/$exchange\"))" ;;
    esac
  done
  echo 'local n = 0'
  echo 'request = function() n = n + 1; return mix[(n - 1) % #mix + 1] end'
} > "$WORK/api.lua"
proc_ticks() { local stat; read -r stat < "/proc/$1/stat"; set -- ${stat#*) }; echo $(( ${12} + ${13} )); }
# One wrk run of SCRIPT: prints its requests, its own CPU seconds and the server's CPU ticks. `times` in the
# subshell prints its children's (wrk's) user and system time on its second line.
wrk_run() {
  local before out requests client
  before=$(proc_ticks "$http_pid")
  out=$(wrk -t "$(nproc)" -c 64 -d 8s -s "$1" "http://127.0.0.1:$PORT/" || echo "wrk failed" >&2
        times)
  requests=$(echo "$out" | awk '/requests in/ {print $1}')
  [ -n "$requests" ] || { echo "pipeline-limits: wrk reported no requests:" >&2; echo "$out" >&2; exit 1; }
  client=$(echo "$out" | tail -1 | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }; print t }')
  echo "$requests $client $(( $(proc_ticks "$http_pid") - before ))"
}
read -r webhook_requests _ webhook_server_ticks < <(wrk_run "$WORK/webhook.lua")
read -r api_requests api_client_cpu _ < <(wrk_run "$WORK/api.lua")
exec 3>&-
wait "$http_pid"

# The last two columns of `openssl speed`'s result line: signatures and verifications per second.
speed=$(openssl speed -seconds 3 "$VERIFY" 2>/dev/null | awk '/(256 bits ecdsa|rsa 2048 bits)/ {print $(NF-1), $NF}' | tail -1)

python3 - "$STORE" "$ours_all" "$floors" "$speed" \
  "$VERIFIES" "$FLOOR_SECONDS" "$(nproc)" "$webhook_requests" "$webhook_server_ticks" "$api_requests" "$api_client_cpu" \
  "$API_PER_NOTIFICATION" <<'PY'
import json, sys
(store, ours_all, floors, speed, verifies, floor_seconds, cores,
 webhook_requests, webhook_server_ticks, api_requests, api_client_cpu, api_per_notification) = sys.argv[1:]
# Each line: the PostgreSQL ticks of the VACUUM after the run, then the run's JSON; the vacuum joins its PostgreSQL CPU.
runs = []
for line in ours_all.splitlines():
    if not line.strip():
        continue
    ticks, report = line.split(" ", 1)
    run = json.loads(report)
    run["vacuum_cpu_ms_per_notification"] = int(ticks) / 100 * 1000 / run["notifications"]
    run["postgres_cpu_ms_per_notification"] += run["vacuum_cpu_ms_per_notification"]
    runs.append(run)
_, verify_per_s = (float(x) for x in speed.split())
verifies, floor_seconds, cores = int(verifies), int(floor_seconds), int(cores)
def cpu(run):
    return run["storesync_cpu_s"] * 1000 / run["notifications"] + run["postgres_cpu_ms_per_notification"]
def median(values):
    return sorted(values)[len(values) // 2]
# The round whose StoreSync CPU is the median speaks for StoreSync; the floor's PostgreSQL CPU is the median of
# its rounds.
ours = sorted(runs, key=cpu)[len(runs) // 2]
n = ours["notifications"]
ours_process = ours["storesync_cpu_s"] * 1000 / n
ours_pg = ours["postgres_cpu_ms_per_notification"]
ours_cpu = ours_process + ours_pg
floor_rounds = [(int(notifications), int(ticks), float(client))
                for notifications, ticks, client in (line.split() for line in floors.splitlines() if line.strip())]
floor_pgs = [ticks / 100 * 1000 / floor_n for floor_n, ticks, _ in floor_rounds]
floor_pg = median(floor_pgs)
floor_client = median([client * 1000 / floor_n for floor_n, _, client in floor_rounds])
floor_rate = median([floor_n / floor_seconds for floor_n, _, _ in floor_rounds])
crypto = verifies * 1000 / verify_per_s
webhook = int(webhook_server_ticks) / 100 * 1000 / int(webhook_requests)
api = float(api_client_cpu) * 1000 / int(api_requests) * float(api_per_notification)
floor_cpu = floor_pg + floor_client + crypto + webhook + api
print(json.dumps({
    "benchmark": "pipeline-limits", "store": store, "notifications": n, "store_latency_ms": ours["store_latency_ms"],
    "cores": cores,
    "storesync": {
        "notifications_per_sec": ours["notifications_per_sec"],
        "process_cpu_ms_per_notification": round(ours_process, 3),
        "postgres_cpu_ms_per_notification": round(ours_pg, 3),
        "of_which_vacuum_cpu_ms_per_notification": round(ours["vacuum_cpu_ms_per_notification"], 3),
        "cpu_ms_per_notification": round(ours_cpu, 3),
        "store_calls_per_notification": ours["store_calls_per_notification"],
        "dead_letters": ours["dead_letters"],
    },
    "simulator_cpu_ms_per_notification": ours["stores_cpu_ms_per_notification"],
    "floor": {
        "postgres_only_notifications_per_sec": round(floor_rate, 1),
        "postgres_cpu_ms_per_notification": round(floor_pg, 3),
        "postgres_client_cpu_ms_per_notification": round(floor_client, 3),
        "verifications": verifies,
        "crypto_cpu_ms_per_notification": round(crypto, 3),
        "webhook_server_cpu_ms_per_notification": round(webhook, 3),
        "api_client_cpu_ms_per_notification": round(api, 3),
        "cpu_ms_per_notification": round(floor_cpu, 3),
        "notifications_per_sec_bound": round(cores * 1000 / floor_cpu, 1),
    },
    "storesync_cpu_over_floor": round(ours_cpu / floor_cpu, 2),
    "rounds": len(runs),
    "rounds_storesync_cpu_ms_per_notification": [round(cpu(run), 3) for run in runs],
    "rounds_floor_postgres_cpu_ms_per_notification": [round(value, 3) for value in floor_pgs],
}))
PY
