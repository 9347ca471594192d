use rmcp::model::TaskStatus;
use serde_json::json;

use super::*;
use crate::tasks::store::MAX_UNREPORTED;

fn record(id: &str, caller: &str, ttl_ms: u64) -> TaskRecord {
    TaskRecord {
        id: id.into(),
        caller: caller.into(),
        plugin: "p".into(),
        tool: "t".into(),
        status: TaskStatus::Working,
        status_message: None,
        created_ms: now_ms(),
        updated_ms: now_ms(),
        ttl_ms,
        poll_ms: 500,
        input_requests: None,
        result: None,
        error: None,
        replica: "r".into(),
        lease_until_ms: now_ms() + 5_000,
    }
}

/// `record` completed with a text result of `bytes` bytes.
fn completed(id: &str, caller: &str, bytes: usize) -> TaskRecord {
    let mut done = record(id, caller, 60_000);
    done.status = TaskStatus::Completed;
    let result = json!({"content": [{"type": "text", "text": "x".repeat(bytes)}], "isError": false});
    done.result = Some(result.as_object().unwrap().clone());
    done
}

fn bounds(bytes: usize, per_caller_bytes: usize) -> Bounds {
    Bounds {
        per_caller: 256,
        total: 4096,
        bytes,
        per_caller_bytes,
    }
}

/// The bytes counted are exactly those its entries hold, in all and per caller.
fn assert_accounted(store: &MemoryStore) -> usize {
    let inner = store.lock();
    assert_eq!(inner.bytes, inner.tasks.values().map(|e| e.charge).sum::<usize>());
    for (caller, bytes) in &inner.by_caller {
        let held: usize = inner
            .tasks
            .values()
            .filter(|e| &e.record.caller == caller)
            .map(|e| e.charge)
            .sum();
        assert_eq!(*bytes, held, "{caller}");
    }
    inner.bytes
}

#[test]
fn expired_records_are_reported_once() {
    let store = MemoryStore::new(Bounds::default());
    let mut old = record("old", "alice", 1);
    old.created_ms = now_ms() - 10;
    store.create(&old).unwrap();
    store.create(&record("new", "alice", 60_000)).unwrap();
    let swept = store.sweep();
    assert_eq!(
        swept.expired,
        [Expired {
            id: "old".into(),
            plugin: "p".into(),
            tool: "t".into()
        }]
    );
    assert_eq!(store.sweep(), Swept::default(), "reported once");
    assert!(store.get("new").is_some());
}

#[test]
fn a_caller_cannot_hold_more_than_its_share() {
    let store = MemoryStore::new(Bounds {
        per_caller: 2,
        total: 3,
        ..Bounds::default()
    });
    store.create(&record("a", "alice", 60_000)).unwrap();
    store.create(&record("b", "alice", 60_000)).unwrap();
    assert!(matches!(
        store.create(&record("c", "alice", 60_000)),
        Err(Refusal::Full(_))
    ));
    store.create(&record("d", "bob", 60_000)).unwrap();
    assert!(matches!(
        store.create(&record("e", "carol", 60_000)),
        Err(Refusal::Full(_))
    ));
}

#[test]
fn expired_records_are_forgotten_and_free_their_room() {
    let store = MemoryStore::new(Bounds {
        per_caller: 1,
        total: 1,
        ..Bounds::default()
    });
    store.create(&record("a", "alice", 0)).unwrap();
    assert!(store.get("a").is_none());
    store.create(&record("b", "alice", 60_000)).unwrap();
    let inner = store.lock();
    assert_eq!(inner.bytes, inner.tasks["b"].charge);
    assert_eq!(inner.by_caller["alice"], inner.tasks["b"].charge);
}

