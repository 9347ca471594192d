#!/usr/bin/env bash
# Warden and a real OCI registry: Debian's docker-registry (the CNCF distribution
# registry 2.8) on a free loopback port, with filesystem storage and htpasswd (bcrypt)
# Basic auth; an independent publisher, the oras Python SDK (0.2.43), pushing example
# plugins in the CNCF Wasm OCI layout (config application/vnd.wasm.config.v0+json, one
# application/wasm layer); keyed signatures in cosign's legacy tag format
# (sha256-<hex>.sig, simple-signing payload, ECDSA P-256 DER in the
# dev.cosignproject.cosign/signature annotation) made with `cryptography` by
# tests/interop/cosign_sign.py and pushed over the distribution API with urllib.
#
# Part 1 (no Warden): the registry answers 401 without or with wrong credentials and
# 200 with the right ones; what oras pushed reads back with the right media types,
# digests and bytes; the signatures read back and verify with the public key, and
# not with another key or for another image.
#
# Part 2 (Warden; REGISTRY_WARDEN=0 skips it): `warden pull` with no credentials
# (refused, the message says 401/credentials), wrong ones (refused), right ones from
# --registry-config and from $DOCKER_CONFIG (pulled, by tag and by digest, bytes and
# origin checked); `warden publish` (its digest and layout checked with urllib, then
# pulled back); `warden check` shows each origin; `warden serve` of what was pulled,
# called by the official Python MCP SDK (mcp 2.3.0); a signed pull with a trust policy
# and --require-signature (one signer, and a second signer appended); refused with a
# wrong key, unsigned, or a signature of another image replayed onto it, nothing
# written; a pulled .wasm changed on disk is reported refused by `warden check`.
#
# Keyless Sigstore bundles (cosign 3's format, via the referrers tag fallback; the Warden
# steps skipped too with REGISTRY_WARDEN=0): a v0.3 bundle of a test PKI
# (tests/interop/sigstore_test_pki.py: Fulcio-style certificate with SCT, Rekor entry
# with proof, checkpoint and SET) attached by `cosign_sign.py attach-bundle` as an
# artifact manifest (subject: the component's manifest) listed by the image index
# tagged sha256-<hex>, the registry having no referrers API (checked: 404), and read
# back; `warden pull` with a keyless policy (issuer, subject pattern, trusted_root) and
# --require-signature (signed by `acme CI`, in the origin record), `warden check` and
# `warden serve` of it; refused, nothing written: a subject or issuer the certificate
# does not have, a trusted root of another CA, CT log or Rekor, a bundle of another
# artifact, a keyed-only policy for a bundle and a keyless-only one for a .sig; and the
# recorded bundle is verified again at load (`warden check` under another subject).
#
# Installs docker-registry, apache2-utils (htpasswd) and curl with apt-get when missing
# (CI runs as root; skips, exit 0, only when there is no apt-get at all); oras,
# cryptography and mcp into target/interop/venv; builds Warden (debug; WARDEN_BIN=<path>
# uses that binary) and the example plugins. Everything it writes is under
# target/interop/registry. Prints one `ok:` or `FAILED:` line per check and
# `registry: N passed, N failed`; exits 1 if any check failed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd -P)"
here="$root/tests/interop"
source "$here/lib.sh"
work="$interop/registry"
started_at=$(date +%s)
export PYTHONDONTWRITEBYTECODE=1

passed=0
failed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }

# ---------------------------------------------------------------- what it needs
missing=()
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v htpasswd >/dev/null 2>&1 || missing+=(apache2-utils)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "SKIP: ${missing[*]} missing and there is no apt-get to install them"
    exit 0
  fi
  echo "== installing Debian's ${missing[*]}"
  apt-get update -qq
  # No init system starts the packaged registry here; the test starts its own.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
registry_version="$(docker-registry --version)"
echo "== $registry_version"
case "$registry_version" in
  *" 2.8."*) ;;
  *) echo "FAILED: want the distribution registry 2.8, got: $registry_version"; exit 1 ;;
esac

python_venv "mcp==2.3.0" "oras==0.2.43" "cryptography==46.0.7"
"$python" -c '
import cryptography, mcp, oras.version, sys
from importlib.metadata import version
got = {"oras": oras.version.__version__, "cryptography": cryptography.__version__, "mcp": version("mcp")}
want = {"oras": "0.2.43", "cryptography": "46.0.7", "mcp": "2.3.0"}
print("== python packages:", ", ".join(f"{k} {v}" for k, v in got.items()))
sys.exit(0 if got == want else f"want {want}")'

echo "== example plugins (cargo xtask plugins)"
cargo xtask plugins 2>&1 | tail -n 1
rm -rf "$work"
mkdir -p "$work/components" "$work/out"
out="$work/out"
cp "$root/target/plugins/examples/text.wasm" "$root/target/plugins/examples/clock.wasm" "$work/components/"
text_wasm="$work/components/text.wasm"
clock_wasm="$work/components/clock.wasm"

