#!/usr/bin/env bash
# `warden new` → `warden build` → `warden call` → `warden dev` for Rust, Python and
# JavaScript, in a fresh folder outside the repository, with only the registries
# (crates.io, PyPI, npm) and the machine's own Rust, Python 3 and Node (20 or later):
# the commands each template's README gives, run as written. Each language is driven
# by tests/interop/new_project.py (the official Python MCP client, mcp 2.3.0, for
# `warden dev`).
#
# Installs mcp into target/interop/venv (the venv the other interop scripts use);
# builds Warden (debug; WARDEN_BIN=<path> uses that binary instead). Rust builds share
# target/tmp/dev-guest with tests/dev.rs, so the SDK's dependencies compile once.
# Exits non-zero on any mismatch.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
cd "$root"

python_venv "mcp==2.3.0"

node_major="$(node --version 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/')"
[ "${node_major:-0}" -ge 20 ] || { echo "the JavaScript template needs Node 20 or later on PATH (found '${node_major:-none}')"; exit 1; }

warden_binary

projects="$(mktemp -d "${TMPDIR:-/tmp}/warden-new-XXXXXX")"
trap 'rm -rf "$projects"' EXIT
cache="$work/new-project-cache"
rm -rf "$cache"
status=0
for lang in rust python js; do
  target=()
  [ "$lang" = rust ] && target=("$root/target/tmp/dev-guest")
  log="$work/new-project-$lang.log"
  timeout 1800 "$python" "$root/tests/interop/new_project.py" "$warden" "$lang" "$projects" "$cache" "${target[@]}" \
    2>"$log" || { status=1; echo "== $lang FAILED; its stderr ($log), last 30 lines:"; tail -n 30 "$log"; }
done
exit "$status"
