#!/usr/bin/env bash
# The Apple pipeline side by side with the physical floor of its work on this machine, in one run.
#
# usage: deploy/bench/pipeline-limits.sh STORESYNC_BIN ADMIN_DATABASE_URL [NOTIFICATIONS] [STORE_LATENCY_MS]
#   ADMIN_DATABASE_URL must allow CREATE DATABASE on a PostgreSQL running on this machine (its CPU is read
#   from /proc); one throwaway database, storesync_bench_limits, is created and dropped. The benchmark itself is
#   `storesync-dev` (STORESYNC_DEV_BIN, default the storesync-dev next to STORESYNC_BIN).
#
# 1. `storesync-dev bench pipeline --store apple` (defaults: 3,000 notifications, L = 100 ms), with the CPU time
#    of the benchmark process (StoreSync and the simulator) and of every PostgreSQL process.
# 2. The PostgreSQL floor: pgbench, a C client with prepared statements, runs on the same database only the
#    writes a notification cannot do without — the 13 KB body stored and enqueued, then in the worker's
#    transaction the jobs deleted, and for each a dedup receipt, the purchase and subscription updated, one invoice and
#    its payment, one timeline event — ten notifications per transaction (as group commit does), with no
#    parsing, HTTP, verification or logic. Its notifications per second and CPU per notification.
# 3. The crypto floor: OpenSSL's single-core P-256 sign and verify times, times the ES256 operations a
#    renewal costs (model parameters, from the code path: the worker verifies the notification, the
#    status's transaction and renewal info, and the new history transaction — 4; the simulator signs the
#    notification and its nested transaction and renewal info, the status's two and the history's one — 6).
# 4. The HTTP floor: deploy/bench/http-floor.c, a libmicrohttpd server that answers without parsing or logic,
#    driven by wrk over loopback with a renewal's three exchanges at their real sizes (model parameters,
#    read with strace from `bench pipeline`: the 13.3 KB webhook POST and its small answer, the status
#    request and its 15.3 KB answer, the history request and its 7.5 KB answer); both sides' CPU.
# Prints one JSON line: both sides' CPU per notification, the floor's bound on notifications per second
# for this machine's cores (cores / floor CPU), and StoreSync's CPU over the floor's.
set -euo pipefail
BIN=${1:?storesync binary}; ADMIN=${2:?admin database URL}; N=${3:-3000}; L=${4:-100}
DEV_BIN=${STORESYNC_DEV_BIN:-$(dirname "$BIN")/storesync-dev}
[[ -x $DEV_BIN ]] || { echo "pipeline-limits.sh: $DEV_BIN is not an executable (set STORESYNC_DEV_BIN)" >&2; exit 1; }
VERIFIES=4; SIGNS=6; BATCH=10
WEBHOOK_BODY_BYTES=13050; STATUS_BYTES=15309; HISTORY_BYTES=7516
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

before=$(pg_ticks)
ours=$(DATABASE_URL="$URL" "$DEV_BIN" bench pipeline --store apple --notifications "$N" --store-latency-ms "$L" 2>/dev/null | tail -1)
ours_pg_ticks=$(( $(pg_ticks) - before ))

# A body shaped like an App Store notification: random base64 with one 3.5 KB certificate chain three times.
psql -X -q -v ON_ERROR_STOP=1 "$URL" >/dev/null <<'SQL'
CREATE FUNCTION pg_temp.random_bytes(n int) RETURNS bytea LANGUAGE sql AS
  $$ SELECT string_agg(decode(md5(random()::text), 'hex'), '') FROM generate_series(1, n / 16) $$;
CREATE TABLE limits_body AS
  SELECT convert_to(chain || encode(pg_temp.random_bytes(1500), 'base64') || chain
                    || encode(pg_temp.random_bytes(500), 'base64') || chain, 'UTF8') AS raw
  FROM (SELECT encode(pg_temp.random_bytes(2608), 'base64') AS chain) c;
