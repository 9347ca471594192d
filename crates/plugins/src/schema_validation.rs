//! Checking an argument or a result against a tool's schema, within a
//! bounded amount of work and memory.
//!
//! `schema_budget` bounds the work each value of an instance can receive;
//! here the instance is weighed before it is checked, so one check never
//! costs more than `MAX_VALIDATION_WORK` units, whatever the client or the
//! plugin sends. The check itself is `is_valid`, which allocates nothing per
//! keyword. Only an invalid instance is explained, and in detail only when
//! small: jsonschema explains an `anyOf`/`oneOf` failure by collecting the
//! errors of every alternative, each holding a copy of the value it is
//! about, which for a large instance is far more memory than the instance.

use anyhow::Result;
use serde_json::Value;

use crate::schema_budget::{self, SchemaCost};

/// Cost units one check may take (about a second of one core for the
/// costliest units under jsonschema 0.33, far less for most; 0.61 took a
/// fifteenth of 0.33's time on the costliest, measured in a debug build).
pub const MAX_VALIDATION_WORK: u64 = 50_000_000;
/// Bound on `errors × instance weight` for a detailed explanation: the
/// values jsonschema may copy while explaining.
pub const MAX_EXPLANATION_COPIES: u64 = 1_000_000;
/// Problems listed at most, and characters shown of each.
pub const MAX_VIOLATIONS: usize = 20;
pub const MAX_VIOLATION_CHARS: usize = 300;
/// String bytes that weigh as much as one value.
const STRING_BYTES_PER_UNIT: usize = 16;
/// Checks that may cost more than this many units tell the async runtime
/// first, so the worker's other tasks move to another thread meanwhile.
const BLOCKING_WORK: u64 = 1_000_000;

/// A schema compiled once at load, with what it costs to apply.
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    cost: SchemaCost,
}

impl CompiledSchema {
    /// Bounds (`schema_budget`) and compiles a plugin's schema.
    pub fn compile(schema: &Value) -> Result<Self> {
        let (validator, cost) = schema_budget::compile(schema)?;
        Ok(Self { validator, cost })
    }

    pub fn cost(&self) -> SchemaCost {
        self.cost
    }

    /// The validator's own yes/no answer, with no budget: for tests and
    /// fuzzing, which compare it with `violations`.
    pub fn is_valid(&self, value: &Value) -> bool {
        self.validator.is_valid(value)
    }

    /// Every way `value` violates the schema, one line each with its JSON
    /// path (at most `MAX_VIOLATIONS`); empty when it matches.
    pub fn violations(&self, value: &Value) -> Vec<String> {
        let weight = weight(value);
        let work = self
            .cost
            .root_work
            .saturating_add(self.cost.value_work.saturating_mul(weight));
        if work > MAX_VALIDATION_WORK {
            return vec![format!(
                "(root): too large to check against this schema: it weighs {weight} values, and the schema \
                 may apply {} cost units to each; at most {MAX_VALIDATION_WORK} units are spent on one check",
                self.cost.value_work.max(1)
            )];
        }
        if work > BLOCKING_WORK {
            blocking(|| self.check(value, weight, work))
        } else {
            self.check(value, weight, work)
        }
    }

    fn check(&self, value: &Value, weight: u64, work: u64) -> Vec<String> {
        if self.validator.is_valid(value) {
            return Vec::new();
        }
        if work.saturating_mul(weight) > MAX_EXPLANATION_COPIES {
            return vec![format!(
                "(root): does not match the schema (a value of {weight} values is too large to list each problem; \
                 check it against the schema)"
            )];
        }
        let mut found: Vec<String> = self
            .validator
            .iter_errors(value)
            .take(MAX_VIOLATIONS + 1)
            .map(|error| {
                let path = error.instance_path().to_string();
                let at = if path.is_empty() { "(root)".to_string() } else { path };
                shorten(format!("{at}: {error}"))
            })
            .collect();
        if found.len() > MAX_VIOLATIONS {
            found.truncate(MAX_VIOLATIONS);
            found.push(format!("(and more; the first {MAX_VIOLATIONS} are listed)"));
        }
        found
    }
}

/// Runs `f` on this thread, telling a multi-threaded tokio runtime (if this
/// is one of its workers) that it blocks.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    let on_worker = tokio::runtime::Handle::try_current()
        .is_ok_and(|runtime| runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if on_worker { tokio::task::block_in_place(f) } else { f() }
}