# run NAME COMMAND...: runs COMMAND (at most 120 s, no stdin), its stdout and stderr to
# $out/NAME.out and $out/NAME.err; sets $status.
run() {
  local name="$1"
  shift
  status=0
  timeout 120 "$@" >"$out/$name.out" 2>"$out/$name.err" </dev/null || status=$?
}
# show NAME: the last lines of what run NAME printed, indented.
show() {
  local name="$1" stream
  for stream in out err; do
    if [ -s "$out/$name.$stream" ]; then
      echo "    $name std$stream:"
      tail -n 15 "$out/$name.$stream" | sed 's/^/      /'
    fi
  done
}
# ran_ok NAME WHAT: a check that the last `run NAME` exited 0.
ran_ok() {
  if [ "$status" -eq 0 ]; then
    pass "$2"
  else
    fail "$2 (exit $status)"
    show "$1"
  fi
}

# ---------------------------------------------------------------- the registry
port="$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
host="127.0.0.1:$port"
user="warden-ci"
password="$("$python" -c 'import secrets; print(secrets.token_urlsafe(18))')"
mkdir -p "$work/registry/storage"
htpasswd -Bbn "$user" "$password" >"$work/registry/htpasswd"
cat >"$work/registry/config.yml" <<EOF
version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: $work/registry/storage
  delete:
    enabled: true
http:
  addr: $host
  secret: $("$python" -c 'import secrets; print(secrets.token_hex(16))')
auth:
  htpasswd:
    realm: warden-interop
    path: $work/registry/htpasswd
EOF
docker-registry serve "$work/registry/config.yml" >"$work/registry/registry.log" 2>&1 &
registry_pid=$!
trap 'kill "$registry_pid" 2>/dev/null || true; wait "$registry_pid" 2>/dev/null || true' EXIT
code=""
for _ in $(seq 1 300); do
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://$host/v2/" || true)"
  [ "$code" = "401" ] && break
  kill -0 "$registry_pid" 2>/dev/null || break
  sleep 0.1
done
if [ "$code" != "401" ]; then
  echo "FAILED: the registry did not come up on $host (last answer: ${code:-none}):"
  tail -n 20 "$work/registry/registry.log"
  exit 1
fi
echo "== registry at http://$host (pid $registry_pid), storage $work/registry/storage, user $user"

challenge="$(curl -s -D - -o /dev/null "http://$host/v2/" | tr -d '\r' | grep -i '^www-authenticate:' || true)"
if [ "$code" = "401" ] && echo "$challenge" | grep -qi 'basic realm="warden-interop"'; then
  pass "registry: GET /v2/ without credentials is 401 with $challenge"
else
  fail "registry: GET /v2/ without credentials: $code, challenge '$challenge'"
fi
code="$(curl -s -o /dev/null -w '%{http_code}' -u "$user:wrong-$password" "http://$host/v2/")"
[ "$code" = "401" ] && pass "registry: wrong password is 401" || fail "registry: wrong password answered $code, want 401"
code="$(curl -s -o /dev/null -w '%{http_code}' -u "$user:$password" "http://$host/v2/")"
[ "$code" = "200" ] && pass "registry: right password is 200" || fail "registry: right password answered $code, want 200"

# Docker config.json files: the right credentials, wrong ones, and none at all.
docker_config() { # DIR USER:PASSWORD
  mkdir -p "$1"
  printf '{"auths":{"%s":{"auth":"%s"}}}\n' "$host" "$(printf '%s' "$2" | base64 -w0)" >"$1/config.json"
}
docker_config "$work/docker-right" "$user:$password"
docker_config "$work/docker-wrong" "$user:not-the-password"
mkdir -p "$work/docker-none"
creds="$work/docker-right/config.json"

# ---------------------------------------------------------------- part 1: oras and cosign format, no Warden
echo "== oras 0.2.43 pushes the example plugins in the CNCF Wasm OCI layout"
oras_push() { # NAME REPO:TAG WASM: pushes, checks the layout with urllib; sets $digest
  local name="$1" target="$2" wasm="$3" repo="${2%%:*}" tag="${2##*:}"
  digest=""
  run "$name" "$python" "$here/oci_wasm.py" push-oras "$host" "$target" "$wasm" "$creds"
  if [ "$status" -ne 0 ]; then
    fail "oras push $target (exit $status)"
    show "$name"
    return
  fi
  digest="$(tail -n 1 "$out/$name.out")"
  run "$name-check" "$python" "$here/oci_wasm.py" check "$host" "$repo" "$tag" "$wasm" "$creds" --digest "$digest"
  if [ "$status" -eq 0 ]; then
    pass "oras push $host/$target: $digest, read back over HTTP: OCI image manifest, config application/vnd.wasm.config.v0+json, one application/wasm layer = $(basename "$wasm") ($(wc -c <"$wasm") bytes)"
  else
    fail "oras push $host/$target: the manifest read back is not the CNCF layout"
    show "$name-check"
  fi
}
oras_push oras-text "tools/text:1.0" "$text_wasm"
text_digest="$digest"
oras_push oras-two "tools/text-two-signers:1.0" "$text_wasm"
two_digest="$digest"
oras_push oras-replayed "tools/clock-replayed:1.0" "$clock_wasm"
replayed_digest="$digest"
sed -n 's/^  tools\/text@/    manifest: tools\/text@/p; s/^  config: /    config: /p' "$out/oras-text-check.err" | head -n 2

