//! The command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "warden",
    version,
    about = "An MCP server whose tools live in sandboxed WebAssembly components"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Serve the plugins in a folder to an MCP client over stdio.
    Serve(ServeArgs),
    /// Validate plugins and manifests without serving, and print what each
    /// plugin is granted. Exits non-zero when anything is invalid.
    Check(CheckArgs),
    /// Develop a plugin: build its crate for wasm32-wasip2, serve it over
    /// stdio, and rebuild and hot-reload it whenever its sources change.
    Dev(DevArgs),
}

#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    /// The plugins folder to check.
    #[arg(long, value_name = "DIR", default_value = "plugins", conflicts_with = "plugin")]
    pub plugins: PathBuf,

    /// Check only this plugin: a `.wasm` file or a folder plugin.
    #[arg(value_name = "FILE")]
    pub plugin: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The plugins folder: `name.wasm` (+ optional `name.toml`) files and
    /// `name/plugin.toml` folders.
    #[arg(long, value_name = "DIR", default_value = "plugins")]
    pub plugins: PathBuf,

    /// Append one JSON line per tool call to this file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,

    /// Do not watch the plugins folder: serve what it holds at start.
    #[arg(long)]
    pub no_watch: bool,

    #[command(flatten)]
    pub cache: CacheArgs,

    /// Log more (repeat for even more). `RUST_LOG` overrides this.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

#[derive(Args, Debug, Clone)]
pub struct CacheArgs {
    /// Where compiled plugins are cached
    /// [default: $XDG_CACHE_HOME/warden, or ~/.cache/warden].
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,

    /// Do not cache compiled plugins: compile at every load, write nothing.
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Args, Debug, Clone)]
pub struct DevArgs {
    /// The plugin's source crate (a Rust crate with crate-type `cdylib`).
    #[arg(value_name = "PATH")]
    pub path: PathBuf,

    /// Serve the plugins in this folder as well.
    #[arg(long, value_name = "DIR")]
    pub plugins: Option<PathBuf>,

    /// Cargo's target folder for the plugin build [default: cargo's own].
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,

    /// Append one JSON line per tool call to this file.
    #[arg(long, value_name = "FILE")]
    pub audit_log: Option<PathBuf>,

    #[command(flatten)]
    pub cache: CacheArgs,

    /// Log more (repeat for even more). `RUST_LOG` overrides this.
    #[arg(short, long, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl Cli {
    pub fn verbosity(&self) -> u8 {
        match &self.command {
            Command::Serve(args) => args.verbose,
            Command::Dev(args) => args.verbose,
            Command::Check(_) => 0,
        }
    }
}
