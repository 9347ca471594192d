//! The plugin author's loop (`--only devloop`; not in the default run, as it
//! builds real projects with each language's toolchain): for Rust, Python
//! and JavaScript, `warden new`, then `warden dev` started by a client —
//! its first start and a second one (warm caches) until the tool is listed —
//! then edits of the greeting, each saved as an editor does (a new file
//! renamed over the old), timed from the save to the first call that
//! answers with the new greeting.
//!
//! Toolchains: cargo (its wasm target from rust-toolchain.toml), componentize-py
//! 0.25.1 on PATH or in `target/interop/venv/bin` (where the interop scripts
//! install it), npm for the JavaScript project's devDependencies. A language
//! whose toolchain is missing is reported as skipped, with why.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

use crate::Client;
use crate::stats::Summary;

/// Save → new answer: at most this for Rust, and for Python and JavaScript.
const SAVE_TARGET_RUST: Duration = Duration::from_secs(1);
const SAVE_TARGET_INTERPRETED: Duration = Duration::from_secs(2);
/// A second `warden dev` start → tools listed, Python and JavaScript.
const WARM_START_TARGET: Duration = Duration::from_secs(3);
/// How long one step may take (a cold Rust build of the SDK's dependencies).
const STEP: Duration = Duration::from_secs(900);

/// One language's figures, or why it was skipped.
pub enum Row {
    Measured {
        language: &'static str,
        first_start: Duration,
        warm_start: Duration,
        saves: Summary,
        fastest: Duration,
        slowest: Duration,
    },
    Skipped {
        language: &'static str,
        why: String,
    },
}

struct Language {
    /// `warden new --lang`, and the row's name.
    lang: &'static str,
    label: &'static str,
    /// The file that holds the greeting, and the greeting as it is written there.
    source: &'static str,
    greeting: &'static str,
}

const LANGUAGES: [Language; 3] = [
    Language {
        lang: "rust",
        label: "Rust",
        source: "src/lib.rs",
        greeting: "\"Hello, {}!\"",
    },
    Language {
        lang: "python",
        label: "Python",
        source: "app.py",
        greeting: "f\"Hello, {name}!\"",
    },
    Language {
        lang: "js",
        label: "JavaScript",
        source: "hello.js",
        greeting: "`Hello, ${name}!`",
    },
];

pub async fn run(warden: &Path, edits: usize) -> Result<Vec<Row>> {
    let root = std::env::current_dir()?;
    let interop_venv = root.join("target/interop/venv/bin");
    let path = match std::env::var_os("PATH") {
        Some(path) => {
            let mut dirs = vec![interop_venv];
            dirs.extend(std::env::split_paths(&path));
            std::env::join_paths(dirs)?
        }
        None => interop_venv.into_os_string(),
    };
    let target_dir = root.join("target/bench/dev-guest");
    let mut rows = Vec::new();
    for language in &LANGUAGES {
        eprintln!("devloop: {}", language.label);
        let work = tempfile::Builder::new().prefix("warden-devloop-").tempdir()?;
        let row = match measure(warden, language, work.path(), &path, &target_dir, edits).await {
            Ok(row) => row,
            Err(error) => Row::Skipped {
                language: language.label,
                why: format!("{error:#}"),
            },
        };
        rows.push(row);
    }
    Ok(rows)
}

async fn measure(
    warden: &Path,
    language: &Language,
    work: &Path,
    path: &std::ffi::OsStr,
    target_dir: &Path,
    edits: usize,
) -> Result<Row> {
    let name = format!("hello-{}", language.lang);
    run_step(
        std::process::Command::new(warden)
            .args(["new", &name, "--lang", language.lang, "--dir"])
            .arg(work),
        "warden new",
    )?;
    let project = work.join(&name);
    match language.lang {
        "python" => {
            run_step(
                std::process::Command::new("componentize-py")
                    .arg("--version")
                    .env("PATH", path),
                "componentize-py 0.25.1 (on PATH or in target/interop/venv/bin)",
            )?;
        }
        "js" => {
            run_step(
                std::process::Command::new("npm")
                    .args([
                        "install",
                        "--prefer-offline",
                        "--no-audit",
                        "--no-fund",
                        "--loglevel=error",
                    ])
                    .current_dir(&project),
                "npm install in the JavaScript project",
            )?;
        }
        _ => {}
    }
    let cache = work.join("cache");
    let dev = |project: &Path| {
        let mut command = tokio::process::Command::new(warden);
        command
            .arg("dev")
            .arg(project)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--target-dir")
            .arg(target_dir)
            .env("PATH", path);
        command
    };

    let (client, first_start) = start(dev(&project)).await?;
    expect(&client, "Hello, Ada!").await?;
    client.cancel().await.ok();
    let (client, warm_start) = start(dev(&project)).await?;
    let source = project.join(language.source);
    // A source of the project this benchmark just created.
    #[allow(clippy::disallowed_methods)]
    let original = std::fs::read_to_string(&source).with_context(|| format!("reading {}", source.display()))?;
    if !original.contains(language.greeting) {
        bail!("{} has no {}", source.display(), language.greeting);
    }
    let mut saves = Vec::new();
    for edit in 0..edits {
        let word = format!("Hi{edit}");
        let text = original.replace(language.greeting, &language.greeting.replace("Hello", &word));
        let temporary = source.with_extension("saving");
        std::fs::write(&temporary, text)?;
        let saved = Instant::now();
        std::fs::rename(&temporary, &source)?;
        let want = format!("{word}, Ada!");
        loop {
            if answer(&client).await? == want {
                break;
            }
            if saved.elapsed() > STEP {
                bail!("the save of {word} was not served within {STEP:?}");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        saves.push(saved.elapsed());
    }
    client.cancel().await.ok();
    let (fastest, slowest) = (*saves.iter().min().unwrap(), *saves.iter().max().unwrap());
    Ok(Row::Measured {
        language: language.label,
        first_start,
        warm_start,
        saves: Summary::of(saves),
        fastest,
        slowest,
    })
}

fn run_step(command: &mut std::process::Command, what: &str) -> Result<()> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        bail!("{what} failed: {}", stderr.lines().last().unwrap_or_default());
    }
    Ok(())
}

