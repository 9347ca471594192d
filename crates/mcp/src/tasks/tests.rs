use rmcp::model::{TaskPayload, TaskStatus};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::driver::Finish;

use super::record::now_ms;
use super::*;

fn working(id: &str, caller: &str, lease_until_ms: u64) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id: id.into(),
        caller: caller.into(),
        plugin: "p".into(),
        tool: "crawl".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now,
        updated_ms: now,
        ttl_ms: 60_000,
        poll_ms: 500,
        input_requests: None,
        result: None,
        error: None,
        replica: "warden-2".into(),
        lease_until_ms,
    }
}

// The test's own audit log in its temporary folder.
#[allow(clippy::disallowed_methods)]
fn task_events(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn a_task_whose_runner_died_is_written_failed_and_audited_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let audit = Arc::new(AuditLog::open(&path, false).unwrap());
    let tasks = Tasks::in_memory("warden-0".into(), Some(audit));
    let orphan = working("orphan", "oauth-sub:alice", now_ms() - 1);
    tasks.store().create(&orphan).await.unwrap();
    tasks
        .store()
        .create(&working("alive", "", now_ms() + 5_000))
        .await
        .unwrap();

    assert_eq!(tasks.sweep().await, (1, 0));
    assert_eq!(tasks.sweep().await, (0, 0), "once");
    let seen = tasks.store().get("orphan").await.unwrap().unwrap().record;
    assert_eq!(seen.status, TaskStatus::Failed);
    let events = task_events(&path);
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["task_event"], "failed");
    assert_eq!(event["tool"], "crawl");
    assert_eq!(event["principal"], "alice");
    assert_eq!(event["replica"], "warden-0", "the replica whose sweep noticed it");
    let detail = event["detail"].as_str().unwrap();
    assert!(detail.contains("(`warden-2`) stopped before it finished"), "{detail}");
    assert_ne!(event["task"], "orphan", "a digest, not the id");
}

#[tokio::test]
async fn another_caller_cannot_get_update_or_cancel_a_real_task() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let audit = Arc::new(AuditLog::open(&path, false).unwrap());
    let tasks = Tasks::in_memory("warden-0".into(), Some(audit));
    let mut asking = working("alices-task", "oauth-sub:alice", now_ms() + 60_000);
    asking.status = TaskStatus::InputRequired;
    asking.input_requests = Some(serde_json::from_value(json!({"1.roots": {"method": "roots/list"}})).unwrap());
    tasks.store().create(&asking).await.unwrap();
    let answer: InputResponses = serde_json::from_value(json!({"1.roots": {"roots": []}})).unwrap();

    for other in ["oauth-sub:bob", "", "oauth-sub:alice2"] {
        let got = tasks.get("alices-task", other).await.unwrap_err();
        assert_eq!(got.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(got.message, "no task `alices-task`");
        let updated = tasks.update("alices-task", other, answer.clone()).await.unwrap_err();
        assert_eq!(updated.message, "no task `alices-task`");
        let cancelled = tasks.cancel("alices-task", other).await.unwrap_err();
        assert_eq!(cancelled.message, "no task `alices-task`");
    }
    // Nothing reached the task: no answer kept, no cancel asked, nothing audited.
    let control = tasks.store().control("alices-task").await.unwrap();
    assert!(!control.cancel && control.answers.is_empty(), "{control:?}");
    assert!(task_events(&path).is_empty());
    let hers = tasks.get("alices-task", "oauth-sub:alice").await.unwrap();
    assert_eq!(hers.task.status(), TaskStatus::InputRequired);

    // Its owner's cancel is acknowledged and audited as requested, with her name — once,
    // however often she asks (before: a line for each, 60–123 a task).
    for _ in 0..60 {
        tasks.cancel("alices-task", "oauth-sub:alice").await.unwrap();
    }
    assert!(tasks.store().control("alices-task").await.unwrap().cancel);
    let events = task_events(&path);
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["task_event"], "cancel_requested");
    assert_eq!(events[0]["principal"], "alice");
}

/// A running task as `task_call` makes one, created in `tasks`' store.
async fn running(tasks: &Arc<Tasks>, id: &str) -> (Arc<TaskDriver>, CancellationToken) {
    let mut draft = working(id, "", 0);
    draft.replica = tasks.replica().to_string();
    let cancel = CancellationToken::new();
    let driver = TaskDriver::new(tasks.clone(), draft, None, cancel.clone());
    driver.create(None).await.unwrap();
    (driver, cancel)
}

