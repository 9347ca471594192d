//! Memory at rest: Warden's resident memory once its plugins are loaded and
//! a client has listed them, after a cold start (the compiler's memory is
//! part of it) and after warm ones with 1, 20, 100 and 1 000 plugins —
//! from which the growth per loaded plugin — against the native server's.
//!
//! The plugins are copies of one component, each serving its own tool name
//! (`prefixed_folder`), all read from one compiled-code cache.

use std::path::Path;
use std::time::Duration;

use anyhow::{Result, ensure};

use crate::report::Report;
use crate::{Fixture, HttpServer, Options, Side, connect_http, memory, prefixed_folder, warden_over};

/// How many plugins the warm rows load; the growth per plugin is measured
/// against the first. (A debug build, `cargo xtask bench --debug`, loads a
/// thousand in about 4 s: no reason to skip it there.)
const PLUGIN_COUNTS: [usize; 4] = [1, 20, 100, 1000];

/// How long the server idles after answering, before its memory is read.
const SETTLE: Duration = Duration::from_millis(500);

pub async fn run(fixture: &Fixture, report: &mut Report) -> Result<()> {
    let prefixed = &fixture.options.prefixed;
    let cache = tempfile::tempdir()?;
    let twenty = prefixed_folder(prefixed, 20)?;
    eprintln!("memory: 20 plugins, cold cache");
    let (rss, _) = idle(&fixture.options, twenty.path(), cache.path(), 20).await?;
    report.memory("RSS idle, 20 plugins loaded, cold cache", "warden", rss);
    // The cold start filled the cache: every copy is the same component.
    for count in PLUGIN_COUNTS {
        eprintln!("memory: {count} plugins, warm cache");
        let folder = prefixed_folder(prefixed, count)?;
        let (rss, private) = idle(&fixture.options, folder.path(), cache.path(), count).await?;
        report.memory(&warm_row(count), "warden", rss);
        report.idle(count, rss);
        if count == 20 {
            report.memory(PRIVATE_ROW, "warden", private);
        }
    }
    let native = HttpServer::start(fixture.command(Side::Native, &[])).await?;
    let client = connect_http(&native.url).await?;
    client.list_all_tools().await?;
    tokio::time::sleep(SETTLE).await;
    let (_, rss) = memory(native.pid())?;
    report.memory("RSS idle, 20 plugins loaded, cold cache", "native", rss);
    for count in PLUGIN_COUNTS {
        report.memory(&warm_row(count), "native", rss);
    }
    report.memory(PRIVATE_ROW, "native", private_memory(native.pid())?);
    client.cancel().await.ok();
    match layout(&fixture.options.warden) {
        Ok(Some((found, listed))) => report.layout(found, listed),
        Ok(None) => {}
        Err(error) => eprintln!("memory: the code layout was not checked: {error:#}"),
    }
    Ok(())
}

/// How many of the functions `host/link-order.txt` lists (the order the
/// release binary's code is laid out in, host/build.rs) are in `warden`,
/// of how many; `None` for a build not laid out by it (a debug build).
fn layout(warden: &Path) -> Result<Option<(usize, usize)>> {
    // A file of the repository's.
    #[allow(clippy::disallowed_methods)]
    let listed = std::fs::read_to_string("host/link-order.txt")?;
    if warden
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|profile| profile != "release")
    {
        return Ok(None);
    }
    let symbols = std::process::Command::new("nm")
        .arg("--defined-only")
        .arg(warden)
        .output()?;
    ensure!(symbols.status.success(), "nm failed on {}", warden.display());
    let defined: std::collections::HashSet<&str> = std::str::from_utf8(&symbols.stdout)?
        .lines()
        .filter_map(|line| line.split_whitespace().nth(2))
        .collect();
    let names: Vec<&str> = listed.lines().filter(|line| !line.is_empty()).collect();
    let found = names.iter().filter(|name| defined.contains(*name)).count();
    Ok(Some((found, names.len())))
}

/// The row of what is the process's own: resident memory less the files it
/// maps (its binary's code and read-only data, shared with the page cache).
const PRIVATE_ROW: &str = "of which private (`RssAnon`), 20 plugins, warm cache";

/// A process's resident anonymous memory (`RssAnon`), in bytes.
// The kernel's /proc, not a path anyone configures.
#[allow(clippy::disallowed_methods)]
fn private_memory(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("RssAnon:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse::<u64>().ok())
        .ok_or_else(|| anyhow::anyhow!("no RssAnon in /proc/{pid}/status"))?;
    Ok(kib << 10)
}

/// The memory table's row for a warm start with `count` plugins.
fn warm_row(count: usize) -> String {
    let plugins = if count == 1 { "plugin" } else { "plugins" };
    format!("RSS idle, {count} {plugins} loaded, warm cache")
}

/// Warden's resident memory and the private part of it, idle, once it
/// serves `count` plugins from `plugins` over HTTP and a client has listed
/// their tools.
async fn idle(options: &Options, plugins: &Path, cache: &Path, count: usize) -> Result<(u64, u64)> {
    let server = HttpServer::start(warden_over(options, plugins, cache)).await?;
    let client = connect_http(&server.url).await?;
    let tools = client.list_all_tools().await?.len();
    ensure!(tools == count, "{count} plugins, {count} tools; listed {tools}");
    tokio::time::sleep(SETTLE).await;
    let (_, rss) = memory(server.pid())?;
    let private = private_memory(server.pid())?;
    client.cancel().await.ok();
    Ok((rss, private))
}
