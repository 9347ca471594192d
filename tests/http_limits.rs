//! What a hostile HTTP client can make Warden spend: raw TCP clients that
//! stay silent, trickle headers or bodies, open too many connections,
//! sessions or subscriptions, or stop reading their streams. After each
//! attack a healthy client must still be served, and the process must hold
//! no more file descriptors than before it (give or take a few).

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::ServiceError;
use rmcp::model::{
    ErrorCode, ServerNotification, SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::RunningService;
use serde_json::{Value, json};
use support::http::HttpWarden;
use support::raw::{answer, open_session, post, post_head_2026, post_request_2026, request_2026};
use support::{Era, LONG_WAIT, PluginDir, Recorder, call_params};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

const TOKEN: &str = "correct-horse-battery-staple";

/// File descriptors the process may hold beyond its baseline after an
/// attack (a log file rotated, a pooled connection of a healthy client).
const FD_SLACK: usize = 3;

fn token_file(dir: &PluginDir) -> String {
    let path = dir.path().join("token");
    std::fs::write(&path, format!("{TOKEN}\n")).unwrap();
    path.display().to_string()
}

/// Reads until the server closes the connection (or resets it); returns
/// what arrived. Fails the test if it stays open for `LONG_WAIT`.
async fn read_until_closed(stream: &mut (impl AsyncReadExt + Unpin), what: &str) -> Vec<u8> {
    let mut received = Vec::new();
    let closed = tokio::time::timeout(LONG_WAIT, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "{what}: still open after {LONG_WAIT:?}");
    received
}

/// A connection whose receive buffer is tiny, so that a client that stops
/// reading pushes back on the server at once.
async fn connect_small_window(addr: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    socket.connect(addr.parse().unwrap()).await.unwrap()
}

/// A healthy client lists tools and calls one.
async fn still_serves(client: &RunningService<RoleClient, Recorder>) {
    let tools = client.list_all_tools().await.expect("tools/list still works");
    assert!(tools.iter().any(|t| t.name == "slugify"), "{tools:?}");
    let result = client
        .call_tool(call_params("slugify", json!({"text": "Still Here"})))
        .await
        .expect("tools/call still works");
    assert_eq!(support::text(&result), "still-here");
}

async fn fresh_client_still_serves(warden: &HttpWarden, token: Option<&str>) {
    let client = warden.client(Era::Stateless, token).await;
    still_serves(&client).await;
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn silent_idle_and_slowloris_connections_are_closed_after_the_header_timeout() {
    let dir = PluginDir::with(&["text"]);
    let warden = HttpWarden::start(dir.path(), &["--header-timeout", "1s"]).await;
    let baseline = warden.open_fds();

    // Says nothing at all.
    let mut silent = TcpStream::connect(warden.addr()).await.unwrap();
    // One request, then nothing: an idle keep-alive connection.
    let mut idle = TcpStream::connect(warden.addr()).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    // Headers a byte at a time, forever.
    let slowloris = TcpStream::connect(warden.addr()).await.unwrap();
    let (mut slow_reader, mut slow_writer) = slowloris.into_split();
    let trickle = tokio::spawn(async move {
        let mut sent = 0usize;
        let head = b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nx-padding: ";
        for byte in head.iter().chain(std::iter::repeat(&b'a')) {
            if slow_writer.write_all(&[*byte]).await.is_err() {
                break;
            }
            sent += 1;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        sent
    });
    assert_eq!(
        read_until_closed(&mut silent, "a silent connection").await,
        b"",
        "nothing is sent to a connection that sent nothing"
    );
    let answered = String::from_utf8(read_until_closed(&mut idle, "an idle keep-alive connection").await).unwrap();
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    read_until_closed(&mut slow_reader, "a slowloris connection").await;
    drop(slow_reader);
    let sent = tokio::time::timeout(LONG_WAIT, trickle).await.unwrap().unwrap();
    assert!(sent > 0, "the slowloris client was sending");

    fresh_client_still_serves(&warden, None).await;
    let open = warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
    eprintln!("file descriptors: {baseline} before, {open} after");
}

#[tokio::test]
async fn a_request_body_that_trickles_in_gets_408_and_the_connection_is_closed() {
    let dir = PluginDir::with(&["text"]);
    let warden = HttpWarden::start(dir.path(), &["--body-timeout", "1s"]).await;
    let baseline = warden.open_fds();

    let mut slow = TcpStream::connect(warden.addr()).await.unwrap();
    slow.write_all(
        b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
          accept: application/json, text/event-stream\r\ncontent-length: 1000\r\n\r\n{\"jsonrpc\":",
    )
    .await
    .unwrap();
    let answer = String::from_utf8(read_until_closed(&mut slow, "a connection with a late body").await).unwrap();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("the request body did not arrive within 1s"), "{answer}");

    fresh_client_still_serves(&warden, None).await;
    drop(slow);
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
}

/// One HTTP/1.1 connection opened before an attack and kept: MCP over the
/// 2026-07-28 wire, one request at a time. (rmcp's client may open a new
/// connection for any request, which a server at its cap must refuse.)
struct KeptConnection {
    sender: hyper::client::conn::http1::SendRequest<String>,
    token: Option<&'static str>,
    next_id: u64,
}

impl KeptConnection {
    async fn open(addr: &str, token: Option<&'static str>) -> Self {
        Self::open_from(addr, "127.0.0.1", token).await
    }

    /// From the loopback address `local` (another client, as the server sees it).
    async fn open_from(addr: &str, local: &str, token: Option<&'static str>) -> Self {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(format!("{local}:0").parse().unwrap()).unwrap();
        let stream = socket.connect(addr.parse().unwrap()).await.unwrap();
        let (sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(connection);
        Self {
            sender,
            token,
            next_id: 1,
        }
    }

    /// The result of one JSON-RPC request.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        use http_body_util::BodyExt;
        let id = self.next_id;
        self.next_id += 1;
        let body = request_2026(id, method, params.clone(), "kept");
        let mut request = http::Request::post("/mcp");
        if let Some(name) = params["name"].as_str() {
            request = request.header("mcp-name", name);
        }
        if let Some(token) = self.token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let request = request
            .header("host", "127.0.0.1")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", method)
            .body(body)
            .unwrap();
        let response = self
            .sender
            .send_request(request)
            .await
            .expect("the kept connection serves");
        let status = response.status();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        let text = String::from_utf8(body.to_vec()).unwrap();
        assert_eq!(status, 200, "{text}");
        let message = answer(&text, id).unwrap_or_else(|| panic!("no answer to request {id} in {text}"));
        message["result"].clone()
    }

    async fn still_serves(&mut self) {
        let tools = self.request("tools/list", json!({})).await;
        assert!(
            tools["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "slugify"),
            "{tools}"
        );
        let result = self
            .request(
                "tools/call",
                json!({"name": "slugify", "arguments": {"text": "Still Here"}}),
            )
            .await;
        assert_eq!(result["content"][0]["text"], "still-here", "{result}");
    }
}

#[tokio::test]
async fn a_client_that_reads_nothing_of_its_response_is_disconnected_after_the_write_timeout() {
    let dir = PluginDir::with(&["misbehave", "text"]);
    dir.write("misbehave.toml", "[limits]\noutput = \"64 MiB\"\n");
    let warden = HttpWarden::start(
        dir.path(),
        &["--write-timeout", "1s", "--header-timeout", "120s", "-vv"],
    )
    .await;

    // 32 MB: far more than the socket buffers between the two can hold.
    let call = request_2026(
        1,
        "tools/call",
        json!({"name": "big", "arguments": {"bytes": 32_000_000}}),
        "stuck",
    );
    let mut stuck = connect_small_window(&warden.addr()).await;
    stuck
        .write_all(post_request_2026("127.0.0.1", "tools/call", "mcp-name: big\r\n", &call).as_bytes())
        .await
        .unwrap();
    let mut head = [0u8; 12];
    tokio::time::timeout(LONG_WAIT, stuck.read_exact(&mut head))
        .await
        .expect("the response starts")
        .unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // Then the client reads nothing more, but keeps its socket open: the
    // server gives up on it and closes its side.
    let server_port: u16 = warden.addr().rsplit(':').next().unwrap().parse().unwrap();
    let client_port = stuck.local_addr().unwrap().port();
    let started = Instant::now();
    while server_socket(server_port, client_port).is_some() {
        assert!(
            started.elapsed() < LONG_WAIT,
            "the server still holds the connection ({:?} bytes queued)\n{}",
            server_socket(server_port, client_port),
            warden.log()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = warden.log();
    assert!(log.contains("the client read nothing for 1s"), "{log}");
    fresh_client_still_serves(&warden, None).await;
}

#[tokio::test]
async fn past_the_cap_idle_connections_are_shed_and_busy_ones_refused_while_a_client_keeps_working() {
    let dir = PluginDir::with(&["text"]);
    let tokens = token_file(&dir);
    let cap = 6;
    let warden = HttpWarden::start(
        dir.path(),
        &[
            "--token-file",
            &tokens,
            "--max-connections",
            &cap.to_string(),
            "--header-timeout",
            "120s",
            "--sse-keep-alive",
            "1s",
        ],
    )
    .await;
    let baseline = warden.open_fds();
    let mut client = KeptConnection::open(&warden.addr(), Some(TOKEN)).await;
    client.still_serves().await;

    // 18 silent connections against a cap of 6: each past the cap sheds the
    // oldest that never sent a request head, so all but the last 5 are
    // closed (with nothing sent), and the kept client is never the one shed.
    let mut attackers = Vec::new();
    for _ in 0..3 * cap {
        attackers.push(TcpStream::connect(warden.addr()).await.unwrap());
    }
    let survivors = cap - 1;
    for (i, shed) in attackers.iter_mut().enumerate().take(3 * cap - survivors) {
        let answer = read_until_closed(shed, "an idle connection past the cap").await;
        assert!(
            answer.is_empty(),
            "connection {i}: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    let held = warden.open_fds() - baseline;
    assert!(held <= cap, "{held} connections held, more than the cap of {cap}");
    client.still_serves().await;
    drop(attackers);
    drop(client);
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;

    // Every place holds a request in progress (SSE streams): nothing can be
    // shed, so a new connection is refused with 503 — and no stream is cut.
    let mut streams = Vec::new();
    for _ in 0..cap {
        streams.push(listen_stream(&warden.addr(), Some(TOKEN)).await);
    }
    let mut refused = TcpStream::connect(warden.addr()).await.unwrap();
    let answer = read_until_closed(&mut refused, "a connection when every place is busy").await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.is_empty() || answer.starts_with("HTTP/1.1 503"), "{answer}");
    for stream in &mut streams {
        still_streaming(stream).await;
    }
    drop(streams);
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
    // Places are free again.
    fresh_client_still_serves(&warden, Some(TOKEN)).await;
}

#[tokio::test]
async fn a_client_at_its_own_connection_cap_pushes_out_only_its_own_connections() {
    let dir = PluginDir::with(&["text"]);
    let warden = HttpWarden::start(
        dir.path(),
        &[
            "--max-connections",
            "16",
            "--max-connections-per-peer",
            "8",
            "--header-timeout",
            "120s",
        ],
    )
    .await;
    let baseline = warden.open_fds();
    // Another client (127.0.0.2), idle between requests: the oldest connection.
    let mut other = KeptConnection::open_from(&warden.addr(), "127.0.0.2", None).await;
    other.still_serves().await;

    // 30 connections from 127.0.0.1, each served one request and kept idle:
    // without a cap of its own, the 16th would shed the other client's.
    let mut own = Vec::new();
    for _ in 0..30 {
        let mut stream = TcpStream::connect(warden.addr()).await.unwrap();
        stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        let mut buf = [0u8; 1024];
        while !answer.ends_with(b"ok\n") {
            match tokio::time::timeout(LONG_WAIT, stream.read(&mut buf)).await {
                Ok(Ok(n)) if n > 0 => answer.extend_from_slice(&buf[..n]),
                other => panic!("no answer to /healthz: {other:?}"),
            }
        }
        own.push(stream);
    }
    // The 22 oldest of them were shed, by their own peer's newer ones.
    for (i, shed) in own.iter_mut().enumerate().take(22) {
        let rest = read_until_closed(shed, "a connection past its peer's cap").await;
        assert!(rest.is_empty(), "connection {i}: {}", String::from_utf8_lossy(&rest));
    }
    let held = warden.open_fds() - baseline;
    assert!(
        held <= 1 + 8,
        "{held} connections held: one other client and a cap of 8"
    );
    other.still_serves().await;
    drop(own);
    drop(other);
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
}

/// Opens a 2026-07-28 `subscriptions/listen` stream on a raw connection and
/// reads until its acknowledgment: a request in progress for as long as the
/// connection stays open.
async fn listen_stream(addr: &str, token: Option<&str>) -> TcpStream {
    let body = request_2026(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
        "raw",
    );
    let authorization = token
        .map(|t| format!("authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let head = post_head_2026("127.0.0.1", "subscriptions/listen", &authorization, body.len());
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut received = Vec::new();
    tokio::time::timeout(LONG_WAIT, async {
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&received).contains("notifications/subscriptions/acknowledged") {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => panic!("the stream closed: {}", String::from_utf8_lossy(&received)),
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no acknowledgment: {}", String::from_utf8_lossy(&received)));
    assert!(String::from_utf8_lossy(&received).starts_with("HTTP/1.1 200"));
    stream
}

/// The stream is still open and being written (a keep-alive arrives).
async fn still_streaming(stream: &mut TcpStream) {
    let mut buf = [0u8; 1024];
    match tokio::time::timeout(LONG_WAIT, stream.read(&mut buf)).await {
        Ok(Ok(n)) if n > 0 => {}
        other => panic!("the SSE stream was cut: {other:?}"),
    }
}

#[tokio::test]
async fn an_idle_flood_of_2000_half_sent_requests_cannot_lock_a_client_out() {
    let dir = PluginDir::with(&["text"]);
    // The default --max-connections (512) and --header-timeout (10 s).
    let warden = HttpWarden::start(dir.path(), &["--sse-keep-alive", "1s"]).await;
    let pid = warden.pid();
    let cap = 512;
    // A stream in progress before the flood must survive it.
    let mut stream = listen_stream(&warden.addr(), None).await;
    let baseline = warden.open_fds();
    let rss_before = support::status_kib(pid, "VmRSS");

    let started = Instant::now();
    let flood = support::attacks::half_open_connections(&warden.addr(), 2000).await;
    let flooded_in = started.elapsed();
    let fds_during = warden.open_fds();
    let rss_during = support::status_kib(pid, "VmRSS");

    // A legitimate request on a new connection, while all 2000 are still
    // held by the client: answered.
    let asked = Instant::now();
    let mut legit = TcpStream::connect(warden.addr()).await.unwrap();
    legit
        .write_all(b"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut legit, "the legitimate request").await;
    let answered_in = asked.elapsed();
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.starts_with("HTTP/1.1 200"),
        "{answer}\n{fds_during} fds during the flood (baseline {baseline}), {} now",
        warden.open_fds()
    );
    assert!(answer.ends_with("ok\n"), "{answer}");
    // And an MCP client, which opens connections of its own, is served.
    fresh_client_still_serves(&warden, None).await;
    still_streaming(&mut stream).await;

    let hwm = support::status_kib(pid, "VmHWM");
    eprintln!(
        "2000 half-open connections in {flooded_in:?}: {baseline} fds before, {fds_during} during; \
         RSS {rss_before} KiB before, {rss_during} KiB during, peak {hwm} KiB; /healthz answered in {answered_in:?}"
    );
    // The cap, plus the sockets just shed and not yet closed (at most 64).
    assert!(
        fds_during <= baseline + cap + 64 + FD_SLACK,
        "{fds_during} fds held during the flood (baseline {baseline}, cap {cap})"
    );
    assert!(answered_in < Duration::from_secs(10), "answered after {answered_in:?}");
    assert!(
        rss_during < rss_before + 64 * 1024,
        "RSS grew from {rss_before} KiB to {rss_during} KiB"
    );
    drop(flood);
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
    still_streaming(&mut stream).await;
}

/// What `/readyz` tells the operator.
async fn readiness(warden: &HttpWarden) -> Value {
    reqwest::Client::new()
        .get(format!("{}/readyz", warden.base()))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn sessions_past_the_cap_are_refused_and_idle_ones_expire() {
    let dir = PluginDir::with(&["text"]);
    let tokens = token_file(&dir);
    let warden = HttpWarden::start(
        dir.path(),
        &[
            "--token-file",
            &tokens,
            "--max-sessions",
            "2",
            "--session-idle-timeout",
            "2s",
        ],
    )
    .await;
    let baseline = warden.open_fds();
    let http = reqwest::Client::builder()
        .default_headers(
            [(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {TOKEN}").parse().unwrap(),
            )]
            .into_iter()
            .collect(),
        )
        .build()
        .unwrap();
    let first = open_session(&http, &warden.url).await.unwrap();
    let _second = open_session(&http, &warden.url).await.unwrap();
    let (status, body) = open_session(&http, &warden.url).await.unwrap_err();
    assert_eq!(status, 503, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32000, "{body}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already holds 2 sessions"),
        "{body}"
    );
    assert_eq!(readiness(&warden).await["sessions"], 2);

    // Ending one makes room.
    let ended = http
        .delete(&warden.url)
        .header("mcp-session-id", &first)
        .send()
        .await
        .unwrap();
    // 204, as the official clients expect (rmcp itself says 202).
    assert_eq!(ended.status(), 204);
    let _third = open_session(&http, &warden.url).await.unwrap();

    // Sessions nobody uses are ended after the idle timeout.
    let started = Instant::now();
    while readiness(&warden).await["sessions"] != 0 {
        assert!(started.elapsed() < LONG_WAIT, "idle sessions were not ended");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let client = warden.client(Era::Handshake, Some(TOKEN)).await;
    still_serves(&client).await;
    client.cancel().await.unwrap();
    drop(http);
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
}

fn invalid_params_message(error: ServiceError) -> String {
    match error {
        ServiceError::McpError(error) => {
            assert_eq!(error.code, ErrorCode::INVALID_PARAMS, "{error:?}");
            error.message.to_string()
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe: deprecated in rmcp, still on the 2025-11-25 wire
async fn subscriptions_past_the_cap_are_refused_with_an_error() {
    let dir = PluginDir::with(&["full", "text"]);
    let warden = HttpWarden::start(dir.path(), &["--max-subscriptions", "3"]).await;
    let baseline = warden.open_fds();

    let legacy = warden.client(Era::Handshake, None).await;
    for i in 1..=3 {
        legacy
            .subscribe(SubscribeRequestParams::new(format!("mem://items/{i}")))
            .await
            .unwrap();
    }
    let refused = legacy
        .subscribe(SubscribeRequestParams::new("mem://items/4"))
        .await
        .unwrap_err();
    let message = invalid_params_message(refused);
    assert!(message.contains("already holds 3 resource subscriptions"), "{message}");
    // Subscribing again to a URI it holds is fine; unsubscribing makes room.
    legacy
        .subscribe(SubscribeRequestParams::new("mem://items/2"))
        .await
        .unwrap();
    legacy
        .unsubscribe(UnsubscribeRequestParams::new("mem://items/1"))
        .await
        .unwrap();
    legacy
        .subscribe(SubscribeRequestParams::new("mem://items/4"))
        .await
        .unwrap();
    let long = format!("mem://items/{}", "9".repeat(5000));
    let message = invalid_params_message(legacy.subscribe(SubscribeRequestParams::new(long)).await.unwrap_err());
    assert!(message.contains("at most 4096 are allowed"), "{message}");
    still_serves(&legacy).await;
    legacy.cancel().await.unwrap();

    let stateless = warden.client(Era::Stateless, None).await;
    let too_many: Vec<String> = (1..=4).map(|i| format!("mem://items/{i}")).collect();
    let filter = SubscriptionFilter::builder().resource_subscriptions(too_many).build();
    let refused = match stateless.listen(filter).await {
        Err(error) => error,
        Ok(mut subscription) => subscription.next().await.expect_err("the stream is refused"),
    };
    let message = invalid_params_message(refused);
    assert!(
        message.contains("asks for 4 resource subscriptions; at most 3"),
        "{message}"
    );
    let three: Vec<String> = (1..=3).map(|i| format!("mem://items/{i}")).collect();
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(three.clone())
        .build();
    let accepted = stateless.listen(filter).await.expect("three are fine");
    assert_eq!(
        accepted.acknowledged().resource_subscriptions.as_deref(),
        Some(&three[..])
    );
    still_serves(&stateless).await;
    drop(accepted);
    stateless.cancel().await.unwrap();
    warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The server's side of the connection from local port `client_port`
/// (IPv4 loopback) while it is established: the bytes the kernel holds
/// unsent on it (a client that stopped reading leaves them there).
fn server_socket(server_port: u16, client_port: u16) -> Option<usize> {
    const ESTABLISHED: &str = "01";
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local = format!(":{server_port:04X}");
    let remote = format!(":{client_port:04X}");
    table
        .lines()
        .skip(1)
        .map(|line| line.split_whitespace().collect::<Vec<_>>())
        .find(|fields| fields[1].ends_with(&local) && fields[2].ends_with(&remote) && fields[3] == ESTABLISHED)
        .map(|fields| usize::from_str_radix(fields[4].split(':').next().unwrap(), 16).unwrap())
}

fn server_send_queue(server_port: u16, client_port: u16) -> usize {
    server_socket(server_port, client_port)
        .unwrap_or_else(|| panic!("no established server socket for client port {client_port}"))
}

/// Waits until `recorder` has seen `count` notifications `method`.
async fn wait_for(recorder: &Recorder, method: &str, count: usize, what: &str, warden: &HttpWarden) {
    let started = Instant::now();
    loop {
        let seen = recorder.count(method);
        if seen >= count {
            return;
        }
        assert!(
            started.elapsed() < LONG_WAIT,
            "{what}: {seen} of {count} {method} arrived\n{}",
            warden.log()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe: deprecated in rmcp, still on the 2025-11-25 wire
async fn clients_that_stop_reading_stall_neither_reloads_nor_notifications_for_others() {
    let dir = PluginDir::with(&["full", "text"]);
    let subscriptions = 300;
    let warden = HttpWarden::start(
        dir.path(),
        &[
            "--max-subscriptions",
            &subscriptions.to_string(),
            "--max-body",
            "16 MiB",
            // The stuck clients stay connected for the whole test.
            "--write-timeout",
            "10m",
        ],
    )
    .await;

    // Two healthy clients, one per era, each watching one resource and the tools list.
    let legacy_seen = Recorder::default();
    let legacy = warden.client_recording(Era::Handshake, None, legacy_seen.clone()).await;
    legacy
        .subscribe(SubscribeRequestParams::new("mem://items/healthy"))
        .await
        .unwrap();
    let stateless_seen = Recorder::default();
    let stateless = warden.client(Era::Stateless, None).await;
    let filter = SubscriptionFilter::builder()
        .tools_list_changed()
        .resource_subscriptions(vec!["mem://items/healthy".to_string()])
        .build();
    let mut stream = stateless.listen(filter).await.unwrap();
    let recorder = stateless_seen.clone();
    tokio::spawn(async move {
        while let Ok(Some(notification)) = stream.next().await {
            match notification {
                ServerNotification::ToolListChangedNotification(_) => {
                    recorder.push("notifications/tools/list_changed", Value::Null)
                }
                ServerNotification::ResourceUpdatedNotification(n) => {
                    recorder.push("notifications/resources/updated", n.params)
                }
                _ => {}
            }
        }
    });
    let baseline = warden.open_fds();
    let rss_before = rss_kib(warden.pid());

    // Each reload of `full` owes every stuck client one notification of
    // ≈ 4 KiB per subscribed URI: far more than any buffer between them.
    let long_uris: Vec<String> = (0..subscriptions)
        .map(|i| format!("mem://items/{i:04}{}", "7".repeat(4000)))
        .collect();
    // A 2025-11-25 session that subscribes, opens its GET stream and never reads it.
    let http = reqwest::Client::new();
    let session = open_session(&http, &warden.url).await.unwrap();
    for (i, uri) in long_uris.iter().enumerate() {
        let subscribed = post(&http, &warden.url)
            .header("mcp-session-id", &session)
            .body(
                json!({"jsonrpc": "2.0", "id": 10 + i, "method": "resources/subscribe", "params": {"uri": uri}})
                    .to_string(),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(subscribed.status(), 200);
        let text = subscribed.text().await.unwrap();
        assert!(text.contains("\"result\""), "{text}");
    }
    let mut stuck_session = connect_small_window(&warden.addr()).await;
    stuck_session
        .write_all(
            format!(
                "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    // A 2026-07-28 listen stream for the same URIs, never read.
    let listen = request_2026(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": long_uris}}),
        "stuck",
    );
    let mut stuck_listener = connect_small_window(&warden.addr()).await;
    stuck_listener
        .write_all(post_request_2026("127.0.0.1", "subscriptions/listen", "", &listen).as_bytes())
        .await
        .unwrap();
    // Both streams are open (then never read again).
    for (stuck, what) in [
        (&mut stuck_session, "GET stream"),
        (&mut stuck_listener, "listen stream"),
    ] {
        let mut head = [0u8; 12];
        tokio::time::timeout(LONG_WAIT, stuck.read_exact(&mut head))
            .await
            .unwrap_or_else(|_| panic!("no answer on the {what}"))
            .unwrap();
        assert_eq!(&head, b"HTTP/1.1 200", "{what}");
    }

    // The legacy client's GET stream opens on its own time: reload until the
    // first update reaches it, then count every later reload.
    let full = std::fs::read(support::guest("full")).unwrap();
    let mut updates = 0;
    let warmed_up = Instant::now();
    loop {
        dir.replace("full.wasm", &full);
        updates += 1;
        wait_for(
            &stateless_seen,
            "notifications/resources/updated",
            updates,
            "2026 stream",
            &warden,
        )
        .await;
        let legacy_updates = legacy_seen
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == "notifications/resources/updated")
            .count();
        if legacy_updates > 0 {
            break;
        }
        assert!(warmed_up.elapsed() < LONG_WAIT, "the legacy client never got an update");
    }
    let legacy_base = legacy_seen
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(m, _)| m == "notifications/resources/updated")
        .count();
    let rounds = 8;
    for round in 1..=rounds {
        dir.replace("full.wasm", &full);
        wait_for(
            &legacy_seen,
            "notifications/resources/updated",
            legacy_base + round,
            &format!("legacy session, reload {round}"),
            &warden,
        )
        .await;
        wait_for(
            &stateless_seen,
            "notifications/resources/updated",
            updates + round,
            &format!("2026 stream, reload {round}"),
            &warden,
        )
        .await;
    }
    let owed_mib = (rounds + 1) * subscriptions * 4000 / (1 << 20);
    // The stuck clients really are stuck: what the server wrote to them
    // waits in its kernel send queue.
    let server_port: u16 = warden.addr().rsplit(':').next().unwrap().parse().unwrap();
    for (stuck, what) in [
        (&stuck_session, "the legacy GET stream"),
        (&stuck_listener, "the listen stream"),
    ] {
        let queued = server_send_queue(server_port, stuck.local_addr().unwrap().port());
        eprintln!("{what}: {queued} bytes queued in the server's kernel");
        assert!(queued > 1024, "{what} is not backed up ({queued} bytes queued)");
    }

    // A new plugin still appears, with list_changed for both healthy clients.
    dir.add("clock", "clock");
    wait_for(
        &legacy_seen,
        "notifications/tools/list_changed",
        1,
        "legacy list_changed",
        &warden,
    )
    .await;
    wait_for(
        &stateless_seen,
        "notifications/tools/list_changed",
        1,
        "2026 list_changed",
        &warden,
    )
    .await;
    for client in [&legacy, &stateless] {
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == "weekday"), "{tools:?}");
        still_serves(client).await;
    }
    let rss_after = rss_kib(warden.pid());
    eprintln!(
        "each stuck client was owed ≈ {owed_mib} MiB of notifications; resident memory {} MiB before, {} MiB after",
        rss_before / 1024,
        rss_after / 1024
    );
    assert!(
        rss_after < rss_before + 128 * 1024,
        "memory grew from {rss_before} KiB to {rss_after} KiB with stuck clients"
    );

    drop(stuck_session);
    drop(stuck_listener);
    drop(http);
    let open = warden.wait_for_fds_at_most(baseline + FD_SLACK).await;
    eprintln!("file descriptors: {baseline} before, {open} after");
    legacy.cancel().await.unwrap();
    stateless.cancel().await.unwrap();
}
