//! Writes the doc comments of the WIT a plain component was built from into the
//! component's `package-docs` section (`warden::plain::docs::embed`), for toolchains
//! that do not write it themselves, such as componentize-py 0.25. Warden then
//! describes the component's tools by their doc comments instead of their signatures.
//!
//!     cargo run -p warden --example embed_docs -- COMPONENT WIT_DIR WORLD OUTPUT
//!
//! e.g. `... -- units.wasm tests/interop/python-component/wit units units-docs.wasm`.

use std::path::Path;

use anyhow::{Context, Result, bail};
use warden::plain::docs::embed;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [component, wit, world, output] = args.as_slice() else {
        bail!("usage: embed_docs COMPONENT WIT_DIR WORLD OUTPUT");
    };
    let bytes = std::fs::read(component).with_context(|| format!("cannot read {component}"))?;
    let with_docs = embed(&bytes, Path::new(wit), Some(world))?;
    std::fs::write(output, &with_docs).with_context(|| format!("cannot write {output}"))?;
    Ok(())
}
