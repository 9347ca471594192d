#!/usr/bin/env bash
# A real Prometheus (Debian's package) scraping `warden serve --metrics`:
# N tool calls made with the official Python MCP SDK (mcp 2.3.0) over HTTP,
# then a PromQL query through Prometheus's HTTP API must return exactly N.
#
# Installs Prometheus with apt-get when it is missing (CI runs as root); skips
# (exit 0) only when there is no apt-get at all. Everything it writes is
# under target/interop/prometheus. Builds Warden (debug; WARDEN_BIN=<path> uses that
# binary).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
work="$interop/prometheus"
calls="${CALLS:-7}"
started_at=$(date +%s)

if ! command -v prometheus >/dev/null 2>&1; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "SKIP: prometheus is not installed and there is no apt-get to install it"
    exit 0
  fi
  echo "== installing Debian's prometheus package"
  apt-get update -qq
  # No init system starts the packaged service here; the test starts its own.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
prometheus --version 2>&1 | head -1

warden_binary
cargo xtask plugins
plugins="$root/target/plugins/examples"

python_venv "mcp==2.3.0"

rm -rf "$work"
mkdir -p "$work"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# Warden on ephemeral loopback ports; both addresses are read from its log.
"$warden" serve --plugins "$plugins" --no-watch --no-cache \
  --http 127.0.0.1:0 --metrics 127.0.0.1:0 >"$work/warden.out" 2>"$work/warden.log" </dev/null &
pids+=($!)
logged() { sed -n "s/.*$1 \\(http:[^ ]*\\).*/\\1/p" "$work/warden.log" | head -1; }
for _ in $(seq 600); do
  [ -n "$(logged 'serving MCP over HTTP at')" ] && break
  kill -0 "${pids[0]}" 2>/dev/null || { echo "FAIL: warden exited"; cat "$work/warden.log"; exit 1; }
  sleep 0.1
done
mcp_url="$(logged 'serving MCP over HTTP at')"
metrics_url="$(logged 'serving metrics at')"
[ -n "$mcp_url" ] && [ -n "$metrics_url" ] || { echo "FAIL: warden did not start"; cat "$work/warden.log"; exit 1; }
metrics_addr="${metrics_url#http://}"
metrics_addr="${metrics_addr%/metrics}"
echo "warden: MCP at $mcp_url, metrics at $metrics_url"

# Prometheus on a free loopback port, scraping Warden every second.
prom_port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: warden
    static_configs:
      - targets: ["$metrics_addr"]
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=($!)
prom="http://127.0.0.1:$prom_port"

"$python" - "$mcp_url" "$prom" "$calls" <<'EOF'
import asyncio, json, sys, time, urllib.parse, urllib.request

from mcp import Client

mcp_url, prom, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
deadline = time.monotonic() + 120


def get(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response) if response.headers.get_content_type() == "application/json" else response.read()


def wait(what, check, every=0.2):
    while time.monotonic() < deadline:
        try:
            result = check()
        except OSError:
            result = None
        if result is not None:
            return result
        time.sleep(every)
    sys.exit(f"FAIL: timed out waiting for {what}")


wait("Prometheus to be ready", lambda: get(f"{prom}/-/ready") or None)


def target_up():
    targets = get(f"{prom}/api/v1/targets")["data"]["activeTargets"]
    return True if targets and targets[0]["health"] == "up" else None


wait("Prometheus to scrape Warden", target_up)


async def make_calls():
    async with Client(mcp_url) as client:
        for i in range(calls):
            result = await client.call_tool("text_stats", {"text": f"call number {i}"})
            assert not result.is_error, result
            assert result.structured_content["words"] == 3, result.structured_content


asyncio.run(make_calls())
print(f"made {calls} text_stats calls")

query = 'sum(warden_calls_total{kind="tool-call",plugin="text",target="text_stats",outcome="ok"})'


def counted():
    answer = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": query}))
    assert answer["status"] == "success", answer
    results = answer["data"]["result"]
    if not results:
        return None
    value = float(results[0]["value"][1])
    if value > calls:
        sys.exit(f"FAIL: {query} = {value}, more than the {calls} calls made")
    return value if value == calls else None


value = wait(f"{query} to reach {calls}", counted)
print(f"prometheus: {query} = {value:g}")
EOF
echo "ok: prometheus counted exactly $calls calls ($(( $(date +%s) - started_at ))s)"