fn text_result(bytes: usize) -> rmcp::model::JsonObject {
    json!({"content": [{"type": "text", "text": "x".repeat(bytes)}], "isError": false})
        .as_object()
        .unwrap()
        .clone()
}

/// The finding: a result was stored whatever its size once its task had been created. Now a
/// result past the bound ends its task `failed` with the reason — in the record and, once,
/// in the audit log — and the store's bytes stay within the bound.
#[tokio::test]
async fn a_result_that_does_not_fit_fails_its_task_with_the_reason_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let audit = Arc::new(AuditLog::open(&path, false).unwrap());
    let bounds = Bounds {
        bytes: 256 << 10,
        per_caller_bytes: 256 << 10,
        ..Bounds::default()
    };
    let tasks = Arc::new(Tasks::new(TaskStore::memory(bounds), "warden-0".into(), Some(audit)));
    let (fits, _) = running(&tasks, "fits").await;
    let (big, stopped) = running(&tasks, "big").await;
    fits.finish(Finish::Completed(text_result(200 << 10))).await;
    big.finish(Finish::Completed(text_result(200 << 10))).await;

    assert_eq!(
        tasks.get("fits", "").await.unwrap().task.status(),
        TaskStatus::Completed
    );
    let failed = tasks.get("big", "").await.unwrap();
    let TaskPayload::Failed { error } = &failed.task.payload else {
        panic!("{failed:?}")
    };
    let why = error["message"].as_str().unwrap();
    assert!(
        why.contains("does not fit in the task store, so the result was not kept"),
        "{why}"
    );
    assert!(stopped.is_cancelled(), "the call is stopped");
    let events: Vec<(String, Option<String>)> = task_events(&path)
        .iter()
        .map(|e| {
            (
                e["task_event"].as_str().unwrap().to_string(),
                e["detail"].as_str().map(str::to_string),
            )
        })
        .collect();
    assert_eq!(
        events,
        [
            ("created".to_string(), None),
            ("created".to_string(), None),
            ("completed".to_string(), None),
            ("failed".to_string(), Some(why.to_string())),
        ]
    );
}

/// Tasks' sweep writes an `expired` line for every task that expired since the last one, and
/// a backlog past its bound as one line with the count.
#[tokio::test]
async fn every_expired_task_is_audited_by_one_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let audit = Arc::new(AuditLog::open(&path, false).unwrap());
    let bounds = Bounds {
        per_caller: usize::MAX,
        total: usize::MAX,
        ..Bounds::default()
    };
    let tasks = Tasks::new(TaskStore::memory(bounds), "warden-0".into(), Some(audit));
    for n in 0..2_102 {
        let mut old = working(&format!("t{n}"), "", now_ms() + 60_000);
        old.created_ms = now_ms() - 10;
        old.ttl_ms = 1;
        assert!(tasks.store().create(&old).await.is_ok(), "t{n}");
    }
    assert_eq!(tasks.sweep().await, (0, 2_102));
    let events = task_events(&path);
    assert_eq!(events.len(), 2_102);
    assert!(events.iter().all(|e| e["task_event"] == "expired"));

    tasks.unreported(100);
    let last = task_events(&path).pop().unwrap();
    assert_eq!(last["task_event"], "expired_unreported");
    assert!(
        last["detail"]
            .as_str()
            .unwrap()
            .starts_with("100 tasks expired past the backlog of 16384"),
        "{last}"
    );
}

/// An answer that reaches the runner after its round ended (or for nothing it asks) is not
/// kept: before, the runner held every such answer until the task ended.
#[tokio::test]
async fn answers_to_nothing_asked_now_are_not_held_by_the_runner() {
    let tasks = Arc::new(Tasks::in_memory("warden-0".into(), None));
    let (driver, _) = running(&tasks, "asking").await;
    let late = std::collections::BTreeMap::from([("1.gone".to_string(), json!({"action": "accept"}))]);
    tasks.store().answer("asking", late, now_ms() + 60_000).await.unwrap();
    driver.heartbeat().await;
    assert_eq!(driver.buffered_answers(), 0);
    assert!(
        tasks.store().control("asking").await.unwrap().answers.is_empty(),
        "taken from the store too"
    );
}
