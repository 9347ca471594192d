#!/usr/bin/env bash
# Interactive plugins (warden:plugin@0.2.0) with the official MCP SDK clients: elicitation
# accepted, declined and cancelled, a sampling round and two rounds in one call, over stdio
# and HTTP, in both protocol eras — the Python SDK (mcp 2.3.0, legacy and auto modes:
# tests/interop/python_interaction.py) and the TypeScript SDKs (1.32.2 legacy; client 2.4.0
# on the 2026 wire with its MRTR driver: tests/interop/ts/interaction_checks.mjs).
#
# Stages plugins/notes (with a scratch notes folder and an [interaction] grant) and the
# test plugin conformance-interactive in target/interop/interaction-plugins; installs mcp
# and Node 24 into target/interop/venv and the pinned TypeScript SDKs into target/interop/ts
# (as sdk_clients.sh does); builds Warden (debug; WARDEN_BIN=<path> uses that binary).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd -P)"  # real path: mounts name folders by it
source "$root/tests/interop/lib.sh"
cd "$root"

sdk_clients_env
cp "$root/tests/interop/ts/interaction_checks.mjs" "$ts/interaction_checks.mjs"

warden_binary
cargo xtask plugins >/dev/null
(cd "$root/tests/plugins" && env -u CARGO_TARGET_DIR -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS \
  cargo build --quiet --release --target wasm32-wasip2 -p conformance-interactive --target-dir "$root/target/guests")

plugins="$work/interaction-plugins"
rm -rf "$plugins" "$work/interaction-notes"
mkdir -p "$plugins" "$work/interaction-notes"
cp "$root/target/plugins/examples/notes.wasm" "$plugins/notes.wasm"
cat >"$plugins/notes.toml" <<TOML
[filesystem]
"$work/interaction-notes" = { mount = "/notes", access = "read-write" }
[interaction]
elicit = true
sample = true
TOML
cp "$root/target/guests/wasm32-wasip2/release/conformance_interactive.wasm" "$plugins/interactive.wasm"
printf '[interaction]\nelicit = true\nsample = true\nroots = true\n' >"$plugins/interactive.toml"

log="$work/interaction-http.log"
serve_http "$log" --plugins "$plugins" --no-watch

status=0
timeout 600 "$python" "$root/tests/interop/python_interaction.py" "$warden" "$plugins" "$url" \
  2>"$work/interaction-client.log" || status=$?
if [ "$status" -ne 0 ]; then
  echo "== FAILED (exit $status); the client's stderr (with stdio Warden's), last 30 lines:"
  tail -n 30 "$work/interaction-client.log"
fi
for sdk in v1 v2; do
  for transport in stdio http; do
    if [ "$transport" = stdio ]; then where=("--stdio" "$warden" "$plugins"); else where=("--http" "$url"); fi
    (cd "$ts" && timeout 300 node interaction_checks.mjs "$sdk" "${where[@]}") || status=1
  done
done
if [ "$status" -ne 0 ]; then
  echo "== FAILED; the HTTP Warden's log, last 20 lines:"
  tail -n 20 "$log"
fi
exit "$status"
