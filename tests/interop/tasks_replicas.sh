#!/usr/bin/env bash
# MCP tasks (SEP-2663) across three `warden serve --http` replicas that share a Redis task
# store (Debian's redis-server, started here on loopback), behind nginx (deploy/nginx/
# warden.conf, its ports replaced), serving the task fixtures of tests/plugins/conformance-
# interactive with a manifest that lets them become tasks:
#
# 1. a task created on r1 is polled through r2, r3 and nginx, its question answered through
#    r2, and another cancelled through r3 (tasks_replicas.py shared);
#    an interactive call begun on r1 is continued on r2, and its requestState refused on r3;
# 2. SIGKILL of the replica running a task: every other replica reports it `failed`, naming
#    the replica, within the lease (5 s), and one sweep writes that, once, into the record
#    and its replica's audit log;
# 3. SIGTERM of a replica running two tasks with --shutdown-grace 3s: the short one completes,
#    the long one is marked `failed` ("shut down before it finished"), the replica exits 0;
# 4. Redis stalled (SIGSTOP) for 8 s as a 4 s task ends: the tool's work is not held up, the
#    task reads `completed` with its result once Redis is back, and its audit is `created`,
#    `completed` — once, no `failed` from any replica's sweep.
#
# Installs redis-server and nginx with apt-get when missing (CI runs as root). Everything it
# writes is under target/interop/tasks-replicas. WARDEN_BIN=<path> uses that binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
work="$interop/tasks-replicas"
started_at=$(date +%s)

