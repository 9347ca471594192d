//! Which WebAssembly proposals components use, beyond WebAssembly 1.0:
//!
//!     cargo run -p warden-runtime --example proposals -- A.wasm B.wasm …
//!
//! Prints one line a component: the proposals it uses (each one without
//! which it no longer validates), with those Warden's engine does not
//! enable marked `(off)`. Then the union over all of them. How Warden's
//! list in `crates/runtime/src/proposals.rs` was chosen (docs/engine.md).

// A measurement reads the files it is pointed at freely; the one opener
// (bounded_file) is for what Warden serves.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeSet;

use warden_runtime::proposals::{PROPOSALS, used_by};

fn main() -> anyhow::Result<()> {
    // Which proposals the engine itself needs (multi-memory, for the
    // adapters it generates) the components do not show: see docs/engine.md.
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        anyhow::bail!("usage: proposals FILE.wasm …");
    }
    let enabled = |name: &str| PROPOSALS.iter().any(|p| p.name == name && p.enabled);
    let mut union = BTreeSet::new();
    let mut refused = 0;
    for path in &paths {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(error) => {
                println!("{path}: cannot read it ({error})");
                continue;
            }
        };
        match used_by(&bytes) {
            Ok(used) => {
                let shown: Vec<String> = used
                    .iter()
                    .map(|name| match enabled(name) {
                        true => name.to_string(),
                        false => format!("{name} (off)"),
                    })
                    .collect();
                refused += usize::from(used.iter().any(|name| !enabled(name)));
                union.extend(used);
                println!("{path}: {}", shown.join(", "));
            }
            Err(why) => println!("{path}: {why}"),
        }
    }
    println!(
        "all {} components: {}",
        paths.len(),
        union.into_iter().collect::<Vec<_>>().join(", ")
    );
    println!("components using a proposal Warden does not enable: {refused}");
    Ok(())
}
