// The one list of an outer cargo run's settings that a guest build must not inherit.
// `include!`d, not a module, by xtask/src/lib.rs (building the repository's guests) and
// by host/src/project/rust.rs (`warden build` and `warden dev` on a Rust project): the
// warden crate cannot depend on xtask, and both must clean the same variables.

/// Settings of an outer cargo run (a test, `cargo run -- dev`, a Makefile) that must not
/// leak into a guest build: they name the host's target dir or target, add host rustc
/// flags, or hand over a jobserver whose file descriptors the child does not have.
const LEAKY_ENV: &[&str] = &[
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_BUILD_DIR",
    "CARGO_BUILD_TARGET",
    "RUSTFLAGS",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];