/// A line cut to `MAX_VIOLATION_CHARS` characters.
fn shorten(mut line: String) -> String {
    if let Some((cut, _)) = line.char_indices().nth(MAX_VIOLATION_CHARS) {
        line.truncate(cut);
        line.push('…');
    }
    line
}

/// How much checking `value` can cost per unit of schema work: its values,
/// plus its string bytes (patterns, lengths and formats read them).
pub fn weight(value: &Value) -> u64 {
    let mut total = 0u64;
    let mut pending = vec![value];
    while let Some(value) = pending.pop() {
        total += 1;
        match value {
            Value::String(s) => total += (s.len() / STRING_BYTES_PER_UNIT) as u64,
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => {
                for (key, item) in map {
                    total += (key.len() / STRING_BYTES_PER_UNIT) as u64;
                    pending.push(item);
                }
            }
            _ => {}
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn compiled(schema: Value) -> CompiledSchema {
        CompiledSchema::compile(&schema).unwrap()
    }

    #[test]
    fn small_invalid_values_are_explained_line_by_line() {
        let schema = compiled(json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}));
        assert!(schema.violations(&json!({"n": 3})).is_empty());
        let found = schema.violations(&json!({"n": "three"}));
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("/n: "), "{found:?}");
        let many =
            compiled(json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}));
        let found = many.violations(&json!({"a": vec![1; 50]}));
        assert_eq!(found.len(), MAX_VIOLATIONS + 1);
        assert!(found[MAX_VIOLATIONS].starts_with("(and more"), "{found:?}");
        let long = many.violations(&json!({"a": [{"x": "y".repeat(2_000)}]}));
        assert!(long[0].chars().count() <= MAX_VIOLATION_CHARS + 1, "{long:?}");
    }

    #[test]
    fn large_invalid_values_are_refused_without_copies() {
        // An `anyOf` failure on a large object: jsonschema would copy the
        // object once per failing alternative to explain it.
        let alternatives: Vec<Value> = (0..50).map(|n| json!({"required": [format!("k{n}")]})).collect();
        let schema = compiled(json!({"type": "object", "anyOf": alternatives}));
        let big: serde_json::Map<String, Value> = (0..200_000).map(|n| (format!("p{n}"), json!(n))).collect();
        let found = schema.violations(&Value::Object(big));
        assert_eq!(found.len(), 1);
        assert!(found[0].contains("too large to list each problem"), "{found:?}");
    }

    #[test]
    fn work_beyond_the_budget_is_refused_before_checking() {
        // 31 alternatives of 60-value enums for every item: the costliest
        // per-value schema allowed.
        let alternatives: Vec<Value> = (0..31)
            .map(|a| json!({"enum": (0..60).map(|i| a * 60 + i).collect::<Vec<_>>()}))
            .collect();
        let schema = compiled(
            json!({"type": "object", "properties": {"items": {"type": "array", "items": {"anyOf": alternatives}}}}),
        );
        assert!(schema.cost().value_work > 1_900, "{:?}", schema.cost());
        let allowed = MAX_VALIDATION_WORK / schema.cost().value_work - 10;
        let found = schema.violations(&json!({"items": vec![1859; allowed as usize]}));
        assert!(found.is_empty(), "{found:?}");
        let found = schema.violations(&json!({"items": vec![1859; allowed as usize + 100]}));
        assert!(found[0].contains("too large to check"), "{found:?}");
    }

    #[test]
    fn heavy_checks_run_on_either_kind_of_runtime() {
        let schema =
            compiled(json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}}}));
        let value = json!({"a": vec![1; 600_000]});
        assert!(schema.cost().value_work * weight(&value) > BLOCKING_WORK);
        let multi = tokio::runtime::Builder::new_multi_thread().build().unwrap();
        let on_a_worker = multi.block_on(async {
            let schema = std::sync::Arc::new(schema);
            let (s, v) = (schema.clone(), value.clone());
            let found = tokio::spawn(async move { s.violations(&v) }).await.unwrap();
            (found, schema)
        });
        assert!(on_a_worker.0.is_empty());
        let current = tokio::runtime::Builder::new_current_thread().build().unwrap();
        assert!(current.block_on(async { on_a_worker.1.violations(&value) }).is_empty());
    }

    #[test]
    fn strings_weigh_by_length() {
        assert_eq!(weight(&json!({"a": [1, 2, {"b": null}]})), 6);
        assert_eq!(weight(&json!("x".repeat(160))), 11);
    }
}
