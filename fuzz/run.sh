#!/usr/bin/env bash
# Runs every fuzz target for a bounded time: `bash fuzz/run.sh [SECONDS]`
# (60 s each by default); `bash fuzz/run.sh --build-only` only builds them
# (CI builds them in the background while other steps run). Installs
# cargo-fuzz into target/tools first. Each target starts from its seeds in fuzz/corpus/<target> plus what earlier runs
# found (target/fuzz/corpus/<target>, where new inputs go). A crash stops the
# run and fails it; libFuzzer saves the input in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build_only=false
[ "$seconds" = --build-only ] && build_only=true
bash .ci/install-tool cargo-fuzz 0.13.2
export PATH="$PWD/target/tools/bin:$PATH"

# Stable Rust has no sanitizers, so none is asked for: libFuzzer's coverage
# guidance and Rust's own checks (debug assertions and overflow checks are on
# in fuzz/Cargo.toml) find the bugs. 16 codegen units instead of cargo-fuzz's
# default 1, or building wasmtime's compiler alone takes most of the time.
flags=(--fuzz-dir fuzz --sanitizer none --codegen-units 16 --target-dir target/fuzz)
cargo fuzz build "${flags[@]}"
if $build_only; then exit 0; fi
for target in $(cargo fuzz list --fuzz-dir fuzz); do
    found=target/fuzz/corpus/$target
    log=target/fuzz/$target.log
    mkdir -p "$found"
    echo "fuzz $target for ${seconds} s"
    # -timeout: an input that takes 10 s is a hang, and counts as a crash.
    if ! cargo fuzz run "${flags[@]}" "$target" "$found" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
        tail -n 80 "$log"
        echo "fuzz: $target failed (log: $log; input: fuzz/artifacts/$target/)"
        exit 1
    fi
    runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
    rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$log")
    coverage=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
    echo "  $runs runs ($rate a second), $coverage, $(find "$found" -type f | wc -l) inputs kept"
done
