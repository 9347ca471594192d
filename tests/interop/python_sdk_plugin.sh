#!/usr/bin/env bash
# The Python SDK (sdk/python, package warden_plugin) and the example plugin written
# with it (plugins-py/csvtools), end to end:
#
#  1. the contract shipped inside the package is byte-identical to wit/v0.3.0/plugin.wit;
#  2. the SDK's unit tests (type hints → JSON Schema, values, results, errors, task
#     support) pass in plain CPython;
#  3. componentize-py 0.25.1 builds the example against the package's WIT into
#     target/plugins/python-sdk/csvtools.wasm;
#  4. `warden check` accepts it — and says, under each tool, whether its calls may run
#     as MCP tasks and who decided: `summarize_csv` declares `task="optional"` (contract
#     0.3.0), the others nothing — and `warden call` runs its tools (exit 0, 1, 2; with
#     no client, the interactive tools say they cannot ask);
#  5. `warden serve` serves it, with its manifest (plugins-py/csvtools/warden.toml:
#     `[interaction] elicit`, `sample`, `roots`), over stdio to the official Python MCP
#     SDK (mcp 2.3.0, both protocol eras), which checks exact values, elicitation,
#     sampling and roots answered by its callbacks included; then `warden serve --http`
#     of the same folder runs `summarize_csv` on a 40 000-row table as an MCP task, driven
#     with raw 2026-07-28 JSON-RPC (mcp 2.3.0 has no tasks client): created, polled with
#     tasks/get to `completed`, the exact summary (tests/interop/python_sdk_plugin.py).
#
# Installs componentize-py and mcp into target/interop/venv (the venv the other
# interop scripts use); builds Warden (debug; WARDEN_BIN=<path> uses that binary
# instead). Prints the component's size, how long Warden took to load it (cold and
# from its cache), the tools/call round trips and how long the task took; exits
# non-zero on any mismatch.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
sdk="$root/sdk/python"
source="$root/plugins-py/csvtools"
plugins="$root/target/plugins/python-sdk"
cd "$root"

echo "== the contract in the package is wit/v0.3.0/plugin.wit"
cmp "$root/wit/v0.3.0/plugin.wit" "$sdk/warden_plugin/wit/plugin.wit" \
  || { echo "sdk/python/warden_plugin/wit/plugin.wit differs from wit/v0.3.0/plugin.wit: copy it again"; exit 1; }

echo "== SDK unit tests (plain CPython: $(python3 --version))"
python3 -B "$sdk/tests/test_sdk.py"

python_venv "mcp==2.3.0" "componentize-py==0.25.1"
componentize="$interop/venv/bin/componentize-py"
got="$("$componentize" --version)"
[ "$got" = "componentize-py 0.25.1" ] || { echo "componentize-py is '$got', want 0.25.1"; exit 1; }

# What an author runs (sdk/python/README.md): the WIT folder and the package's
# parent folder come from the package itself. Built from copies: componentize-py
# leaves a __pycache__ beside the modules it reads.
build="$work/python-sdk-build"
rm -rf "$build" "$plugins"
mkdir -p "$plugins" "$build/sdk"
cp -R "$source" "$build/app"
cp -R "$sdk/warden_plugin" "$build/sdk/warden_plugin"
wit="$(PYTHONPATH="$build/sdk" python3 -B -m warden_plugin wit)"
path="$(PYTHONPATH="$build/sdk" python3 -B -m warden_plugin path)"
echo "== componentize-py 0.25.1: $source -> $plugins/csvtools.wasm"
(cd "$build/app" && "$componentize" -d "$wit" -w warden:plugin/plugin componentize app -p . -p "$path" \
  -o "$plugins/csvtools.wasm")
cp "$source/warden.toml" "$plugins/csvtools.toml"

warden_binary

# An empty compiled-code cache: the first connection measures a cold load.
# (`warden check` takes no --cache-dir: it uses $XDG_CACHE_HOME/warden, the same folder.)
rm -rf "$work/python-sdk-cache" "$work/python-sdk-http-cache"
cache="$work/python-sdk-cache/warden"
# The HTTP server for the task (its own cache: it compiles the component before it
# listens, so the stdio connection below still measures a cold load).
echo "== warden serve --http (for the task): $plugins"
serve_http "$work/python-sdk-http.log" --plugins "$plugins" --cache-dir "$work/python-sdk-http-cache" --no-watch
stdio_driver "$work/python-sdk.log" 900 python_sdk_plugin.py "$warden" "$plugins" "$cache" "$url"
stop_http

echo "== warden check $plugins/csvtools.wasm"
XDG_CACHE_HOME="$work/python-sdk-cache" "$warden" check "$plugins/csvtools.wasm" >"$work/python-sdk-check.txt" \
  || { cat "$work/python-sdk-check.txt"; echo "warden check refused the component"; exit 1; }
