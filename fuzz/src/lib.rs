//! The checks behind each fuzz target: each takes the fuzzer's bytes, feeds
//! them to one part of Warden and panics when that part breaks a property it
//! must keep whatever the input (a panic is what libFuzzer reports as a crash).
//! The targets in `fuzz_targets/` are one line each, so a new check is a new
//! module here and a new `[[bin]]` in `Cargo.toml`.

pub mod arguments;
pub mod interaction;
pub mod manifest;
pub mod plain_types;
pub mod stdio_framing;
pub mod uri_template;
