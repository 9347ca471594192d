//! The shared task store: Redis (`--task-store redis://…`), so that any
//! replica answers `tasks/get`, `tasks/update` and `tasks/cancel` for a task
//! another replica runs. Every key expires with its task's `ttlMs`.
//!
//! - `warden:task:{id}`: the record (JSON), written only by its runner;
//! - `warden:task:{id}:answers`: a hash of answers, by wire key;
//! - `warden:task:{id}:cancel`: present once `tasks/cancel` was asked;
//! - `warden:tasks` and `warden:tasks:{caller digest}`: the ids held, scored
//!   by expiry, for the bounds;
//! - `warden:tasks:leases`: the ids of unfinished tasks, scored by when their
//!   runner's lease runs out, for the sweep that fails them (`fail_lapsed`);
//! - `warden:state:{digest}`: an interactive `requestState` already used.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use serde_json::Value;
use sha2::{Digest, Sha256};
use warden_runtime::secrets::SecretAddress;

use super::health::{SLOW_CALL, StoreHealth};
use super::record::{TaskRecord, now_ms};
use super::store::{Bounds, Control, Expired, MAX_UNREPORTED, Put, Refusal, SWEEP_BATCH, SWEEP_BUDGET, Seen, Swept};

/// How long one Redis command may take before the store counts as unavailable.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(5);

pub struct RedisStore {
    connection: ConnectionManager,
    bounds: Bounds,
    /// How the calls went (`TaskStore` notes each).
    pub(super) health: StoreHealth,
}

fn record_key(id: &str) -> String {
    format!("warden:task:{id}")
}

fn caller_key(caller: &str) -> String {
    format!("warden:tasks:{}", hex(&Sha256::digest(caller.as_bytes())))
}

/// Every task, scored by when it expires; a member is `[id, plugin, tool]`
/// as JSON, so that the replica whose sweep removes it can report it.
const ALL_KEY: &str = "warden:tasks";

fn all_member(record: &TaskRecord) -> String {
    serde_json::json!([record.id, record.plugin, record.tool]).to_string()
}

/// Unfinished tasks, scored by when their lease runs out.
const LEASES_KEY: &str = "warden:tasks:leases";

/// The runner's write: never over a record that has ended (a sweep failed
/// it once the lease ran out), nor one that is gone; the lease index
/// follows. The same ending written again counts as written: a write that
/// timed out may have reached a stalled store after all.
/// KEYS: record, leases. ARGV: json, px, id, lease-until or "".
const PUT: &str = r#"
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local stored = cjson.decode(current)
local status = stored['status']
if status == 'completed' or status == 'failed' or status == 'cancelled' then
  local new = cjson.decode(ARGV[1])
  if new['status'] == status and new['updated_ms'] == stored['updated_ms'] and new['replica'] == stored['replica'] then
    return 1
  end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if ARGV[4] == '' then redis.call('ZREM', KEYS[2], ARGV[3]) else redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3]) end
return 1
"#;

/// A sweep's write of `failed`: only over the very record it read (compare
/// and set), so one replica writes it, and not over a renewal.
/// KEYS: record, leases. ARGV: json read, json to write, id.
const FAIL_LAPSED: &str = r#"
local current = redis.call('GET', KEYS[1])
if current ~= ARGV[1] then
  if not current then redis.call('ZREM', KEYS[2], ARGV[3]) end
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('ZREM', KEYS[2], ARGV[3])
return 1
"#;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Milliseconds left until `expires_ms`, at least one (Redis refuses zero).
fn left(expires_ms: u64) -> u64 {
    expires_ms.saturating_sub(now_ms()).max(1)
}