CREATE TABLE limits_snapshot AS SELECT snapshot FROM store_purchases LIMIT 1;
SQL
read -r lo hi < <(psql -X -At -F' ' "$URL" -c \
  "SELECT min(purchase_id), max(purchase_id) FROM customer_subscriptions WHERE purchase_id IS NOT NULL")

{
  echo "BEGIN;"
  for _ in $(seq $BATCH); do
    echo "INSERT INTO jobs (kind, payload, raw, headers) SELECT 'apple.notification', jsonb_build_object('account_id', 1, 'received_at', now()), raw, '{\"content-type\": \"application/json\"}' FROM limits_body;"
  done
  echo "COMMIT;"
} > "$WORK/ingest.sql"
# Each client mirrors its own purchases, so clients never wait on each other's row locks.
{
  echo "BEGIN;"
  echo "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs ORDER BY id LIMIT $BATCH FOR UPDATE SKIP LOCKED) RETURNING octet_length(raw);"
  for i in $(seq $BATCH); do
    echo "\\set p$i :lo + (:client_id * $BATCH + $i) % (:hi - :lo + 1)"
    echo "INSERT INTO notification_receipts (store, scope, message_id, received_at, processed_at, outcome, job_id) VALUES ('apple', '', gen_random_uuid()::text, now(), now(), 'mirrored', 1);"
    echo "UPDATE store_purchases SET expires_at = now() + interval '1 month', period_start = now(), snapshot = (SELECT snapshot FROM limits_snapshot), as_of = now(), updated_at = now() WHERE id = :p$i;"
    echo "UPDATE customer_subscriptions SET current_period_start = now(), current_period_end = now() + interval '1 month', expires_at = now() + interval '1 month', updated_at = now() WHERE purchase_id = :p$i;"
    echo "WITH i AS (INSERT INTO invoices (purchase_id, store, store_transaction_id, store_product_id, amount_minor, currency, description, period_start, period_end, issued_at) VALUES (:p$i, 'apple', gen_random_uuid()::text, 'limits.monthly', 999, 'USD', 'renewal', now(), now() + interval '1 month', now()) RETURNING id, store_transaction_id) INSERT INTO payments (invoice_id, store, store_transaction_id, amount_minor, currency, paid_at) SELECT id, 'apple', store_transaction_id, 999, 'USD', now() FROM i;"
    echo "INSERT INTO purchase_events (purchase_id, kind, source, reference, store_event, detail) VALUES (:p$i, 'refreshed', 'notification', gen_random_uuid()::text, 'DID_RENEW', '{\"state\": \"active\", \"auto_renew\": \"true\"}');"
  done
  echo "COMMIT;"
} > "$WORK/work.sql"

before=$(pg_ticks)
floor=$(pgbench -n -M prepared -c 16 -j 2 -T 15 -D lo="$lo" -D hi="$hi" \
  -f "$WORK/ingest.sql@1" -f "$WORK/work.sql@1" "$URL" 2>/dev/null)
floor_pg_ticks=$(( $(pg_ticks) - before ))
floor_notifications=$(echo "$floor" | awk '/number of transactions actually processed/ {print $NF}' | cut -d/ -f1)
floor_tps=$(echo "$floor" | awk '/^tps = / {print $3; exit}')

# The HTTP floor: the server serves until its stdin (fd 3 here) closes.
HERE=$(cd "$(dirname "$0")" && pwd)
"${CC:-cc}" -O2 -o "$WORK/http-floor" "$HERE/http-floor.c" -lmicrohttpd
mkfifo "$WORK/http-floor.in"
"$WORK/http-floor" "$STATUS_BYTES" "$HISTORY_BYTES" < "$WORK/http-floor.in" > "$WORK/http-floor.port" &
http_pid=$!
exec 3> "$WORK/http-floor.in"
for _ in $(seq 100); do [ -s "$WORK/http-floor.port" ] && break; sleep 0.1; done
[ -s "$WORK/http-floor.port" ] || { echo "http-floor did not start" >&2; exit 1; }
cat > "$WORK/floor.lua" <<LUA
local body = string.rep("a", $WEBHOOK_BODY_BYTES)
local n = 0
request = function()
  n = n + 1
  if n % 3 == 1 then return wrk.format("POST", "/webhook/apple", {["Content-Type"] = "application/json"}, body) end
  if n % 3 == 2 then return wrk.format("GET", "/status") end
  return wrk.format("GET", "/history")