need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
if [ "${#need[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || { echo "FAIL: ${need[*]} missing and no apt-get"; exit 1; }
  echo "== installing Debian's ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
nginx="$(command -v nginx || echo /usr/sbin/nginx)"
redis-server --version

if [ -n "${WARDEN_BIN:-}" ]; then
  warden="$WARDEN_BIN"
else
  cargo build --quiet -p warden --manifest-path "$root/Cargo.toml"
  warden="${CARGO_TARGET_DIR:-$root/target}/debug/warden"
fi
(cd "$root/tests/plugins" && env -u CARGO_TARGET_DIR -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
  cargo build --quiet --release --target wasm32-wasip2 -p conformance-interactive --target-dir "$root/target/guests")
python_venv "mcp==2.3.0"

rm -rf "$work"
mkdir -p "$work/plugins" "$work/tmp"
cp "$root/target/guests/wasm32-wasip2/release/conformance_interactive.wasm" "$work/plugins/tasks.wasm"
cat >"$work/plugins/tasks.toml" <<TOML
[interaction]
elicit = true

[tasks]
timeout = "2m"

[tasks.tools]
slow_compute = "optional"
confirm_delete = "optional"
TOML

declare -A pid port
other_pids=()
cleanup() {
  for p in "${pid[@]}" "${other_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
other_pids+=($!)
for _ in $(seq 100); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
redis-cli -p "$redis_port" ping >/dev/null || { echo "FAIL: redis did not start"; cat "$work/redis.log"; exit 1; }
store="redis://127.0.0.1:$redis_port/0"
# One key for every replica, so any of them continues an interactive call.
"$python" -c 'import base64, os, sys; open(sys.argv[1], "w").write(base64.b64encode(os.urandom(48)).decode())' "$work/state.key"
chmod 600 "$work/state.key"

for name in r1 r2 r3; do port[$name]=$(free_port); done
lb_port=$(free_port)
start() {
  local name=$1
  "$warden" serve --plugins "$work/plugins" --cache-dir "$work/cache" --task-store "$store" --state-key-file "$work/state.key" \
    --http "127.0.0.1:${port[$name]}" --replica-id "$name" --shutdown-grace 3s --audit-log "$work/$name.audit.jsonl" \
    >>"$work/$name.log" 2>&1 </dev/null &
  pid[$name]=$!
  for _ in $(seq 600); do
    curl -fsS "http://127.0.0.1:${port[$name]}/readyz" >/dev/null 2>&1 && return 0
    kill -0 "${pid[$name]}" 2>/dev/null || { echo "FAIL: $name exited"; cat "$work/$name.log"; exit 1; }
    sleep 0.1
  done
  echo "FAIL: $name was not ready"; cat "$work/$name.log"; exit 1
}
for name in r1 r2 r3; do start "$name"; done
sed -e "s/127\.0\.0\.1:8080\b/127.0.0.1:$lb_port/" -e "s/127\.0\.0\.1:8081\b/127.0.0.1:${port[r1]}/" \
  -e "s/127\.0\.0\.1:8082\b/127.0.0.1:${port[r2]}/" -e "s/127\.0\.0\.1:8083\b/127.0.0.1:${port[r3]}/" \
  "$root/deploy/nginx/warden.conf" >"$work/warden.conf"
cat >"$work/nginx.conf" <<NGINX
daemon off;
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx-error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    include $work/warden.conf;
}
NGINX
"$nginx" -p "$work" -e "$work/nginx-error.log" -c "$work/nginx.conf" &
other_pids+=($!)
for _ in $(seq 100); do curl -fsS "http://127.0.0.1:$lb_port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
lb="http://127.0.0.1:$lb_port/mcp"
replicas() {
  printf '{"r1": {"addr": "127.0.0.1:%s"}, "r2": {"addr": "127.0.0.1:%s"}, "r3": {"addr": "127.0.0.1:%s"}}' \
    "${port[r1]}" "${port[r2]}" "${port[r3]}"
}
driver() { "$python" "$root/tests/interop/tasks_replicas.py" "$@"; }

echo "== one task, three replicas and nginx (store $store)"
driver shared "$lb" "$(replicas)"

echo "== an interactive call's requestState, accepted once across the replicas"
driver replay "$lb" "$(replicas)"

echo "== SIGKILL of the replica running a task"
id=$(driver start "$lb" "$(replicas)" r2 slow_compute '{"seconds": 60, "label": "orphan"}')
sleep 1
kill -KILL "${pid[r2]}"
wait "${pid[r2]}" 2>/dev/null || true
unset 'pid[r2]'
driver wait "$lb" "$(replicas)" r3 "$id" failed 15 "(\`r2\`)"
# A surviving replica's sweep (every 5 s) writes `failed` into the record and the audit log,
# once: a compare-and-set in Redis lets only one of r1 and r3 do it.
digest=$("$python" -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' "$id")
for _ in $(seq 150); do
  [ "$(cat "$work"/r[13].audit.jsonl | grep -c "\"task\":\"$digest\".*\"task_event\":\"failed\"")" -ge 1 ] && break
  sleep 0.1
done
sleep 6  # another sweep on each replica, which must not write it again
swept=$(cat "$work"/r[13].audit.jsonl | grep "\"task\":\"$digest\".*\"task_event\":\"failed\"" || true)
[ "$(printf '%s\n' "$swept" | grep -c .)" -eq 1 ] || { echo "FAIL: not one failed audit line: $swept"; exit 1; }
stored=$(redis-cli -p "$redis_port" get "warden:task:$id" | "$python" -c 'import json, sys; print(json.load(sys.stdin)["status"])')
[ "$stored" = failed ] || { echo "FAIL: the stored record is $stored"; exit 1; }
echo "ok   one sweep wrote it failed, in Redis and once in the audit log: $(printf '%s' "$swept" | "$python" -c 'import json, sys; r = json.load(sys.stdin); print(r["replica"], r["detail"][:60])')"
start r2

echo "== Redis stalled for 8 s as a 4 s task ends"
stalled=$(driver start "$lb" "$(replicas)" r1 slow_compute '{"seconds": 4, "label": "stall"}')
sleep 1
kill -STOP "${other_pids[0]}"
sleep 8
kill -CONT "${other_pids[0]}"
driver wait "$lb" "$(replicas)" r2 "$stalled" completed 20
sleep 7  # past a whole lease with the store back: no sweep may fail it
digest=$("$python" -c 'import hashlib, sys; print(hashlib.sha256(sys.argv[1].encode()).hexdigest()[:16])' "$stalled")
events=$(cat "$work"/r[123].audit.jsonl | grep "\"task\":\"$digest\"" |
  "$python" -c 'import json, sys; print(" ".join(json.loads(l)["task_event"] for l in sys.stdin))')
[ "$events" = "created completed" ] || { echo "FAIL: the stalled task's audit is: $events"; exit 1; }
worked=$(grep '"target":"slow_compute"' "$work/r1.audit.jsonl" | grep -v '"phase"' | tail -1 |
  "$python" -c 'import json, sys; print(json.load(sys.stdin)["duration_ms"])')
"$python" -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 6000 else 1)' "$worked" ||
  { echo "FAIL: the tool took $worked ms around the stall"; exit 1; }
echo "ok   audited once after Redis came back: $events; the tool's call took $worked ms"

echo "== SIGTERM of a replica running two tasks (--shutdown-grace 3s)"
short=$(driver start "$lb" "$(replicas)" r1 slow_compute '{"seconds": 1.5, "label": "short"}')
long=$(driver start "$lb" "$(replicas)" r1 slow_compute '{"seconds": 60, "label": "long"}')
kill -TERM "${pid[r1]}"
status=0
wait "${pid[r1]}" || status=$?
unset 'pid[r1]'
echo "r1 exited with status $status"
[ "$status" -eq 0 ] || { echo "FAIL: r1 exited with $status"; tail "$work/r1.log"; exit 1; }
driver wait "$lb" "$(replicas)" r2 "$short" completed 5
driver wait "$lb" "$(replicas)" r3 "$long" failed 5 "shut down before it finished"
grep -q "task(s) still running at shutdown were marked failed" "$work/r1.log" ||
  { echo "FAIL: r1 did not log the tasks it marked failed"; tail "$work/r1.log"; exit 1; }

# Every key the store keeps expires (the per-caller index included): nothing outlives its tasks.
# The two shared indexes (every task by expiry, unfinished ones by lease) are emptied by the
# sweeps, which remove their members; Redis drops an empty one.
forever=$(redis-cli -p "$redis_port" --scan --pattern 'warden:*' | while read -r key; do
  [ "$key" = "warden:tasks" ] && continue
  [ "$key" = "warden:tasks:leases" ] && continue
  [ "$(redis-cli -p "$redis_port" pttl "$key")" -lt 0 ] && echo "$key"
done || true)
[ -z "$forever" ] || { echo "FAIL: keys without an expiry: $forever"; exit 1; }
echo "ok   every task key in Redis expires ($(redis-cli -p "$redis_port" dbsize) keys)"

echo "ok: tasks across replicas ($(( $(date +%s) - started_at ))s)"