for line in "exports      tools, resources, prompts, completions" \
            "tools        add_row, csv_to_markdown, delete_rows, describe_columns, find_csv_folders, query_csv, summarize_csv" \
            "resources    csv://samples, csv://samples/{name}" "prompts      analyze_csv"; do
  grep -qF -- "$line" "$work/python-sdk-check.txt" \
    || { cat "$work/python-sdk-check.txt"; echo "warden check: no line '$line'"; exit 1; }
done
# Task support (contract 0.3.0), in each tool's block (`  tool         NAME`, then its
# lines indented four spaces): summarize_csv declares `optional`; the others declare
# nothing, so they are `forbidden (default)` unless the manifest has a [tasks] section,
# which decides over the plugin.
tool_block() { # tool: the lines of its block in warden check's output
  awk -v tool="$1" 'inside && /^    / { print; next } inside { exit }
    /^  tool / && $1 == "tool" && $2 == tool && NF == 2 { inside = 1 }' "$work/python-sdk-check.txt"
}
check_task() { # tool expected-line
  local block
  block="$(tool_block "$1")"
  grep -qxF -- "$2" <<<"$block" \
    || { cat "$work/python-sdk-check.txt"; echo "warden check: no line '$2' under 'tool $1'"; exit 1; }
  echo "warden check: tool $1 →${2#    task      }"
}
check_task summarize_csv "    task       optional (declared by the plugin)"
if grep -q '^[[:space:]]*\[tasks[].]' "$source/warden.toml"; then
  echo "warden check: $source/warden.toml has [tasks]: the tools without a declaration are as it says"
else
  for tool in add_row csv_to_markdown delete_rows describe_columns find_csv_folders query_csv; do
    check_task "$tool" "    task       forbidden (default)"
  done
fi

rm -f "$work/python-sdk-call.log"
# warden call: the MCP result as JSON, exit 0 on success, 1 on isError, 2 when the
# arguments do not match the schema.
call() { # expected-exit expected-json tool arguments
  local want_status="$1" want="$2" status=0 got
  got="$("$warden" call "$plugins/csvtools.wasm" "$3" "$4" --cache-dir "$cache" 2>>"$work/python-sdk-call.log")" || status=$?
  [ "$status" -eq "$want_status" ] || { echo "warden call $3 $4: exit $status, want $want_status; $got"; exit 1; }
  "$python" - "$got" "$want" <<'EOF' || { echo "warden call $3 $4: unexpected result"; exit 1; }
import json, sys
got, want = json.loads(sys.argv[1]), json.loads(sys.argv[2])
got.pop("resultType", None)
if got != want:
    print(f"got  {json.dumps(got)}\nwant {json.dumps(want)}")
    sys.exit(1)
EOF
  echo "warden call $3 → exit $status, as expected"
}
call 0 '{"content":[{"type":"text","text":"| x |\n| :---: |\n| 1 |"}],"isError":false}' \
  csv_to_markdown '{"csv":"x\n1\n","align":"center"}'
call 0 '{"content":[{"type":"text","text":"{\"columns\":[\"b\"],\"rows\":[[\"4\"]],\"matched\":1}"}],"structuredContent":{"columns":["b"],"rows":[["4"]],"matched":1},"isError":false}' \
  query_csv '{"csv":"a,b\n1,2\n3,4\n","columns":["b"],"where":[{"column":"a","op":">","value":"2"}]}'
call 1 '{"content":[{"type":"text","text":"unknown column \"c\"; the columns are: a, b"}],"isError":true}' \
  query_csv '{"csv":"a,b\n1,2\n","sort_by":"c"}'
# No client to ask: can_ask is false, and the tools say so (an isError result).
call 1 '{"content":[{"type":"text","text":"did not delete 1 rows: it needs the user'"'"'s answer, and that cannot be asked here (the client does not support form elicitation, or the operator has not granted `[interaction] elicit` to this plugin)"}],"isError":true}' \
  delete_rows '{"csv":"a\n1\n2\n","column":"a","value":"1"}'
call 0 '{"content":[{"type":"text","text":"No row has a = \"3\": nothing to delete."}],"isError":false}' \
  delete_rows '{"csv":"a\n1\n2\n","column":"a","value":"3"}'
call 1 '{"content":[{"type":"text","text":"described nothing: it needs the client'"'"'s model, and that cannot be asked here (the client does not support sampling, or the operator has not granted `[interaction] sample` to this plugin)"}],"isError":true}' \
  describe_columns '{"csv":"a\n1\n"}'
call 1 '{"content":[{"type":"text","text":"found nothing: it needs the client'"'"'s roots, and they cannot be asked for here (the client does not support roots, or the operator has not granted `[interaction] roots` to this plugin)"}],"isError":true}' \
  find_csv_folders '{}'
status=0
"$warden" call "$plugins/csvtools.wasm" query_csv '{"csv":"a\n1\n","limit":0}' --cache-dir "$cache" >/dev/null 2>>"$work/python-sdk-call.log" || status=$?
[ "$status" -eq 2 ] || { echo "warden call with limit 0: exit $status, want 2"; exit 1; }
echo "warden call query_csv limit 0 → exit 2, as expected"
echo "== python SDK plugin: all checks passed"
