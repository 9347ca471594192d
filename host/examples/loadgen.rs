//! A closed-loop load generator for the 2026-07-28 stateless wire: N workers
//! each send `tools/call text_stats` (the `text` example plugin) one after
//! another for a while, and every answer is checked.
//!
//!     cargo run --release -p warden --example loadgen -- URL [--concurrency N] [--seconds S]
//!         [--token TOKEN] [--timeout S] [--json]
//!
//! Each call ends as one of:
//! - `ok`: HTTP 200 with the right result (the word count of the text sent);
//! - `clear_error`: an HTTP error status (a proxy's 502, say) — the client
//!   knows at once that the call failed;
//! - `cut_off`: HTTP 200, then the body broke off (the connection closed
//!   before the chunked body ended: the server died while sending) — the
//!   client's HTTP library reports an incomplete body at once;
//! - `other`: anything else: a connection error, a wrong or garbled answer,
//!   or no answer within `--timeout` (a hang).
//!
//! Prints the counts, the throughput of `ok` calls and their p50 and p99
//! latency; with `--json`, one JSON object.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Options {
    url: String,
    concurrency: usize,
    seconds: f64,
    token: Option<String>,
    timeout: f64,
    json: bool,
}

fn options() -> Options {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        url: String::new(),
        concurrency: 32,
        seconds: 10.0,
        token: None,
        timeout: 20.0,
        json: false,
    };
    let usage = "usage: loadgen URL [--concurrency N] [--seconds S] [--token TOKEN] [--timeout S] [--json]";
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{usage}"));
        match arg.as_str() {
            "--concurrency" => options.concurrency = value().parse().expect("--concurrency N"),
            "--seconds" => options.seconds = value().parse().expect("--seconds S"),
            "--token" => options.token = Some(value()),
            "--timeout" => options.timeout = value().parse().expect("--timeout S"),
            "--json" => options.json = true,
            url if !url.starts_with('-') && options.url.is_empty() => options.url = url.to_string(),
            _ => panic!("{usage}"),
        }
    }
    assert!(!options.url.is_empty(), "{usage}");
    options
}

#[derive(Default)]
struct Tally {
    ok: Vec<Duration>,
    clear_error: u64,
    cut_off: u64,
    other: u64,
    /// The first few distinct failures, for the report.
    examples: Vec<String>,
}

impl Tally {
    fn note(&mut self, outcome: Result<Duration, (Failure, String)>) {
        match outcome {
            Ok(latency) => self.ok.push(latency),
            Err((failure, what)) => {
                match failure {
                    Failure::Status => self.clear_error += 1,
                    Failure::CutOff => self.cut_off += 1,
                    Failure::Other => self.other += 1,
                }
                if self.examples.len() < 5 && !self.examples.contains(&what) {
                    self.examples.push(what);
                }
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Failure {
    Status,
    CutOff,
    Other,
}

/// The JSON-RPC message in a JSON or an SSE answer.
fn message(text: &str) -> Option<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(text))
        .find_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
}

async fn one_call(client: &reqwest::Client, options: &Options, id: u64) -> Result<Duration, (Failure, String)> {
    let words = 3 + id % 5;
    let text = (0..words).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": "text_stats", "arguments": {"text": text},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "loadgen", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let mut request = client
        .post(&options.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "text_stats")
        .body(body.to_string());
    if let Some(token) = &options.token {
        request = request.bearer_auth(token);
    }
    let started = Instant::now();
    let timeout = Duration::from_secs_f64(options.timeout);
    let answer = tokio::time::timeout(timeout, async {
        let mut response = request
            .send()
            .await
            .map_err(|error| (Failure::Other, format!("transport error: {error}")))?;
        let status = response.status();
        let mut body = Vec::new();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => break,
                Err(error) => {
                    let had = if message(&String::from_utf8_lossy(&body)).is_some() {
                        "the result had arrived"
                    } else {
                        "before the result"
                    };
                    return Err((
                        Failure::CutOff,
                        format!("HTTP {status}, then the body broke off ({had}): {error}"),
                    ));
                }
            }
        }
        Ok((status, String::from_utf8_lossy(&body).into_owned()))
    })
    .await;
    let latency = started.elapsed();
    let (status, text) = match answer {
        Err(_) => return Err((Failure::Other, format!("no answer within {timeout:?}"))),
        Ok(Err(failure)) => return Err(failure),
        Ok(Ok(answer)) => answer,
    };
    if !status.is_success() {
        let first_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        return Err((Failure::Status, format!("HTTP {status}: {first_line}")));
    }
    let Some(message) = message(&text) else {
        return Err((
            Failure::Other,
            format!("HTTP {status} without a JSON-RPC message: {text:.200}"),
        ));
    };
    let counted = &message["result"]["structuredContent"]["words"];
    if message["id"] != json!(id) || counted != &json!(words) || message["result"]["isError"] == json!(true) {
        return Err((Failure::Other, format!("wrong answer: {message}")));
    }
    Ok(latency)
}

fn percentile_ms(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index].as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() {
    let options = Arc::new(options());
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(options.concurrency)
        .build()
        .expect("an HTTP client");
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let workers: Vec<_> = (0..options.concurrency as u64)
        .map(|worker| {
            let (client, options, stop) = (client.clone(), options.clone(), stop.clone());
            tokio::spawn(async move {
                let mut tally = Tally::default();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let id = worker * 1_000_000_000 + n;
                    n += 1;
                    tally.note(one_call(&client, &options, id).await);
                }
                tally
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs_f64(options.seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut total = Tally::default();
    for worker in workers {
        let tally = worker.await.expect("a worker");
        total.ok.extend(tally.ok);
        total.clear_error += tally.clear_error;
        total.cut_off += tally.cut_off;
        total.other += tally.other;
        for example in tally.examples {
            if total.examples.len() < 5 && !total.examples.contains(&example) {
                total.examples.push(example);
            }
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    total.ok.sort();
    let throughput = total.ok.len() as f64 / elapsed;
    let (p50, p99) = (percentile_ms(&total.ok, 0.50), percentile_ms(&total.ok, 0.99));
    if options.json {
        println!(
            "{}",
            json!({
                "ok": total.ok.len(), "clear_error": total.clear_error, "cut_off": total.cut_off,
                "other": total.other,
                "seconds": elapsed, "throughput": throughput, "p50_ms": p50, "p99_ms": p99,
                "concurrency": options.concurrency, "failures": total.examples,
            })
        );
    } else {
        println!(
            "ok {} clear_error {} cut_off {} other {} in {elapsed:.1} s at concurrency {}: {throughput:.0} calls/s, p50 {p50:.2} ms, p99 {p99:.2} ms",
            total.ok.len(),
            total.clear_error,
            total.cut_off,
            total.other,
            options.concurrency
        );
        for example in &total.examples {
            println!("  failure: {example}");
        }
    }
}
