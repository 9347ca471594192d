//! The Redis task store against a real redis-server each test starts on 127.0.0.1 (Debian's,
//! as `tests/interop/tasks_replicas.sh` uses): a task whose store stalls as it ends (the
//! finding: a result lost and audited twice, `created, completed, failed`, when Redis stalled
//! for 8 s as a 4 s task ended, and a tool held up by its heartbeat), and expired tasks'
//! events keeping up with tasks made faster than one sweep round takes.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{TaskPayload, TaskStatus};
use serde_json::{Value, json};
use sha2::Digest as _;
use tokio_util::sync::CancellationToken;
use warden_runtime::audit_log::AuditLog;
use warden_runtime::secrets::SecretAddress;

use super::driver::{Finish, TaskDriver};
use super::record::{TaskRecord, now_ms};
use super::redis_store::RedisStore;
use super::store::{Bounds, TaskStore};
use super::{LEASE, Tasks};

struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (apt-get install redis-server)");
        Self { child, port }
    }

    fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }

    async fn store(&self) -> RedisStore {
        let url = SecretAddress::new(format!("redis://127.0.0.1:{}/0", self.port));
        for _ in 0..100 {
            if let Ok(store) = RedisStore::connect(&url, Bounds::default()).await {
                return store;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("redis-server did not start on {}", self.port);
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.signal("-CONT");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// The test's own audit logs in its temporary folder.
#[allow(clippy::disallowed_methods)]
fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .collect()
}

fn events(path: &std::path::Path) -> Vec<String> {
    records(path)
        .iter()
        .map(|record| record["task_event"].as_str().unwrap().to_string())
        .collect()
}

fn draft(id: &str, ttl_ms: u64) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.into(),
        caller: String::new(),
        plugin: "p".into(),
        tool: "slow".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms,
        poll_ms: 500,
        input_requests: None,
        result: None,
        error: None,
        replica: "r1".into(),
        lease_until_ms: 0,
    }
}

/// A replica on `redis`, auditing to `log`.
async fn replica(redis: &Redis, name: &str, log: &std::path::Path) -> Arc<Tasks> {
    let audit = Arc::new(AuditLog::open(log, false).unwrap());
    Arc::new(Tasks::new(
        TaskStore::Redis(redis.store().await),
        name.into(),
        Some(audit),
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_ends_while_redis_stalls_is_written_and_audited_once_when_it_returns() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let (log1, log2) = (dir.path().join("r1.jsonl"), dir.path().join("r2.jsonl"));
    let (r1, r2) = (replica(&redis, "r1", &log1).await, replica(&redis, "r2", &log2).await);

    let driver = TaskDriver::new(
        r1.clone(),
        draft("outlived-the-stall", 120_000),
        None,
        CancellationToken::new(),
    );
    driver.create(None).await.unwrap();
    driver.spawn_heartbeat();

    // The other replica sweeps all along, as its sweeper does (more often, to meet the stall).
    let sweeping = CancellationToken::new();
    let sweeper = tokio::spawn({
        let (r2, sweeping) = (r2.clone(), sweeping.clone());
        async move {
            let mut failed = 0;
            while !sweeping.is_cancelled() {
                failed += r2.sweep().await.0;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            failed
        }
    });

    // The tool: 4 s of work in 40 steps, ending as a task ends.
    let tool = tokio::spawn({
        let driver = driver.clone();
        async move {
            let started = Instant::now();
            for _ in 0..40 {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let worked = started.elapsed();
            let result = json!({"content": [{"type": "text", "text": "done after the stall"}], "isError": false});
            driver
                .finish(Finish::Completed(result.as_object().unwrap().clone()))
                .await;
            (worked, started.elapsed())
        }
    });

    tokio::time::sleep(Duration::from_secs(1)).await;
    redis.signal("-STOP");
    tokio::time::sleep(Duration::from_secs(8)).await;
    redis.signal("-CONT");
    // Read at once, before the runner has written again: the lease ran out during the stall,
    // which says nothing of the runner, so the record is not shown `failed`.
    let first = r2.get("outlived-the-stall", "").await.unwrap();
    assert_ne!(first.task.status(), TaskStatus::Failed, "{first:?}");
    let (worked, ended) = tokio::time::timeout(Duration::from_secs(30), tool)
        .await
        .unwrap()
        .unwrap();
    // Sweeps go on past a whole lease after the store came back: none may fail the task.
    tokio::time::sleep(LEASE + Duration::from_secs(2)).await;
    sweeping.cancel();
    let failed_by_sweeps = sweeper.await.unwrap();

    assert!(
        worked < Duration::from_millis(4_600),
        "the tool was held up: {worked:?}"
    );
    assert!(
        ended >= Duration::from_secs(7),
        "the ending waited for the store: {ended:?}"
    );
    assert_eq!(failed_by_sweeps, 0);
    for (replica, tasks) in [("r1", &r1), ("r2", &r2)] {
        let seen = tasks.get("outlived-the-stall", "").await.unwrap();
        let TaskPayload::Completed { result } = &seen.task.payload else {
            panic!("{replica} sees {seen:?}");
        };
        assert_eq!(result["content"][0]["text"], "done after the stall", "{replica}");
    }
    assert_eq!(
        events(&log1),
        ["created", "completed"],
        "audited once, after it was durable"
    );
    assert!(events(&log2).is_empty(), "{:?}", events(&log2));
}

/// Finding: at 105 tasks/s with 2 s lifetimes, 822 of 2 102 tasks had no `expired` event 8 s
/// later (a sweep took 256 every 5 s). Now two replicas' sweepers, as `serve` runs them, write
/// every one, once, within 5 s of its expiry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_events_keep_up_with_tasks_made_faster_than_a_sweep_round() {
    let redis = Redis::start();
    let dir = tempfile::tempdir().unwrap();
    let (log1, log2) = (dir.path().join("r1.jsonl"), dir.path().join("r2.jsonl"));
    let (r1, r2) = (replica(&redis, "r1", &log1).await, replica(&redis, "r2", &log2).await);
    Tasks::spawn_sweeper(&r1);
    Tasks::spawn_sweeper(&r2);

    // 2 102 tasks of 2 s, 105 a second (21 every 200 ms), each ended at once as a quick task is.
    let mut expiries = std::collections::HashMap::new();
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    for batch in 0..101 {
        tick.tick().await;
        for n in 0..21 {
            if expiries.len() == 2_102 {
                break;
            }
            let mut record = draft(&format!("t{batch}-{n}"), 2_000);
            record.status = TaskStatus::Completed;
            record.caller = format!("caller{n}");
            r1.store()
                .create(&record)
                .await
                .unwrap_or_else(|_| panic!("{}", record.id));
            let digest: String = sha2::Sha256::digest(record.id.as_bytes())
                .iter()
                .take(8)
                .map(|b| format!("{b:02x}"))
                .collect();
            expiries.insert(digest, record.expires_ms());
        }
    }
    tokio::time::sleep(Duration::from_secs(8)).await;

    let mut seen = std::collections::HashMap::new();
    let mut worst = 0f64;
    for record in records(&log1).into_iter().chain(records(&log2)) {
        assert_eq!(record["task_event"], "expired", "{record}");
        let task = record["task"].as_str().unwrap().to_string();
        let lag = record["time"].as_f64().unwrap() - expiries[&task] as f64 / 1000.0;
        worst = worst.max(lag);
        *seen.entry(task).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 2_102, "every task's expiry is reported");
    assert!(seen.values().all(|n| *n == 1), "each once, by one replica");
    assert!(worst < 5.0, "an expired event {worst:.2} s after its task expired");
}