#[test]
fn a_task_whose_lease_ran_out_is_written_failed_once_and_its_runner_locked_out() {
    let store = MemoryStore::new(Bounds::default());
    let now = now_ms();
    let mut orphan = record("orphan", "alice", 60_000);
    orphan.lease_until_ms = now - 1;
    orphan.replica = "warden-2".into();
    store.create(&orphan).unwrap();
    store.create(&record("alive", "alice", 60_000)).unwrap();
    let mut done = record("done", "alice", 60_000);
    done.lease_until_ms = now - 1;
    done.status = TaskStatus::Completed;
    store.create(&done).unwrap();

    let failed = store.fail_lapsed(now);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0].id, "orphan");
    assert_eq!(failed[0].status, TaskStatus::Failed);
    let message = failed[0].error.as_ref().unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(message.contains("(`warden-2`) stopped before it finished"), "{message}");
    // Written, not only derived at read time: the stored record says so.
    let stored = store.get("orphan").unwrap().record;
    assert_eq!(stored.status, TaskStatus::Failed);
    assert_eq!(stored.error, failed[0].error);
    assert_eq!(store.get("done").unwrap().record.status, TaskStatus::Completed);
    assert_eq!(store.get("alive").unwrap().record.status, TaskStatus::Working);
    // Once: the next sweep finds nothing.
    assert!(store.fail_lapsed(now + 1).is_empty());
    // The runner that comes back cannot write `working` over it.
    let mut late = orphan.clone();
    late.lease_until_ms = now + 5_000;
    assert!(matches!(store.put(&late), Put::Lost));
    assert_eq!(store.get("orphan").unwrap().record.status, TaskStatus::Failed);
    assert!(matches!(store.put(&record("alive", "alice", 60_000)), Put::Written));
    assert_accounted(&store);
}

#[test]
fn answers_and_cancel_are_taken_by_the_runner() {
    let store = MemoryStore::new(Bounds::default());
    store.create(&record("a", "", 60_000)).unwrap();
    let before = assert_accounted(&store);
    store
        .answer("a", BTreeMap::from([("k".to_string(), Value::Bool(true))]))
        .unwrap();
    assert_eq!(store.get("a").unwrap().answered, ["k"]);
    assert_eq!(assert_accounted(&store), before + "k".len() + "true".len());
    store.cancel("a");
    let control = store.control("a");
    assert!(control.cancel);
    assert_eq!(control.answers.len(), 1);
    assert!(store.control("a").answers.is_empty());
    assert_eq!(assert_accounted(&store), before, "taken answers free their bytes");
}

/// Finding: the byte bound was checked when a task was created, never when its result was
/// written, so 80 results of ~1 MB held 76 MiB in a 64 MiB store. Now every write is held to
/// it: a result that does not fit ends its task `failed`, saying why, and the store never
/// counts past its bound.
#[test]
fn a_result_past_the_byte_bound_ends_its_task_failed_and_the_store_stays_within_it() {
    const BOUND: usize = 1 << 20;
    let store = MemoryStore::new(bounds(BOUND, BOUND));
    let result = 100 << 10;
    let mut kept = 0;
    let mut ended = Vec::new();
    for n in 0..20 {
        let id = format!("t{n}");
        store.create(&record(&id, "alice", 60_000)).unwrap();
        match store.put(&completed(&id, "alice", result)) {
            Put::Written => kept += 1,
            Put::Ended(failed) => ended.push(failed),
            Put::Lost => panic!("{id} was lost"),
        }
        let held = assert_accounted(&store);
        assert!(held <= BOUND, "{held} bytes held past the bound of {BOUND}");
    }
    assert_eq!(kept, 10, "ten results of 100 KiB fit in 1 MiB");
    assert_eq!(ended.len(), 10);
    let failed = store.get("t15").unwrap().record;
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(failed.result.is_none());
    let why = failed.error.as_ref().unwrap()["message"].as_str().unwrap().to_string();
    assert!(
        why.starts_with("the task's record (102") && why.contains("does not fit in the task store"),
        "{why}"
    );
    assert!(why.contains(&format!("of its {BOUND} bytes for all tasks")), "{why}");
    assert_eq!(
        ended[5].error, failed.error,
        "what the runner is told is what is stored"
    );
    assert_eq!(store.get("t3").unwrap().record.status, TaskStatus::Completed);
    // An ended task takes no more writes.
    assert!(matches!(store.put(&completed("t15", "alice", 10)), Put::Lost));
}

/// One caller filling its share leaves the rest of the store to the others: before, one
/// caller's results refused every caller's tasks until they expired.
#[test]
fn one_callers_results_leave_room_for_everyone_elses() {
    let store = MemoryStore::new(bounds(4 << 20, 1 << 20));
    for n in 0..20 {
        let id = format!("a{n}");
        store.create(&record(&id, "alice", 60_000)).unwrap();
        store.put(&completed(&id, "alice", 100 << 10));
    }
    let alice = store.lock().by_caller["alice"];
    assert!(alice <= 1 << 20, "{alice}");
    store.create(&record("b", "bob", 60_000)).unwrap();
    assert!(matches!(store.put(&completed("b", "bob", 500 << 10)), Put::Written));
    assert_eq!(store.get("b").unwrap().record.status, TaskStatus::Completed);
    assert_accounted(&store);
}