/// Starts `warden dev` and waits until it lists a tool: the client, and how long.
async fn start(command: tokio::process::Command) -> Result<(Client, Duration)> {
    let started = Instant::now();
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .context("cannot start warden dev")?;
    let client =
        ().serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
            .await
            .context("cannot connect to warden dev")?;
    while client.list_all_tools().await?.is_empty() {
        if started.elapsed() > STEP {
            bail!("warden dev listed no tool within {STEP:?}");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok((client, started.elapsed()))
}

async fn answer(client: &Client) -> Result<String> {
    let arguments = json!({"name": "Ada"}).as_object().cloned();
    let mut params = CallToolRequestParams::new("hello");
    params.arguments = arguments;
    let result = client.call_tool(params).await?;
    let value = serde_json::to_value(&result)?;
    Ok(value["content"][0]["text"].as_str().unwrap_or_default().to_string())
}

async fn expect(client: &Client, want: &str) -> Result<()> {
    let got = answer(client).await?;
    if got != want {
        bail!("hello answered {got:?}, not {want:?}");
    }
    Ok(())
}

/// Seconds, for figures of this size.
fn human(duration: Duration) -> String {
    format!("{:.2} s", duration.as_secs_f64())
}

/// The section's Markdown.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "\n### The plugin author's loop (`warden dev`; save → the first call that answers with the edit)\n\n\
         | language | first start → tool listed | second start → tool listed | save → new answer p50 | fastest – slowest | saves |\n\
         |---|---|---|---|---|---|\n",
    );
    for row in rows {
        match row {
            Row::Measured {
                language,
                first_start,
                warm_start,
                saves,
                fastest,
                slowest,
            } => out.push_str(&format!(
                "| {language} | {} | {} | {} | {} – {} | {} |\n",
                human(*first_start),
                human(*warm_start),
                human(saves.p50),
                human(*fastest),
                human(*slowest),
                saves.count
            )),
            Row::Skipped { language, why } => out.push_str(&format!("| {language} | skipped: {why} | | | | |\n")),
        }
    }
    out
}

/// The section's targets: (what, measured, met).
pub fn targets(rows: &[Row]) -> Vec<(String, String, bool)> {
    let mut targets = Vec::new();
    for row in rows {
        let Row::Measured {
            language,
            warm_start,
            saves,
            ..
        } = row
        else {
            continue;
        };
        let target = if *language == "Rust" {
            SAVE_TARGET_RUST
        } else {
            SAVE_TARGET_INTERPRETED
        };
        targets.push((
            format!("{language}: save → new answer ≤ {}", human(target)),
            human(saves.p50),
            saves.p50 <= target,
        ));
        if *language != "Rust" {
            targets.push((
                format!(
                    "{language}: warden dev second start → tool listed ≤ {}",
                    human(WARM_START_TARGET)
                ),
                human(*warm_start),
                *warm_start <= WARM_START_TARGET,
            ));
        }
    }
    targets
}

pub fn json(rows: &[Row]) -> Value {
    let ms = |d: &Duration| (d.as_secs_f64() * 1e4).round() / 10.0;
    Value::Array(
        rows.iter()
            .map(|row| match row {
                Row::Measured {
                    language,
                    first_start,
                    warm_start,
                    saves,
                    fastest,
                    slowest,
                } => json!({
                    "language": language,
                    "first_start_ms": ms(first_start),
                    "warm_start_ms": ms(warm_start),
                    "save_to_answer": saves.to_json(),
                    "fastest_ms": ms(fastest),
                    "slowest_ms": ms(slowest),
                }),
                Row::Skipped { language, why } => json!({ "language": language, "skipped": why }),
            })
            .collect(),
    )
}