impl RedisStore {
    /// Connects to `url` (`redis://host:port/db`, `rediss://` for TLS);
    /// fails at once when it cannot be reached.
    /// `url` prints without its password (`SecretAddress`), here and in
    /// every error.
    pub async fn connect(url: &SecretAddress, bounds: Bounds) -> Result<Self> {
        let client = redis::Client::open(url.expose())
            .map_err(|e| anyhow::anyhow!("`--task-store {url}` is not a Redis URL ({:?})", e.kind()))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(COMMAND_TIMEOUT))
            .set_response_timeout(Some(COMMAND_TIMEOUT))
            .set_number_of_retries(2);
        let mut connection = ConnectionManager::new_with_config(client, config)
            .await
            .with_context(|| format!("cannot reach the task store at {url}"))?;
        let _: String = redis::cmd("PING")
            .query_async(&mut connection)
            .await
            .with_context(|| format!("the task store at {url} does not answer PING"))?;
        Ok(Self {
            connection,
            bounds,
            health: StoreHealth::default(),
        })
    }

    pub async fn create(&self, record: &TaskRecord) -> Result<(), Refusal> {
        let mut connection = self.connection.clone();
        let now = now_ms();
        let caller = caller_key(&record.caller);
        let (held, total): (usize, usize) = redis::pipe()
            .cmd("ZREMRANGEBYSCORE")
            .arg(&caller)
            .arg("-inf")
            .arg(now)
            .ignore()
            .zcard(&caller)
            // Expired members stay until a sweep reports them: count the rest.
            .zcount(ALL_KEY, format!("({now}"), "+inf")
            .query_async(&mut connection)
            .await
            .map_err(|e| Refusal::Unavailable(e.into()))?;
        if held >= self.bounds.per_caller {
            return Err(Refusal::Full(format!(
                "this caller holds {held} tasks already (at most {}); each is kept until its ttlMs ends",
                self.bounds.per_caller
            )));
        }
        if total >= self.bounds.total {
            return Err(Refusal::Full(format!(
                "the task store holds {total} tasks already (at most {})",
                self.bounds.total
            )));
        }
        let json = serde_json::to_string(record).map_err(|e| Refusal::Unavailable(e.into()))?;
        let expires = record.expires_ms();
        let mut pipe = redis::pipe();
        if !record.is_terminal() {
            pipe.zadd(LEASES_KEY, &record.id, record.lease_until_ms).ignore();
        }
        pipe.atomic()
            .cmd("SET")
            .arg(record_key(&record.id))
            .arg(json)
            .arg("PX")
            .arg(left(expires))
            .ignore()
            .zadd(&caller, &record.id, expires)
            .ignore()
            // The caller's index lives as long as its longest task: NX gives a
            // new index an expiry (GT alone never would: Redis counts "none" as
            // infinite), GT lengthens it.
            .cmd("PEXPIRE")
            .arg(&caller)
            .arg(left(expires))
            .arg("NX")
            .ignore()
            .cmd("PEXPIRE")
            .arg(&caller)
            .arg(left(expires))
            .arg("GT")
            .ignore()
            .zadd(ALL_KEY, all_member(record), expires)
            .ignore()
            .query_async::<()>(&mut connection)
            .await
            .map_err(|e| Refusal::Unavailable(e.into()))
    }

    /// Takes expired tasks off the index: the replica whose `ZREM` removes
    /// a member is the one that reports it (their records expire by
    /// themselves, with `PX`). Goes round, `SWEEP_BATCH` at a time, until
    /// caught up or `SWEEP_BUDGET` is spent; a backlog still past
    /// `MAX_UNREPORTED` then loses its oldest members, counted.
    pub async fn sweep(&self) -> Result<Swept> {
        let mut connection = self.connection.clone();
        let started = std::time::Instant::now();
        let mut swept = Swept::default();
        loop {
            let now = now_ms();
            let members: Vec<String> = redis::cmd("ZRANGEBYSCORE")
                .arg(ALL_KEY)
                .arg("-inf")
                .arg(now)
                .arg("LIMIT")
                .arg(0)
                .arg(SWEEP_BATCH)
                .query_async(&mut connection)
                .await
                .context("cannot read the task index")?;
            if members.is_empty() {
                return Ok(swept);
            }
            let mut pipe = redis::pipe();
            for member in &members {
                pipe.zrem(ALL_KEY, member);
            }
            let removed: Vec<usize> = pipe
                .query_async(&mut connection)
                .await
                .context("cannot update the task index")?;
            for (member, removed) in members.iter().zip(removed) {
                if removed == 1
                    && let Ok((id, plugin, tool)) = serde_json::from_str::<(String, String, String)>(member)
                {
                    swept.expired.push(Expired { id, plugin, tool });
                }
            }
            if members.len() < SWEEP_BATCH {
                return Ok(swept);
            }
            if started.elapsed() >= SWEEP_BUDGET {
                let backlog: usize = redis::cmd("ZCOUNT")
                    .arg(ALL_KEY)
                    .arg("-inf")
                    .arg(now)
                    .query_async(&mut connection)
                    .await
                    .context("cannot read the task index")?;
                if backlog > MAX_UNREPORTED {
                    swept.unreported = redis::cmd("ZREMRANGEBYRANK")
                        .arg(ALL_KEY)
                        .arg(0)
                        .arg(backlog - MAX_UNREPORTED - 1)
                        .query_async(&mut connection)
                        .await
                        .context("cannot update the task index")?;
                }
                return Ok(swept);
            }
        }
    }

    pub async fn get(&self, id: &str) -> Result<Option<Seen>> {
        let mut connection = self.connection.clone();
        let key = record_key(id);
        let (json, answered): (Option<String>, Vec<String>) = redis::pipe()
            .get(&key)
            .hkeys(format!("{key}:answers"))
            .query_async(&mut connection)
            .await
            .context("the task store did not answer")?;
        let Some(json) = json else { return Ok(None) };
        let record = serde_json::from_str(&json).context("a task record in the store is malformed")?;
        Ok(Some(Seen { record, answered }))
    }

    pub async fn put(&self, record: &TaskRecord) -> Result<Put> {
        let mut connection = self.connection.clone();
        let json = serde_json::to_string(record)?;
        let lease = if record.is_terminal() {
            String::new()
        } else {
            record.lease_until_ms.to_string()
        };
        let written: u8 = redis::cmd("EVAL")
            .arg(PUT)
            .arg(2)
            .arg(record_key(&record.id))
            .arg(LEASES_KEY)
            .arg(json)
            .arg(left(record.expires_ms()))
            .arg(&record.id)
            .arg(lease)
            .query_async(&mut connection)
            .await
            .context("the task store did not take the record")?;
        Ok(if written == 1 { Put::Written } else { Put::Lost })
    }

    /// Fails the unfinished tasks whose lease ran out; the replica whose
    /// compare-and-set writes a record is the one that reports it.
    pub async fn fail_lapsed(&self) -> Result<Vec<TaskRecord>> {
        let mut connection = self.connection.clone();
        let now = now_ms();
        let started = std::time::Instant::now();
        let ids: Vec<String> = redis::cmd("ZRANGEBYSCORE")
            .arg(LEASES_KEY)
            .arg("-inf")
            .arg(format!("({now}"))
            .arg("LIMIT")
            .arg(0)
            .arg(SWEEP_BATCH)
            .query_async(&mut connection)
            .await
            .context("cannot read the lease index")?;
        let mut failed = Vec::new();
        for id in ids {
            let read: Option<String> = redis::cmd("GET")
                .arg(record_key(&id))
                .query_async(&mut connection)
                .await
                .context("the task store did not answer")?;
            let record = read
                .as_deref()
                .and_then(|json| serde_json::from_str::<TaskRecord>(json).ok())
                .filter(|record| !record.is_terminal());
            let (Some(read), Some(record)) = (read, record) else {
                // Gone or ended: nothing to fail.
                redis::cmd("ZREM")
                    .arg(LEASES_KEY)
                    .arg(&id)
                    .query_async::<()>(&mut connection)
                    .await
                    .context("cannot update the lease index")?;
                continue;
            };
            if record.lease_until_ms >= now {
                continue;
            }
            // A sweep the store kept waiting saw leases that ran out while
            // it stalled: it stops, and a later one judges them (`health`).
            if started.elapsed() >= SLOW_CALL {
                break;
            }
            let record = record.seen_at(now, &[]);
            let written: u8 = redis::cmd("EVAL")
                .arg(FAIL_LAPSED)
                .arg(2)
                .arg(record_key(&id))
                .arg(LEASES_KEY)
                .arg(read)
                .arg(serde_json::to_string(&record)?)
                .arg(&id)
                .query_async(&mut connection)
                .await
                .context("the task store did not take the record")?;
            if written == 1 {
                failed.push(record);
            }
        }
        Ok(failed)
    }

    pub async fn answer(&self, id: &str, answers: BTreeMap<String, Value>, expires_ms: u64) -> Result<()> {
        if answers.is_empty() {
            return Ok(());
        }
        let mut connection = self.connection.clone();
        let key = format!("{}:answers", record_key(id));
        let pairs: Vec<(String, String)> = answers.into_iter().map(|(k, v)| (k, v.to_string())).collect();
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &pairs)
            .ignore()
            .pexpire(&key, left(expires_ms) as i64)
            .ignore()
            .query_async::<()>(&mut connection)
            .await
            .context("the task store did not take the answers")
    }

    /// True for the replica whose `SET NX` asked it first.
    pub async fn cancel(&self, id: &str, expires_ms: u64) -> Result<bool> {
        let mut connection = self.connection.clone();
        let set: Option<String> = redis::cmd("SET")
            .arg(format!("{}:cancel", record_key(id)))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(left(expires_ms))
            .query_async(&mut connection)
            .await
            .context("the task store did not take the cancel request")?;
        Ok(set.is_some())
    }

    pub async fn control(&self, id: &str) -> Result<Control> {
        let mut connection = self.connection.clone();
        let key = record_key(id);
        let answers_key = format!("{key}:answers");
        let (cancel, answers): (bool, BTreeMap<String, String>) = redis::pipe()
            .atomic()
            .exists(format!("{key}:cancel"))
            .hgetall(&answers_key)
            .del(&answers_key)
            .ignore()
            .query_async(&mut connection)
            .await
            .context("the task store did not answer")?;
        let answers = answers
            .into_iter()
            .filter_map(|(key, value)| Some((key, serde_json::from_str(&value).ok()?)))
            .collect();
        Ok(Control { cancel, answers })
    }

    /// Records `digest` as used; false if it was used before (on any replica).
    pub async fn use_once(&self, digest: &[u8; 32], ttl_ms: u64) -> Result<bool> {
        let mut connection = self.connection.clone();
        let set: Option<String> = redis::cmd("SET")
            .arg(format!("warden:state:{}", hex(digest)))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms.max(1))
            .query_async(&mut connection)
            .await
            .context("the task store did not answer")?;
        Ok(set.is_some())
    }
}
