#![deny(clippy::disallowed_macros)]

use std::process::ExitCode;

use clap::Parser;
use tracing_subscriber::EnvFilter;
use warden::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // stdout belongs to the protocol: every log line goes to stderr.
    let default = match cli.verbosity() {
        0 => "warn,warden=info,plugin=info",
        1 => "info,warden=debug,plugin=debug",
        _ => "debug",
    };
    let colors = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default)))
        .with_writer(move || warden::log_writer::LogWriter { colors })
        .with_ansi(colors)
        .init();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("warden")
        .build()
        .expect("cannot start the async runtime");
    let result = runtime.block_on(async {
        let done = |ok: bool| if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE };
        match cli.command {
            Command::Serve(args) => warden::serve::run(*args).await.map(|()| ExitCode::SUCCESS),
            Command::Dev(args) => warden::dev::run(args).await.map(|()| ExitCode::SUCCESS),
            Command::Check(args) => match args.trust.load() {
                Ok(trust) => warden::check::run(args.plugin.as_deref().unwrap_or(&args.plugins), trust)
                    .await
                    .map(done),
                Err(error) => Err(error),
            },
            Command::EmbedDocs(args) => warden::embed_docs::run(&args).map(|()| ExitCode::SUCCESS),
            Command::Call(args) => warden::call::run(&args).await,
            Command::Inspect(args) => warden::inspect::run(&args.plugin).await,
            Command::New(args) => {
                warden::project::scaffold::run(&args.name, args.lang, args.dir.as_deref()).map(|()| ExitCode::SUCCESS)
            }
            Command::Build(args) => warden::project::run_build(&args.path, args.target_dir)
                .await
                .map(|()| ExitCode::SUCCESS),
            Command::Pull(args) => warden::pull::run(&args).await.map(done),
            Command::Publish(args) => warden::pull::publish(&args).await.map(|()| ExitCode::SUCCESS),
        }
    });
    let code = result.unwrap_or_else(|error| {
        tracing::error!("{error:#}");
        ExitCode::FAILURE
    });
    // A blocking stdin read may still be parked in the runtime; do not wait
    // for it on the way out.
    runtime.shutdown_background();
    code
}
