#!/usr/bin/env bash
# Checks that vendor/wasmtime is Wasmtime 48.0.8 exactly as published on
# crates.io plus vendor/wasmtime.patch, and nothing else (vendor/README.md).
# Takes the .crate from cargo's download cache when it is there, else from
# crates.io; either way its sha256 must be the one crates.io publishes.
set -euo pipefail
cd "$(dirname "$0")/.."
crate=wasmtime-48.0.8.crate
sha256=a2afcadb2e7d0417cb8f3f322c66eff49338b288f22290c0ca0bd3e9570732aa
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cached=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$crate" 2>/dev/null | head -n 1 || true)
if [ -n "$cached" ]; then
    cp "$cached" "$work/$crate"
elif command -v curl > /dev/null; then
    curl --silent --show-error --fail --location --retry 3 \
        "https://static.crates.io/crates/wasmtime/$crate" --output "$work/$crate"
else
    python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(sys.argv[1], sys.argv[2])' \
        "https://static.crates.io/crates/wasmtime/$crate" "$work/$crate"
fi
echo "$sha256  $work/$crate" | sha256sum --check --quiet

mkdir -p "$work/tree/vendor"
tar -xzf "$work/$crate" -C "$work/tree/vendor"
mv "$work/tree/vendor/wasmtime-48.0.8" "$work/tree/vendor/wasmtime"
git -C "$work/tree" init --quiet
git -C "$work/tree" apply --whitespace=nowarn "$PWD/vendor/wasmtime.patch"
rm -rf "$work/tree/.git"
if ! diff -r "$work/tree/vendor/wasmtime" vendor/wasmtime; then
    echo "vendor/wasmtime differs from $crate plus vendor/wasmtime.patch (above);" \
        "change the crate only through the patch (vendor/README.md)" >&2
    exit 1
fi
echo "vendor/wasmtime is $crate (sha256 ${sha256:0:12}…) plus vendor/wasmtime.patch"
