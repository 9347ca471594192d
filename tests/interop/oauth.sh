#!/usr/bin/env bash
# OAuth mode end to end: Warden as an MCP resource server behind a real authorization
# server (oauth2-mock-server 8.2.3 from npm: RFC 8414/OpenID metadata, JWKS, a token
# endpoint), with the official TypeScript SDK (1.32.2) obtaining its own tokens
# (client_credentials) through Warden's protected resource metadata. Checks: the 401
# challenge and RFC 9728 document; two principals with different scopes see different
# tool, prompt and template lists; a call outside a grant is 403 insufficient_scope with
# the scope that would do; expired, not-yet-valid, wrong-audience, wrong-issuer,
# unsigned, wrong-key, HS256-confused, forged and malformed tokens are 401
# invalid_token; a key added after start is fetched on first use; the audit trail holds
# exactly the calls made, with their principals. tests/interop/ts/oauth_checks.mjs.
#
# Installs what it needs as sdk_clients_env in tests/interop/lib.sh does (Node 24 from PyPI, the
# npm packages pinned in tests/interop/ts/package.json into target/interop/ts); builds
# Warden (debug; WARDEN_BIN=<path> uses that binary) and stages the example plugins.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd -P)"
cd "$root"
source "$root/tests/interop/lib.sh"
sdk_clients_env
cp "$root/tests/interop/ts/oauth_checks.mjs" "$ts/oauth_checks.mjs"

warden_binary
cargo xtask plugins >/dev/null
plugins="$root/target/plugins/examples"
scratch="$work/oauth"
rm -rf "$scratch"
mkdir -p "$scratch"

echo "== Warden: $warden"
(cd "$ts" && timeout 300 node oauth_checks.mjs "$warden" "$plugins" "$scratch") | tee "$scratch/results.txt"
status=${PIPESTATUS[0]}
passed=$(grep -c ': ok$' "$scratch/results.txt" || true)
failed=$(grep -c ': FAILED' "$scratch/results.txt" || true)
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ]; then
  echo "== OAuth: FAILED ($passed passed, $failed failed, exit $status)"
  exit 1
fi
echo "== OAuth: all $passed checks passed"