/// Answers kept for a runner count in the bound too, at the write that keeps them.
#[test]
fn answers_past_the_byte_bound_are_refused_and_not_kept() {
    let store = MemoryStore::new(bounds(64 << 10, 64 << 10));
    store.create(&record("a", "", 60_000)).unwrap();
    let big = BTreeMap::from([(
        "1.k".to_string(),
        json!({"action": "accept", "content": {"v": "y".repeat(70 << 10)}}),
    )]);
    let before = assert_accounted(&store);
    let refused = store.answer("a", big).unwrap_err();
    assert!(
        refused.starts_with("the answers (71") && refused.contains("do not fit"),
        "{refused}"
    );
    assert!(store.get("a").unwrap().answered.is_empty());
    assert_eq!(assert_accounted(&store), before);
    let small = BTreeMap::from([("1.k".to_string(), json!({"action": "decline"}))]);
    store.answer("a", small).unwrap();
    assert_eq!(store.get("a").unwrap().answered, ["1.k"]);
}

/// A record already at the bound still ends in its own room: the room is counted from the start.
#[test]
fn the_record_that_ends_a_task_always_fits() {
    let first = record("a", "", 60_000);
    let store = MemoryStore::new(bounds(first.charge(), first.charge()));
    store.create(&first).unwrap();
    assert!(matches!(store.create(&record("b", "", 60_000)), Err(Refusal::Full(_))));
    let Put::Ended(failed) = store.put(&completed("a", "", 4096)) else {
        panic!("a result with no room left was written");
    };
    assert_eq!(failed.status, TaskStatus::Failed);
    assert!(assert_accounted(&store) <= first.charge());
}

/// Finding: a sweep reported 256 expired tasks, so at 105 tasks/s with 2 s lifetimes 822 of
/// 2 102 had no event 8 s later and the list grew. One sweep now takes all of them.
#[test]
fn one_sweep_reports_every_task_that_expired() {
    let store = MemoryStore::new(Bounds::default());
    for n in 0..2_102 {
        let mut old = record(&format!("t{n}"), &format!("caller{}", n % 16), 1);
        old.created_ms = now_ms() - 10;
        store.create(&old).unwrap();
    }
    let swept = store.sweep();
    assert_eq!((swept.expired.len(), swept.unreported), (2_102, 0));
    assert_eq!(store.sweep(), Swept::default());
}

/// Expired tasks nobody sweeps are held up to `MAX_UNREPORTED`, then only counted.
#[test]
fn the_unreported_backlog_is_bounded_and_its_overflow_counted() {
    let store = MemoryStore::new(Bounds {
        per_caller: usize::MAX,
        total: usize::MAX,
        ..Bounds::default()
    });
    let past = MAX_UNREPORTED + 100;
    for n in 0..past {
        let mut old = record(&format!("t{n}"), "", 1);
        old.created_ms = now_ms() - 10;
        store.create(&old).unwrap();
    }
    assert_eq!(store.lock().expired.len(), MAX_UNREPORTED, "held at the bound");
    let swept = store.sweep();
    assert_eq!((swept.expired.len(), swept.unreported), (MAX_UNREPORTED, 100));
    assert_eq!(store.sweep(), Swept::default());
}

#[test]
fn a_cancel_is_asked_once() {
    let store = MemoryStore::new(Bounds::default());
    store.create(&record("a", "", 60_000)).unwrap();
    assert!(store.cancel("a"));
    assert!(!store.cancel("a"));
    assert!(!store.cancel("unknown"));
}

#[test]
fn a_kept_result_costs_what_it_is_counted() {
    // 32 000 empty text items: as a tree of values some 30 times its text.
    let store = MemoryStore::new(bounds(64 << 20, 16 << 20));
    let mut many = record("many", "alice", 60_000);
    store.create(&many).unwrap();
    let items: Vec<Value> = (0..32_000).map(|_| json!({"type": "text", "text": ""})).collect();
    many.status = TaskStatus::Completed;
    many.result = Some(json!({"content": items}).as_object().unwrap().clone());
    assert!(matches!(store.put(&many), Put::Written));
    let inner = store.lock();
    let entry = &inner.tasks["many"];
    // Held as its JSON text, which is what the bound counts.
    assert_eq!(entry.record.json.len(), many.size());
    assert_eq!(entry.charge, many.charge());
    drop(inner);
    let seen = store.get("many").unwrap();
    assert_eq!(seen.record.result, many.result);
}
