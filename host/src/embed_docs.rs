//! `warden embed-docs COMPONENT --wit DIR`: a plain component's WIT doc
//! comments written into it, so the tools it serves are described.

use anyhow::{Context, Result};

use crate::cli::EmbedDocsArgs;
use warden_plugins::plain::docs::{self, Docs};
use warden_runtime::bounded_file;
use warden_runtime::component_shape::MAX_COMPONENT_BYTES;

/// `warden embed-docs`: writes the documented component, replacing the file
/// only once the new one is complete.
pub fn run(args: &EmbedDocsArgs) -> Result<()> {
    let bytes = bounded_file::read_named(&args.component, MAX_COMPONENT_BYTES, "the component")?;
    let documented = docs::embed(&bytes, &args.wit, args.world.as_deref())
        .with_context(|| format!("cannot document {}", args.component.display()))?;
    let output = args.output.as_ref().unwrap_or(&args.component);
    let partial = output.with_extension("wasm.partial");
    std::fs::write(&partial, &documented).with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, output).with_context(|| format!("cannot write {}", output.display()))?;
    let documented = Docs::read(&documented).documented();
    crate::log_writer::say(format_args!(
        "{}: {documented} function(s) documented",
        output.display()
    ));
    Ok(())
}