echo "== cosign-format keyed signatures (tests/interop/cosign_sign.py)"
keys="$work/keys"
"$python" "$here/cosign_sign.py" keygen "$keys" release
"$python" "$here/cosign_sign.py" keygen "$keys" other
head -n 1 "$keys/release.pub" | grep -qx -- '-----BEGIN PUBLIC KEY-----' \
  && pass "keys: release.pub is a PEM PUBLIC KEY (SPKI), as cosign.pub" \
  || fail "keys: release.pub does not start with -----BEGIN PUBLIC KEY-----"

sign() { # NAME REPO DIGEST KEY [--payload-digest D] [--append]
  local name="$1" repo="$2" signed="$3" key="$4"
  shift 4
  run "$name" "$python" "$here/cosign_sign.py" sign "$host" "$repo" "$signed" "$keys/$key.key" "$creds" "$@"
  ran_ok "$name" "cosign_sign.py: $repo:sha256-${signed#sha256:}.sig pushed, signed by $key${*:+ ($*)}"
}
verify() { # NAME REPO DIGEST KEY WANT(ok|refused) WHAT
  local name="$1"
  run "$name" "$python" "$here/cosign_sign.py" verify "$host" "$2" "$3" "$keys/$4.pub" "$creds"
  if [ "$5" = ok ] && [ "$status" -eq 0 ]; then
    pass "$6: $(tail -n 1 "$out/$name.out")"
  elif [ "$5" = refused ] && [ "$status" -ne 0 ]; then
    pass "$6: $(tail -n 1 "$out/$name.err" | sed 's/^cosign_sign.py: //')"
  else
    fail "$6 (exit $status, want $5)"
    show "$name"
  fi
}
sign sign-text tools/text "$text_digest" release
verify verify-text tools/text "$text_digest" release ok "python reads tools/text's signature back and verifies it with release.pub"
verify verify-text-other tools/text "$text_digest" other refused "python: tools/text's signature does not verify with other.pub"
sign sign-two-other tools/text-two-signers "$two_digest" other
sign sign-two-release tools/text-two-signers "$two_digest" release --append
verify verify-two tools/text-two-signers "$two_digest" release ok "python: tools/text-two-signers holds two signatures, release.pub verifies one"
# A real signature of tools/text's manifest, put where tools/clock-replayed's belongs.
sign sign-replayed tools/clock-replayed "$replayed_digest" release --payload-digest "$text_digest"
verify verify-replayed tools/clock-replayed "$replayed_digest" release refused "python: a signature of another manifest at tools/clock-replayed's .sig tag is refused"
sig_manifest="$(curl -s -u "$user:$password" -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  "http://$host/v2/tools/text/manifests/sha256-${text_digest#sha256:}.sig")"
echo "    tools/text:sha256-${text_digest#sha256:}.sig = $sig_manifest"

# Trust policies: the right key, and a wrong one, each beside its policy.
trust_policy() { # DIR KEY SIGNER_NAME
  mkdir -p "$1"
  cp "$keys/$2.pub" "$1/cosign.pub"
  cat >"$1/trust.toml" <<EOF
[[repository]]
match = "$host/tools/*"
[[repository.signer]]
name = "$3"
key = "cosign.pub"
EOF
}
trust_policy "$work/trust" release "test release key"
trust_policy "$work/trust-wrong" other "someone else"
trust="$work/trust/trust.toml"

if [ "${REGISTRY_WARDEN:-1}" = "0" ]; then
  echo "== REGISTRY_WARDEN=0: the Warden steps are skipped"