end
LUA
proc_ticks() { local stat; read -r stat < "/proc/$1/stat"; set -- ${stat#*) }; echo $(( ${12} + ${13} )); }
server_before=$(proc_ticks "$http_pid")
# `times` in the subshell prints its children's (wrk's) user and system time on its second line.
http=$(wrk -t "$(nproc)" -c 64 -d 10s -s "$WORK/floor.lua" "http://127.0.0.1:$(cat "$WORK/http-floor.port")/" \
         || echo "wrk failed" >&2
       times)
http_server_ticks=$(( $(proc_ticks "$http_pid") - server_before ))
exec 3>&-
wait "$http_pid"
http_requests=$(echo "$http" | awk '/requests in/ {print $1}')
[ -n "$http_requests" ] || { echo "pipeline-limits: wrk reported no requests:" >&2; echo "$http" >&2; exit 1; }
http_client_cpu=$(echo "$http" | tail -1 | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }; print t }')

speed=$(openssl speed -seconds 3 ecdsap256 2>/dev/null | awk '/256 bits ecdsa/ {print $(NF-1), $NF}' | tail -1)

python3 - "$ours" "$ours_pg_ticks" "$floor_notifications" "$floor_tps" "$floor_pg_ticks" "$speed" \
  "$VERIFIES" "$SIGNS" "$BATCH" "$(nproc)" "$http_requests" "$http_client_cpu" "$http_server_ticks" <<'PY'
import json, sys
(ours, ours_ticks, floor_txns, floor_tps, floor_ticks, speed, verifies, signs, batch, cores,
 http_requests, http_client_cpu, http_server_ticks) = sys.argv[1:]
ours = json.loads(ours)
n = ours["notifications"]
sign_per_s, verify_per_s = (float(x) for x in speed.split())
verifies, signs, batch, cores = int(verifies), int(signs), int(batch), int(cores)
# Half the pgbench transactions ingest BATCH notifications, half mirror BATCH.
floor_n = int(floor_txns) * batch / 2
ours_cpu = (ours["process_cpu_s"] + int(ours_ticks) / 100) * 1000 / n
floor_pg = int(floor_ticks) / 100 * 1000 / floor_n
crypto = verifies * 1000 / verify_per_s + signs * 1000 / sign_per_s
# Three exchanges a notification.
http = (float(http_client_cpu) + int(http_server_ticks) / 100) * 1000 / (int(http_requests) / 3)
floor_cpu = floor_pg + crypto + http
print(json.dumps({
    "benchmark": "pipeline-limits", "store": "apple", "notifications": n, "store_latency_ms": ours["store_latency_ms"],
    "cores": cores,
    "storesync": {
        "notifications_per_sec": ours["notifications_per_sec"],
        "process_cpu_ms_per_notification": round(ours["process_cpu_s"] * 1000 / n, 3),
        "postgres_cpu_ms_per_notification": round(int(ours_ticks) / 100 * 1000 / n, 3),
        "cpu_ms_per_notification": round(ours_cpu, 3),
        "dead_letters": ours["dead_letters"],
    },
    "floor": {
        "postgres_only_notifications_per_sec": round(float(floor_tps) * batch / 2, 1),
        "postgres_cpu_ms_per_notification": round(floor_pg, 3),
        "es256_verifies": verifies, "es256_signatures": signs,
        "crypto_cpu_ms_per_notification": round(crypto, 3),
        "http_cpu_ms_per_notification": round(http, 3),
        "cpu_ms_per_notification": round(floor_cpu, 3),
        "notifications_per_sec_bound": round(cores * 1000 / floor_cpu, 1),
    },
    "storesync_cpu_over_floor": round(ours_cpu / floor_cpu, 2),
}))
PY
