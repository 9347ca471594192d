#!/usr/bin/env bash
# Three `warden serve --http` replicas sharing one plugins folder, behind nginx
# (Debian's package) on loopback, configured with deploy/nginx/warden.conf (its
# ports replaced):
#
# 1. the official Python MCP SDK (mcp 2.3.0) on the 2026-07-28 wire (round robin)
#    and on 2025-11-25 sessions (routed by the session id's replica prefix);
# 2. throughput and p50/p99 at concurrency 32 (host/examples/loadgen.rs): one
#    replica direct, one behind nginx, three behind nginx;
# 3. under load at concurrency 32, SIGTERM one replica: it must exit 0 and no
#    call may fail; then SIGKILL another: only calls it had in flight may fail,
#    each with a clear error (nginx's 502), none may hang;
# 4. a 2025-11-25 session whose replica is killed gets "Session terminated" (a
#    404 from another replica) at once, and a new session works.
#
# Installs nginx with apt-get when it is missing (CI runs as root); skips
# (exit 0) only when there is no apt-get at all. PROFILE=release measures
# release builds (default: debug, whose figures only show that it works);
# LOAD_SECONDS sets each load run's length (default 5). Everything it writes
# is under target/interop/replicas.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
work="$interop/replicas"
profile="${PROFILE:-debug}"
seconds="${LOAD_SECONDS:-5}"
concurrency=32
started_at=$(date +%s)

if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "SKIP: nginx is not installed and there is no apt-get to install it"
    exit 0
  fi
  echo "== installing Debian's nginx"
  apt-get update -qq
  # No init system starts the packaged service here; the test starts its own.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx-light >/dev/null 2>&1 ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nginx >/dev/null
fi
nginx="$(command -v nginx || echo /usr/sbin/nginx)"
"$nginx" -v 2>&1

release=()
[ "$profile" = release ] && release=(--release)
cargo build --quiet "${release[@]}" -p warden --bins --example loadgen --manifest-path "$root/Cargo.toml"
cargo xtask plugins
target="${CARGO_TARGET_DIR:-$root/target}/$profile"
warden="$target/warden"
loadgen="$target/examples/loadgen"
plugins="$root/target/plugins/examples"

python_venv "mcp==2.3.0"

