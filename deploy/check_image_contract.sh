#!/usr/bin/env bash
# What deploy/Containerfile's final stage relies on, checked on this machine, which
# cannot build the image itself (a Docker client but no engine, and no container
# registry reachable for the rust and distroless base images):
#
#   1. the warden binary needs no shared library beyond what
#      gcr.io/distroless/cc-debian12 ships (glibc and libgcc_s);
#   2. it serves as uid/gid 65532 (the image's USER) with no HOME, from a read-only
#      plugins folder and the cache and state-key paths the Deployment gives it,
#      answers /readyz and tools/list, and exits 0 on SIGTERM.
#
#   bash deploy/check_image_contract.sh [WARDEN]   (default: $WARDEN_BIN, else builds target/debug/warden)
# Runs as root (it drops to uid 65532 with setpriv).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ $# -gt 0 ]]; then
    binary="$1"
elif [[ -n "${WARDEN_BIN:-}" ]]; then
    binary="$WARDEN_BIN"
else
    cargo build --quiet -p warden --manifest-path "$root/Cargo.toml"
    binary="$root/target/debug/warden"
fi

# 1. Shared libraries: everything ldd lists must be in distroless/cc's set.
allowed='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1)$'
needed=$(ldd "$binary" | awk '{print $1}' | xargs -n1 basename)
unexpected=$(grep -Ev "$allowed" <<<"$needed" || true)
if [[ -n "$unexpected" ]]; then
    echo "the binary needs libraries distroless/cc does not have: $unexpected"
    exit 1
fi
echo "OK: shared libraries: $(tr '\n' ' ' <<<"$needed")"

# 2. Run as the image's user, as the Deployment runs it.
cargo xtask plugins >/dev/null
scratch=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
install -m 0755 "$binary" "$scratch/warden"
mkdir -p "$scratch/plugins" "$scratch/cache" "$scratch/secrets"
cp "$root/target/plugins/examples/text.wasm" "$root/target/plugins/examples/clock.wasm" "$scratch/plugins/"
chmod -R a+rX,a-w "$scratch/plugins"
head -c 48 /dev/urandom | base64 >"$scratch/secrets/state-key"
head -c 32 /dev/urandom | base64 >"$scratch/secrets/token"
chown -R 65532:65532 "$scratch/cache"
chown root:65532 "$scratch/secrets" "$scratch/secrets/"*
chmod 0750 "$scratch/secrets"
chmod 0440 "$scratch/secrets/"*
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
setpriv --reuid=65532 --regid=65532 --clear-groups --no-new-privs \
    env -i PATH=/usr/bin:/bin "$scratch/warden" serve --http "127.0.0.1:$port" \
    --token-file "$scratch/secrets/token" --plugins "$scratch/plugins" \
    --state-key-file "$scratch/secrets/state-key" --cache-dir "$scratch/cache" \
    --shutdown-grace 5s 2>"$scratch/log" &
pid=$!
for _ in $(seq 1 300); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    kill -0 "$pid" 2>/dev/null || { echo "warden exited as uid 65532:"; cat "$scratch/log"; exit 1; }
    sleep 0.1
done
tools=$(curl -fsS "http://127.0.0.1:$port/mcp" -H "Authorization: Bearer $(cat "$scratch/secrets/token")" \
    -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/list' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"check","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}')
for tool in slugify weekday; do
    grep -q "\"name\":\"$tool\"" <<<"$tools" || { echo "tools/list as uid 65532 lacks $tool: $tools"; cat "$scratch/log"; exit 1; }
done
owner=$(stat -c %u "$(find "$scratch/cache" -mindepth 1 -print -quit)")
[[ "$owner" == 65532 ]] || { echo "the cache was not written by uid 65532 (owner: $owner)"; exit 1; }
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
[[ $status -eq 0 ]] || { echo "warden exited $status on SIGTERM"; cat "$scratch/log"; exit 1; }
echo "OK: served as uid 65532 (no HOME, read-only plugins, its own cache), tools/list answered, SIGTERM exit 0"
