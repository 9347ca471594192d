#!/usr/bin/env bash
# A plain component written in Python: tests/interop/python-component (its own WIT
# package, example:units, and app.py) built with componentize-py 0.25.1, then served by
# `warden serve` and called over stdio by the official Python MCP SDK (mcp 2.3.0, both
# protocol eras) with exact-value checks (tests/interop/python_component.py).
#
# Installs componentize-py and mcp into target/interop/venv (the venv the other
# interop scripts use), builds Warden (debug; WARDEN_BIN=<path> uses that binary
# instead), builds the component, adds the WIT's doc comments to it (`warden
# embed-docs`) into target/plugins/python-component/. Prints the
# component's size, how long Warden took to load it (cold and from its cache) and
# the tools/call round trips; exits non-zero if any check failed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
source="$root/tests/interop/python-component"
plugins="$root/target/plugins/python-component"
cd "$root"

python_venv "mcp==2.3.0" "componentize-py==0.25.1"
componentize="$interop/venv/bin/componentize-py"
got="$("$componentize" --version)"
[ "$got" = "componentize-py 0.25.1" ] || { echo "componentize-py is '$got', want 0.25.1"; exit 1; }

# Built from a copy: componentize-py leaves a __pycache__ beside the app it reads.
build="$work/python-component-build"
echo "== componentize-py 0.25.1: $source -> $build/units.wasm"
rm -rf "$build" "$plugins"
mkdir -p "$plugins"
cp -R "$source" "$build"
(cd "$build" && "$componentize" -d wit -w units componentize app -o "$build/units.wasm")

warden_binary

# componentize-py writes no `package-docs` section: Warden adds the WIT's doc comments.
echo "== warden embed-docs: doc comments of $source/wit -> $plugins/units.wasm"
"$warden" embed-docs "$build/units.wasm" --wit "$source/wit" --world units --output "$plugins/units.wasm"

# An empty compiled-code cache: the first connection measures a cold load.
cache="$work/python-component-cache"
rm -rf "$cache"
stdio_driver "$work/python-component.log" 600 python_component.py "$warden" "$plugins" "$cache"

# componentize-py's stub mode (`-s`): every WASI import a trapping stub, which adds core
# instances (38 in all; Warden's instance pool used to hold 32, and said so only after
# compiling). The same app must load and answer.
echo "== componentize-py 0.25.1 --stub-wasi: the same app, WASI replaced by trapping stubs"
stub="$work/python-component-stub"
rm -rf "$stub"
mkdir -p "$stub"
(cd "$build" && "$componentize" -d wit -w units componentize -s app -o "$stub/units.wasm")
pool="$("$warden" inspect "$stub/units.wasm" | grep 'instance pool')"
echo "$pool"
case "$pool" in
  *"instance pool  38 of 128 core instances"*) ;;
  *) echo "FAIL: the stub-mode component's shape is not 38 core instances: $pool"; exit 1 ;;
esac
got="$("$warden" call "$stub/units.wasm" convert '{"value":1,"from-unit":"mi","to-unit":"km"}')"
case "$got" in
  *'"result": 1.609344'*) echo "ok   the stub-mode component answers convert: 1.609344" ;;
  *) echo "FAIL: convert in stub mode answered $got"; exit 1 ;;
esac