rm -rf "$work"
mkdir -p "$work/tmp"
declare -A pid port
nginx_pids=()
cleanup() {
  for p in "${pid[@]}" "${nginx_pids[@]}"; do
    kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

free_port() { "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
for name in r1 r2 r3; do port[$name]=$(free_port); done
lb_port=$(free_port)
single_port=$(free_port)

# One replica: the shared plugins folder, a shared compiled-code cache.
start() {
  local name=$1
  "$warden" serve --plugins "$plugins" --cache-dir "$work/cache" \
    --http "127.0.0.1:${port[$name]}" --replica-id "$name" --shutdown-grace 10s \
    >>"$work/$name.log" 2>&1 </dev/null &
  pid[$name]=$!
  for _ in $(seq 600); do
    curl -fsS "http://127.0.0.1:${port[$name]}/readyz" >/dev/null 2>&1 && return 0
    kill -0 "${pid[$name]}" 2>/dev/null || { echo "FAIL: $name exited"; cat "$work/$name.log"; exit 1; }
    sleep 0.1
  done
  echo "FAIL: $name was not ready within 60 s"; cat "$work/$name.log"; exit 1
}
for name in r1 r2 r3; do start "$name"; done
echo "replicas: r1 :${port[r1]} (pid ${pid[r1]}), r2 :${port[r2]} (pid ${pid[r2]}), r3 :${port[r3]} (pid ${pid[r3]})"

# deploy/nginx/warden.conf with this run's ports; a second copy with every
# address set to r1's is "one replica behind nginx".
configure() {
  local out=$1 listen=$2 a1=$3 a2=$4 a3=$5
  sed -e "s/127\.0\.0\.1:8080\b/127.0.0.1:$listen/" -e "s/127\.0\.0\.1:8081\b/127.0.0.1:$a1/" \
    -e "s/127\.0\.0\.1:8082\b/127.0.0.1:$a2/" -e "s/127\.0\.0\.1:8083\b/127.0.0.1:$a3/" \
    "$root/deploy/nginx/warden.conf" >"$out"
}
configure "$work/warden.conf" "$lb_port" "${port[r1]}" "${port[r2]}" "${port[r3]}"
configure "$work/warden-single.conf" "$single_port" "${port[r1]}" "${port[r1]}" "${port[r1]}"
start_nginx() {
  local name=$1 conf=$2 listen=$3
  mkdir -p "$work/tmp/$name"
  cat >"$work/nginx-$name.conf" <<EOF
daemon off;
worker_processes 1;
pid $work/nginx-$name.pid;
error_log $work/nginx-$name-error.log warn;
events { worker_connections 4096; }
http {
    log_format warden '\$msec \$status \$request_method "\$http_mcp_session_id" \$upstream_addr';
    access_log $work/access-$name.log warden;
    client_body_temp_path $work/tmp/$name/body;
    proxy_temp_path $work/tmp/$name/proxy;
    include $conf;
}
EOF
  "$nginx" -p "$work" -e "$work/nginx-$name-error.log" -c "$work/nginx-$name.conf" &
  nginx_pids+=($!)
  for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$listen/readyz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "FAIL: nginx ($name) did not start"; cat "$work/nginx-$name-error.log"; exit 1
}
start_nginx three "$work/warden.conf" "$lb_port"
start_nginx single "$work/warden-single.conf" "$single_port"
lb="http://127.0.0.1:$lb_port/mcp"
replicas_json() {
  printf '{"r1": {"addr": "127.0.0.1:%s", "pid": %s}, "r2": {"addr": "127.0.0.1:%s", "pid": %s}, "r3": {"addr": "127.0.0.1:%s", "pid": %s}}' \
    "${port[r1]}" "${pid[r1]}" "${port[r2]}" "${pid[r2]}" "${port[r3]}" "${pid[r3]}"
}

echo "== the official Python SDK through nginx at $lb"
"$python" "$root/tests/interop/replicas.py" clients "$lb" "$work/access-three.log" "$(replicas_json)"

echo "== throughput at concurrency $concurrency, $seconds s each ($profile build)"
measure() {
  local label=$1 url=$2 out
  out=$("$loadgen" "$url" --concurrency "$concurrency" --seconds "$seconds" --json)
  "$python" - "$label" "$out" <<'EOF'
import json, sys
label, r = sys.argv[1], json.loads(sys.argv[2])
print(f"{label:<28} {r['throughput']:>8.0f} calls/s   p50 {r['p50_ms']:>7.2f} ms   p99 {r['p99_ms']:>7.2f} ms"
      f"   (ok {r['ok']}, failed {r['clear_error'] + r['cut_off'] + r['other']})")
if r["clear_error"] or r["cut_off"] or r["other"] or not r["ok"]:
    sys.exit(f"FAIL: {label}: {r}")
EOF
}
measure "one replica, direct" "http://127.0.0.1:${port[r1]}/mcp"
measure "one replica behind nginx" "http://127.0.0.1:$single_port/mcp"
measure "three replicas behind nginx" "$lb"

# Runs the load generator in the background on the three replicas; `finish`
# waits for it and prints its counts.
load() {
  "$loadgen" "$lb" --concurrency "$concurrency" --seconds "$1" --timeout 20 --json >"$work/load-$2.json" &
  load_pid=$!
}
finish() {
  wait "$load_pid"
  "$python" - "$work/load-$1.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"loadgen: ok {r['ok']}, failed with an HTTP error status {r['clear_error']}, "
      f"cut off mid-answer {r['cut_off']}, other failures (connection errors, wrong answers, hangs) {r['other']}")
for failure in r["failures"]:
    print(f"  failure: {failure}")
EOF
}
count() { "$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$work/load-$1.json" "$2"; }
# Requests nginx answered with `status` after sending them to `addr`, from line `from` on.
answered() {
  tail -n +"$1" "$work/access-three.log" | awk -v s="$2" -v a="$3" '$2 == s && index($0, a) { n++ } END { print n + 0 }'
}

echo "== SIGTERM to r1 during a load at concurrency $concurrency; r1 restarted"
from=$(($(wc -l <"$work/access-three.log") + 1))
load $((seconds + 3)) term
sleep 2
term_at=$(date +%s.%N)
kill -TERM "${pid[r1]}"
status=0
wait "${pid[r1]}" || status=$?
drained=$("$python" -c "import time; print(f'{time.time() - $term_at:.2f}')")
served_during=$(grep -c "shutting down" "$work/r1.log" || true)
echo "r1 exited with status $status, ${drained} s after SIGTERM"
[ "$status" -eq 0 ] || { echo "FAIL: r1 exited with $status after SIGTERM"; tail "$work/r1.log"; exit 1; }
[ "$served_during" -ge 1 ] || { echo "FAIL: r1 did not log its drain"; exit 1; }
start r1
finish term
echo "nginx: 502s from r1: $(answered "$from" 502 "127.0.0.1:${port[r1]}"); requests r1 served in this run: $(answered "$from" 200 "127.0.0.1:${port[r1]}")"
if [ "$(count term clear_error)" -ne 0 ] || [ "$(count term cut_off)" -ne 0 ] || [ "$(count term other)" -ne 0 ] ||
  [ "$(count term ok)" -eq 0 ]; then
  echo "FAIL: a call failed while a replica drained"; exit 1
fi

echo "== SIGKILL to r2 during a load at concurrency $concurrency"
from=$(($(wc -l <"$work/access-three.log") + 1))
errors_from=$(($(wc -l <"$work/nginx-three-error.log") + 1))
load $((seconds + 1)) kill
sleep 2
kill -KILL "${pid[r2]}"
wait "${pid[r2]}" 2>/dev/null || true
unset 'pid[r2]'
finish kill
failed=$(($(count kill clear_error) + $(count kill cut_off) + $(count kill other)))
# nginx's own account: a 502 for each call r2 died before answering (its error
# log: "... while reading response header from upstream"), and a body broken
# off for each answer r2 died while sending ("... while reading upstream").
from_r2=$(answered "$from" 502 "127.0.0.1:${port[r2]}")
all_502=$(tail -n +"$from" "$work/access-three.log" | awk '$2 == 502 { n++ } END { print n + 0 }')
broken=$(tail -n +"$errors_from" "$work/nginx-three-error.log" |
  grep -c "prematurely closed connection while reading upstream, .*upstream: \"http://127.0.0.1:${port[r2]}/" || true)
echo "nginx: 502s in this run: $all_502 (to r2: $from_r2); answers from r2 broken off: $broken"
[ "$(count kill other)" -eq 0 ] || { echo "FAIL: calls failed without a clear error (or hung)"; exit 1; }
[ "$failed" -le "$concurrency" ] || { echo "FAIL: $failed calls failed, more than the $concurrency that can be in flight"; exit 1; }
[ "$all_502" -eq "$from_r2" ] && [ "$(count kill clear_error)" -eq "$from_r2" ] && [ "$(count kill cut_off)" -eq "$broken" ] ||
  { echo "FAIL: the failures were not exactly the calls in flight at r2"; exit 1; }
[ "$(count kill ok)" -gt 0 ] || { echo "FAIL: no call succeeded"; exit 1; }
echo "lost: $failed calls, all of them in flight at r2 (at most $concurrency can be in flight): $from_r2 answered 502 by nginx, $broken cut off mid-answer"
start r2

echo "== a 2025-11-25 session whose replica is killed"
"$python" "$root/tests/interop/replicas.py" session-gone "$lb" "$work/access-three.log" "$(replicas_json)"

echo "ok: replicas behind nginx ($(( $(date +%s) - started_at ))s)"