else
  # -------------------------------------------------------------- part 2: Warden
  warden_binary
  echo "== Warden: $warden"
  insecure=(--insecure-registry "$host")

  # warden_run NAME DOCKER_CONFIG_DIR ARG...: `warden ARG...` with $DOCKER_CONFIG set (so
  # no credentials of the machine's own ~/.docker are ever used); see run.
  warden_run() {
    local name="$1" config="$2"
    shift 2
    run "$name" env DOCKER_CONFIG="$config" "$warden" "$@"
  }
  # usage_error NAME: what the last warden_run NAME printed is a command-line (clap)
  # error: an option or subcommand Warden does not have is no refusal.
  usage_error() {
    grep -Eq "^error: (unexpected argument|unrecognized subcommand|invalid value|the following required arguments)|For more information, try '--help'" \
      "$out/$1.err"
  }
  # refused NAME DIR PATTERN WHAT: the last warden_run NAME failed with a message on
  # stderr matching PATTERN (grep -Ei) and wrote nothing into DIR.
  refused() {
    local name="$1" dir="$2" pattern="$3" what="$4"
    if [ "$status" -eq 0 ]; then
      fail "$what: exit 0, want a refusal"
      show "$name"
    elif usage_error "$name"; then
      fail "$what: exit $status, but a command-line error, not a refusal"
      show "$name"
    elif ! grep -Eqi "$pattern" "$out/$name.err"; then
      fail "$what: exit $status, but stderr does not match /$pattern/"
      show "$name"
    elif [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
      fail "$what: refused, but wrote $(ls -A "$dir" | tr '\n' ' ')into $dir"
    else
      pass "$what: exit $status, nothing written: $(tr '\n' ' ' <"$out/$name.err" | cut -c 1-200)"
    fi
  }
  # pulled NAME DIR PLUGIN WASM REFERENCE DIGEST WHAT [SIGNER]: the last warden_run NAME
  # succeeded and wrote DIR/PLUGIN.wasm (WASM's bytes) and DIR/PLUGIN.origin.json.
  pulled() {
    local name="$1" dir="$2" plugin="$3" wasm="$4" reference="$5" want="$6" what="$7" signer="${8:-}"
    if [ "$status" -ne 0 ]; then
      fail "$what (exit $status)"
      show "$name"
      return
    fi
    run "$name-files" "$python" "$here/oci_wasm.py" pulled "$dir" "$plugin" "$wasm" \
      --reference "$reference" --digest "$want" ${signer:+--signer "$signer"}
    if [ "$status" -eq 0 ]; then
      pass "$what: $plugin.wasm = $(basename "$wasm"), $plugin.origin.json names $reference, $want${signer:+, $signer}"
    else
      fail "$what: what it wrote is wrong"
      show "$name-files"
    fi
  }
  # shows NAME WHAT TEXT...: the last warden_run NAME exited 0 and printed each TEXT.
  shows() {
    local name="$1" what="$2" text missing=""
    shift 2
    for text in "$@"; do
      { [ -n "$text" ] && grep -qF -- "$text" "$out/$name.out" "$out/$name.err"; } || missing="$missing '$text'"
    done
    if [ "$status" -eq 0 ] && [ -z "$missing" ]; then
      pass "$what"
    else
      fail "$what: exit $status${missing:+, missing$missing}"
      show "$name"
    fi
  }

  text_ref="$host/tools/text"
  clock_ref="$host/tools/clock"
  mkdir -p "$work/pulled-none" "$work/pulled-wrong" "$work/plugins" "$work/pinned" \
    "$work/signed" "$work/signed-wrong-key" "$work/signed-unsigned" "$work/signed-replayed" "$work/published-none"
  # (published-none stays empty: `refused` wants a folder, and a refused publish writes no file.)

  echo "== warden pull: credentials"
  warden_run pull-none "$work/docker-none" pull "oci://$text_ref:1.0" --plugins "$work/pulled-none" "${insecure[@]}"
  refused pull-none "$work/pulled-none" '401|credential|unauthori[sz]ed' "warden pull without credentials is refused, naming 401/credentials"
  warden_run pull-wrong "$work/docker-none" pull "oci://$text_ref:1.0" --plugins "$work/pulled-wrong" "${insecure[@]}" \
    --registry-config "$work/docker-wrong/config.json"
  refused pull-wrong "$work/pulled-wrong" '401|credential|unauthori[sz]ed|denied' "warden pull with a wrong password is refused"
  warden_run pull-text "$work/docker-none" pull "oci://$text_ref:1.0" --plugins "$work/plugins" "${insecure[@]}" \
    --registry-config "$creds"
  pulled pull-text "$work/plugins" text "$text_wasm" "$text_ref" "$text_digest" \
    "warden pull oci://$text_ref:1.0 (oras's push) with --registry-config"
  warden_run pull-pinned "$work/docker-right" pull "oci://$text_ref@$text_digest" --plugins "$work/pinned" \
    --name text-pinned "${insecure[@]}"
  pulled pull-pinned "$work/pinned" text-pinned "$text_wasm" "$text_ref" "$text_digest" \
    "warden pull oci://$text_ref@sha256:… --name text-pinned, credentials from \$DOCKER_CONFIG/config.json"

  echo "== warden publish"
  warden_run publish-none "$work/docker-none" publish "$clock_wasm" "oci://$clock_ref:1.0" "${insecure[@]}"
  refused publish-none "$work/published-none" '401|credential|unauthori[sz]ed' "warden publish without credentials is refused, naming 401/credentials"
  if [ "$status" -ne 0 ] && ! usage_error publish-none; then
    code="$(curl -s -o /dev/null -w '%{http_code}' -u "$user:$password" "http://$host/v2/tools/clock/manifests/1.0")"
    [ "$code" = "404" ] && pass "warden publish without credentials: the registry has no tools/clock:1.0 (404)" \
      || fail "warden publish without credentials: GET tools/clock/manifests/1.0 answered $code, want 404"
  fi
  warden_run publish-clock "$work/docker-none" publish "$clock_wasm" "oci://$clock_ref:1.0" "${insecure[@]}" \
    --registry-config "$creds"
  clock_digest="$(tail -n 1 "$out/publish-clock.out" 2>/dev/null || true)"
  if [ "$status" -eq 0 ] && [[ "$clock_digest" =~ ^sha256:[0-9a-f]{64}$ ]]; then
    pass "warden publish clock.wasm oci://$clock_ref:1.0 prints $clock_digest"
    run publish-check "$python" "$here/oci_wasm.py" check "$host" tools/clock 1.0 "$clock_wasm" "$creds" --digest "$clock_digest"
    if [ "$status" -eq 0 ]; then
      pass "warden publish: read back with urllib, tools/clock:1.0 is $clock_digest in the CNCF Wasm layout, its layer = clock.wasm"
      sed -n 's/^  config: /    config: /p' "$out/publish-check.err"
      run publish-oras-pull "$python" "$here/oci_wasm.py" pull-oras "$host" tools/clock:1.0 "$clock_wasm" "$creds"
      if [ "$status" -eq 0 ]; then
        pass "warden publish: oras 0.2.43 pulls tools/clock:1.0 and gets clock.wasm, byte for byte"
      else
        fail "warden publish: oras cannot pull tools/clock:1.0 as clock.wasm"
        show publish-oras-pull
      fi
    else
      fail "warden publish: tools/clock:1.0 read back is not the CNCF Wasm layout"
      show publish-check
    fi
  else
    fail "warden publish: exit $status, stdout's last line '$clock_digest', want sha256:<64 hex>"
    show publish-clock
  fi
  warden_run pull-clock "$work/docker-none" pull "oci://$clock_ref:1.0" --plugins "$work/plugins" "${insecure[@]}" \
    --registry-config "$creds"
  pulled pull-clock "$work/plugins" clock "$clock_wasm" "$clock_ref" "$clock_digest" \
    "warden pull oci://$clock_ref:1.0 (warden's push)"

  echo "== warden check and serve"
  warden_run check-plugins "$work/docker-none" check --plugins "$work/plugins"
  shows check-plugins "warden check shows each pulled plugin's origin ($text_ref, $text_digest; $clock_ref, $clock_digest)" \
    "$text_ref" "$text_digest" "$clock_ref" "$clock_digest"
  plugins="$work/plugins"
  if (stdio_driver "$out/serve-plugins.log" 120 registry_serve.py "$warden" "$plugins" \
    change_case,date_add,date_diff,now,slugify,text_stats,weekday); then
    pass "warden serve of the pulled plugins: text_stats and date_diff called by mcp 2.3.0, exact values, both eras"
  else
    fail "warden serve of the pulled plugins"
  fi

  echo "== signatures: trust policy and --require-signature"
  warden_run pull-signed "$work/docker-none" pull "oci://$text_ref:1.0" --plugins "$work/signed" "${insecure[@]}" \
    --registry-config "$creds" --trust "$trust" --require-signature
  pulled pull-signed "$work/signed" text "$text_wasm" "$text_ref" "$text_digest" \
    "warden pull --trust --require-signature: the cosign signature verifies" "test release key"
  signed_pulled=$([ -f "$work/signed/text.origin.json" ] && echo yes || echo no)
  warden_run pull-two "$work/docker-none" pull "oci://$host/tools/text-two-signers:1.0" --plugins "$work/signed" \
    --name text-two "${insecure[@]}" --registry-config "$creds" --trust "$trust" --require-signature
  pulled pull-two "$work/signed" text-two "$text_wasm" "$host/tools/text-two-signers" "$two_digest" \
    "warden pull --require-signature: two signatures, the second by the trusted key" "test release key"
  rm -f "$work/signed/text-two.wasm" "$work/signed/text-two.origin.json" # the same tools as text
  warden_run check-signed "$work/docker-none" check --plugins "$work/signed" --trust "$trust" --require-signature
  shows check-signed "warden check --trust --require-signature shows text's origin and signer" \
    "$text_ref" "$text_digest" "test release key"
  plugins="$work/signed"
  if (stdio_driver "$out/serve-signed.log" 120 registry_serve.py "$warden" "$plugins" \
    change_case,slugify,text_stats --trust "$trust" --require-signature); then
    pass "warden serve --trust --require-signature of the signed pull: text_stats called by mcp 2.3.0"
  else
    fail "warden serve --trust --require-signature of the signed pull"
  fi
  signature_refusal='signature|signed|signer|verif|trust'
  warden_run pull-wrong-key "$work/docker-none" pull "oci://$text_ref:1.0" --plugins "$work/signed-wrong-key" \
    "${insecure[@]}" --registry-config "$creds" --trust "$work/trust-wrong/trust.toml" --require-signature
  refused pull-wrong-key "$work/signed-wrong-key" "$signature_refusal" "warden pull with a wrong key in the policy is refused"
  warden_run pull-unsigned "$work/docker-none" pull "oci://$clock_ref:1.0" --plugins "$work/signed-unsigned" \
    "${insecure[@]}" --registry-config "$creds" --trust "$trust" --require-signature
  refused pull-unsigned "$work/signed-unsigned" "$signature_refusal" "warden pull --require-signature of an unsigned push is refused"
  warden_run pull-replayed "$work/docker-none" pull "oci://$host/tools/clock-replayed:1.0" --plugins "$work/signed-replayed" \
    "${insecure[@]}" --registry-config "$creds" --trust "$trust" --require-signature
  refused pull-replayed "$work/signed-replayed" "$signature_refusal" \
    "warden pull --require-signature of a signature replayed from another manifest is refused"

  echo "== a pulled plugin changed on disk"
  cp "$clock_wasm" "$work/signed/text.wasm" # a valid component, but not the one pulled
  warden_run check-tampered "$work/docker-none" check --plugins "$work/signed" --trust "$trust" --require-signature
  if [ "$signed_pulled" != yes ]; then
    fail "warden check after text.wasm changed on disk: not checked, the signed pull wrote no text.origin.json"
  elif usage_error check-tampered; then
    fail "warden check after text.wasm changed on disk: a command-line error (exit $status)"
    show check-tampered
  elif grep -i 'text' "$out/check-tampered.out" "$out/check-tampered.err" | grep -qi 'refus'; then
    pass "warden check --trust --require-signature reports the changed text.wasm refused (exit $status): $(grep -hi 'refus' "$out/check-tampered.out" "$out/check-tampered.err" | head -n 1 | cut -c 1-200)"
  else
    fail "warden check after text.wasm changed on disk: no line names text as refused (exit $status)"
    show check-tampered
  fi
fi

# ---------------------------------------------------------------- keyless Sigstore bundles (cosign 3's format, via the referrers tag fallback)
# A keyless bundle (v0.3: a DSSE in-toto statement of cosign/sign/v1, a Fulcio-style leaf
# certificate with an embedded SCT, a Rekor entry with inclusion proof, checkpoint and
# SET) made by tests/interop/sigstore_test_pki.py with a test PKI of its own, attached by
# `cosign_sign.py attach-bundle` as cosign 3 attaches it where the registry has no
# referrers API: an artifact manifest whose subject is the component's manifest, listed
# by the image index tagged sha256-<hex>. Warden finds it through that fallback and
# holds its certificate to the policy's trusted_root, issuer and subject pattern.
echo "== keyless Sigstore bundles (cosign 3's format, via the referrers tag fallback)"
oras_push oras-keyless "tools/text-keyless:1.0" "$text_wasm"
keyless_digest="$digest"
oras_push oras-keyless-wrong "tools/text-keyless-wrong-artifact:1.0" "$text_wasm"
wrong_artifact_digest="$digest"
code="$(curl -s -o /dev/null -w '%{http_code}' -u "$user:$password" -H 'Accept: application/vnd.oci.image.index.v1+json' \
  "http://$host/v2/tools/text-keyless/referrers/$keyless_digest")"
[ "$code" = "404" ] \
  && pass "registry: GET /v2/tools/text-keyless/referrers/<digest> is 404 (2.8 has no referrers API): bundles go by the sha256-<hex> tag" \
  || fail "registry: GET /v2/tools/text-keyless/referrers/<digest> answered $code, want 404 (this test is of the tag fallback)"

sigstore="$work/sigstore"
keyless_issuer="https://token.actions.githubusercontent.com" # sigstore_test_pki.py's default issuer
keyless_san="https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v1.0.0"
# One seed and one signing time: the second bundle comes from the very same CA and logs
# (the trusted roots are byte-identical), so all that is wrong with it is what it signs.
signed_at=$(($(date +%s) - 60))
run pki "$python" "$here/sigstore_test_pki.py" "$sigstore/release" --digest "$keyless_digest" \
  --san "$keyless_san" --seed 7 --time "$signed_at"
ran_ok pki "sigstore_test_pki.py: a keyless bundle of tools/text-keyless@$keyless_digest, issuer $keyless_issuer, SAN $keyless_san"
run pki-wrong "$python" "$here/sigstore_test_pki.py" "$sigstore/wrong-artifact" --digest "$replayed_digest" \
  --san "$keyless_san" --seed 7 --time "$signed_at"
ran_ok pki-wrong "sigstore_test_pki.py: a bundle of another artifact (tools/clock-replayed@$replayed_digest), same identity"
if cmp -s "$sigstore/release/trusted_root.json" "$sigstore/wrong-artifact/trusted_root.json" \
  && ! cmp -s "$sigstore/release/bundle.sigstore.json" "$sigstore/wrong-artifact/bundle.sigstore.json"; then
  pass "sigstore_test_pki.py --seed: both bundles chain to one trusted_root.json; the bundles differ"
else
  fail "sigstore_test_pki.py --seed: the two trusted roots differ (or the two bundles are the same)"
fi

attach_bundle() { # NAME REPO DIGEST BUNDLE WHAT: attaches BUNDLE to REPO@DIGEST, reads it back
  local name="$1" repo="$2" subject="$3" bundle="$4" what="$5"
  run "$name" "$python" "$here/cosign_sign.py" attach-bundle "$host" "$repo" "$subject" "$bundle" "$creds"
  if [ "$status" -ne 0 ]; then
    fail "$what: cosign_sign.py attach-bundle $repo@$subject (exit $status)"
    show "$name"
    return
  fi
  run "$name-check" "$python" "$here/cosign_sign.py" verify-bundle "$host" "$repo" "$subject" "$creds" --bundle "$bundle"
  if [ "$status" -eq 0 ]; then
    pass "$what: $repo:sha256-${subject#sha256:} read back: $(tail -n 1 "$out/$name-check.out")"
  else
    fail "$what: $repo:sha256-${subject#sha256:} read back is not the referrers tag layout"
    show "$name-check"
  fi
}
attach_bundle attach-keyless tools/text-keyless "$keyless_digest" "$sigstore/release/bundle.sigstore.json" \
  "cosign_sign.py attach-bundle: the keyless bundle attached to tools/text-keyless, subject its manifest"
sed -n 's/^  tools\/text-keyless:\(sha256-[0-9a-f]*\) ([^)]*) = /    \1 = /p; s/^  tools\/text-keyless@\(sha256:[0-9a-f]*\) = /    \1 = /p' \
  "$out/attach-keyless-check.err" 2>/dev/null || true
attach_bundle attach-wrong-artifact tools/text-keyless-wrong-artifact "$wrong_artifact_digest" \
  "$sigstore/wrong-artifact/bundle.sigstore.json" \
  "cosign_sign.py attach-bundle: a bundle of tools/clock-replayed attached to tools/text-keyless-wrong-artifact"

# Keyless policies, each beside its own copy of a trusted root (named relatively), but
# other-root, which names the other CA's root by its absolute path.
keyless_policy() { # DIR ISSUER SUBJECT ROOT: ROOT absolute, or a file of $sigstore/release copied beside
  local trusted_root="$4"
  mkdir -p "$1"
  if [ "${trusted_root#/}" = "$trusted_root" ]; then
    cp "$sigstore/release/$trusted_root" "$1/$trusted_root"
  fi
  cat >"$1/trust.toml" <<EOF
trusted_root = "$trusted_root"
[[repository]]
match = "$host/tools/*"
[[repository.signer]]
name = "acme CI"
issuer = "$2"
subject = "$3"
EOF
}
keyless_subject='https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*'
keyless_policy "$work/trust-keyless" "$keyless_issuer" "$keyless_subject" trusted_root.json
keyless_policy "$work/trust-keyless-subject" "$keyless_issuer" \
  'https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v2*' trusted_root.json
keyless_policy "$work/trust-keyless-issuer" "https://accounts.google.com" "$keyless_subject" trusted_root.json
keyless_policy "$work/trust-keyless-other-root" "$keyless_issuer" "$keyless_subject" "$sigstore/release/other_trusted_root.json"
keyless_policy "$work/trust-keyless-other-ctlog" "$keyless_issuer" "$keyless_subject" other_ctlog_trusted_root.json
keyless_policy "$work/trust-keyless-other-rekor" "$keyless_issuer" "$keyless_subject" other_rekor_trusted_root.json
trust_keyless="$work/trust-keyless/trust.toml"

if [ "${REGISTRY_WARDEN:-1}" != "0" ]; then
  keyless_ref="$host/tools/text-keyless"
  keyless_pull() { # NAME DIR POLICY [REPO]: warden pull oci://HOST/REPO:1.0 (tools/text-keyless) into DIR
    mkdir -p "$2"
    warden_run "$1" "$work/docker-none" pull "oci://$host/${4:-tools/text-keyless}:1.0" --plugins "$2" "${insecure[@]}" \
      --registry-config "$creds" --trust "$3" --require-signature
  }
  # The plugin is named after the repository: text-keyless.
  keyless_pull pull-keyless "$work/keyless" "$trust_keyless"
  pull_status="$status"
  pulled pull-keyless "$work/keyless" text-keyless "$text_wasm" "$keyless_ref" "$keyless_digest" \
    "warden pull --trust (keyless signer) --require-signature: the bundle found by the sha256-<hex> tag verifies" "acme CI"
  if [ "$pull_status" -eq 0 ] && grep -qF 'signed by `acme CI`' "$out/pull-keyless.err"; then
    pass "warden pull (keyless): stderr says: $(grep -F 'signed by `acme CI`' "$out/pull-keyless.err" | head -n 1 | cut -c 1-240)"
  else
    fail "warden pull (keyless): exit $pull_status, stderr does not say signed by \`acme CI\`"
    show pull-keyless
  fi
  run keyless-origin "$python" -c '
import json, sys
origin = json.load(open(sys.argv[1]))
formats = [s.get("format") for s in origin.get("signatures", [])]
signer = json.dumps(origin.get("signer"))
print(f"\"signer\": {signer}, signatures recorded: {formats}")
sys.exit(0 if origin.get("signer") == "acme CI" and formats == ["sigstore-bundle"] else "want signer acme CI, one sigstore-bundle")' \
    "$work/keyless/text-keyless.origin.json"
  if [ "$status" -eq 0 ]; then
    pass "text-keyless.origin.json: $(tail -n 1 "$out/keyless-origin.out")"
  else
    fail "text-keyless.origin.json: exit $status"
    show keyless-origin
  fi
  warden_run check-keyless "$work/docker-none" check --plugins "$work/keyless" --trust "$trust_keyless" --require-signature
  origin_line="$(grep -hF "$keyless_ref" "$out/check-keyless.out" "$out/check-keyless.err" | grep -F 'signed by `acme CI`' | head -n 1 || true)"
  if [ "$status" -eq 0 ] && [ -n "$origin_line" ] && grep -qF "$keyless_digest" "$out/check-keyless.out" "$out/check-keyless.err"; then
    pass "warden check --trust (keyless) --require-signature: $(echo "$origin_line" | sed 's/^ *//' | cut -c 1-200)"
  else
    fail "warden check --trust (keyless) --require-signature: exit $status, no origin line naming $keyless_ref, $keyless_digest and signed by \`acme CI\`"
    show check-keyless
  fi
  plugins="$work/keyless"
  if (stdio_driver "$out/serve-keyless.log" 120 registry_serve.py "$warden" "$plugins" \
    change_case,slugify,text_stats --trust "$trust_keyless" --require-signature); then
    pass "warden serve --trust (keyless) --require-signature of the keyless pull: text_stats called by mcp 2.3.0"
  else
    fail "warden serve --trust (keyless) --require-signature of the keyless pull"
  fi
  # The recorded bundle is verified again at every load: the same folder under a policy
  # whose subject does not match fails warden check.
  warden_run check-keyless-subject "$work/docker-none" check --plugins "$work/keyless" \
    --trust "$work/trust-keyless-subject/trust.toml" --require-signature
  invalid_line="$(grep -hF '✗' "$out/check-keyless-subject.out" "$out/check-keyless-subject.err" | grep -F 'text-keyless.wasm' \
    | grep -F 'not `https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v2*`' | head -n 1 || true)"
  if [ "$status" -ne 0 ] && ! usage_error check-keyless-subject && [ -n "$invalid_line" ]; then
    pass "warden check of the keyless pull under a policy wanting refs/tags/v2* fails it (exit $status): $(echo "$invalid_line" | sed 's/^.*: no signature/no signature/' | cut -c 1-120)…"
  else
    fail "warden check of the keyless pull under a policy wanting refs/tags/v2*: exit $status, no ✗ line for text-keyless.wasm naming the subject"
    show check-keyless-subject
  fi

  echo "== keyless refusals, each into an empty folder"
  # because NAME: the reason the last warden_run NAME gave (after the policy it names).
  because() { sed -n 's/^.*trust\.toml): /      because: /p' "$out/$1.err" | head -n 1; }
  keyless_pull pull-keyless-subject "$work/keyless-subject" "$work/trust-keyless-subject/trust.toml"
  refused pull-keyless-subject "$work/keyless-subject" \
    'signed by `https://github\.com/acme/tools/\.github/workflows/release\.yml@refs/tags/v1\.0\.0`, not `[^`]*@refs/tags/v2\*`' \
    "warden pull (keyless): a policy whose subject is ...@refs/tags/v2* is refused"
  because pull-keyless-subject
  keyless_pull pull-keyless-issuer "$work/keyless-issuer" "$work/trust-keyless-issuer/trust.toml"
  refused pull-keyless-issuer "$work/keyless-issuer" \
    'issuer.*(token\.actions\.githubusercontent\.com.*accounts\.google\.com|accounts\.google\.com.*token\.actions\.githubusercontent\.com)' \
    "warden pull (keyless): a policy whose issuer is https://accounts.google.com is refused"
  because pull-keyless-issuer
  keyless_pull pull-keyless-other-root "$work/keyless-other-root" "$work/trust-keyless-other-root/trust.toml"
  refused pull-keyless-other-root "$work/keyless-other-root" 'certificate chain|UnknownIssuer|trust anchor' \
    "warden pull (keyless): trusted_root = other_trusted_root.json (another CA) is refused"
  because pull-keyless-other-root
  keyless_pull pull-keyless-other-ctlog "$work/keyless-other-ctlog" "$work/trust-keyless-other-ctlog/trust.toml"
  refused pull-keyless-other-ctlog "$work/keyless-other-ctlog" 'SCT|signed certificate timestamp' \
    "warden pull (keyless): trusted_root = other_ctlog_trusted_root.json (another CT log) is refused"
  because pull-keyless-other-ctlog
  keyless_pull pull-keyless-other-rekor "$work/keyless-other-rekor" "$work/trust-keyless-other-rekor/trust.toml"
  refused pull-keyless-other-rekor "$work/keyless-other-rekor" 'inclusion promise|signed entry timestamp|checkpoint|inclusion proof|transparency log|tlog' \
    "warden pull (keyless): trusted_root = other_rekor_trusted_root.json (another Rekor) is refused"
  because pull-keyless-other-rekor
  keyless_pull pull-keyless-wrong-artifact "$work/keyless-wrong-artifact" "$trust_keyless" tools/text-keyless-wrong-artifact
  refused pull-keyless-wrong-artifact "$work/keyless-wrong-artifact" \
    "signs ${replayed_digest}, not this component's manifest ${wrong_artifact_digest}" \
    "warden pull (keyless): a bundle of another artifact attached to the manifest is refused"
  because pull-keyless-wrong-artifact
  keyless_pull pull-keyless-keyed-policy "$work/keyless-keyed-policy" "$trust"
  refused pull-keyless-keyed-policy "$work/keyless-keyed-policy" 'none of the signatures found is of a kind these signers make' \
    "warden pull of the keyless-signed tools/text-keyless under the keyed-only policy is refused"
  because pull-keyless-keyed-policy
  keyless_pull pull-keyed-keyless-policy "$work/keyed-keyless-policy" "$trust_keyless" tools/text
  refused pull-keyed-keyless-policy "$work/keyed-keyless-policy" 'none of the signatures found is of a kind these signers make' \
    "warden pull of the keyed-signed tools/text under the keyless-only policy is refused"
  because pull-keyed-keyless-policy
fi

echo "== registry log: $(grep -c 'response completed' "$work/registry/registry.log" || true) requests answered; $work/registry/registry.log"
echo "registry: $passed passed, $failed failed ($(($(date +%s) - started_at))s)"
[ "$failed" -eq 0 ]
