//! Compiling a schema that passed the bounds into jsonschema's validator,
//! with nothing fetched and patterns on the linear engine.

use anyhow::Result;
use serde_json::Value;

use super::{PATTERN_SIZE_LIMIT, SchemaCost, measure};

/// Checks a parsed schema against every bound, then compiles it.
pub fn compile(schema: &Value) -> Result<(jsonschema::Validator, SchemaCost)> {
    let cost = measure(schema)?;
    let validator = options()
        .build(schema)
        .map_err(|e| anyhow::anyhow!("is not a valid JSON Schema: {e}"))?;
    Ok((validator, cost))
}

/// jsonschema's options for plugin schemas: nothing fetched, linear patterns.
fn options() -> jsonschema::ValidationOptions<'static> {
    jsonschema::options().with_retriever(NoRetrieval).with_pattern_options(
        jsonschema::PatternOptions::regex()
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_SIZE_LIMIT),
    )
}

/// References never leave the document (`measure` refuses them first); a
/// `$schema` naming an unknown meta-schema ends up here and is refused.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(&self, uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("`{uri}` is outside the schema; Warden never fetches schemas").into())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use serde_json::json;

    use super::super::test_schemas::{long_locations, refused};
    use super::super::{MAX_EXPANDED_DEPTH, MAX_PATTERNS};
    use super::*;

    /// Not a test: prints how long the costliest per-value schema allowed
    /// takes on a million worst-case items, bypassing the per-call budget of
    /// `schema_validation` (in a debug build here: 70 s, ~36 ns a unit, under
    /// jsonschema 0.33; 5.0 s, ~2.4 ns a unit, under 0.61).
    /// `cargo test -p warden-plugins --lib -- --ignored --nocapture schema_budget::validator::tests::measure`.
    #[test]
    #[ignore]
    fn measure_worst_case_evaluation() {
        let alternatives: Vec<Value> = (0..31)
            .map(|a| json!({"enum": (0..60).map(|i| a * 60 + i).collect::<Vec<_>>()}))
            .collect();
        let schema =
            json!({"type": "object", "properties": {"items": {"type": "array", "items": {"anyOf": alternatives}}}});
        let (validator, cost) = compile(&schema).unwrap();
        let items = vec![json!(31 * 60 - 1); 1 << 20]; // valid only by the last value of the last alternative
        let instance = json!({"items": items});
        let started = std::time::Instant::now();
        let valid = validator.is_valid(&instance);
        println!("{cost:?}: {} items, valid {valid}, {:?}", 1 << 20, started.elapsed());
    }
    /// Not a test: what compiling `long_locations` costs jsonschema, bypassing the bound
    /// (`cargo test -p warden-plugins --lib -- --ignored --nocapture schema_budget::validator::tests::measure_long_locations`).
    #[test]
    #[ignore]
    fn measure_long_locations() {
        let peak = || {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            status.lines().find(|l| l.starts_with("VmHWM:")).unwrap().to_string()
        };
        let before = peak();
        let validator = options().build(&long_locations()).unwrap();
        println!("compiled: {before} → {}", peak());
        drop(validator);
    }
    #[test]
    fn patterns_use_the_linear_engine_and_are_bounded() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}});
        let (validator, _) = compile(&schema).unwrap();
        // Catastrophic for a backtracking engine; linear here.
        let evil = format!("{}!", "a".repeat(100_000));
        let started = std::time::Instant::now();
        assert!(!validator.is_valid(&json!({"a": evil})));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "a hang, not a timing check"
        );
        // Back-references need backtracking: refused at compile.
        let schema = json!({"type": "object", "properties": {"a": {"pattern": "^(a)\\1$"}}});
        assert!(compile(&schema).is_err());
        let many: serde_json::Map<String, Value> = (0..=MAX_PATTERNS).map(|n| (format!("^p{n}"), json!({}))).collect();
        assert!(refused(json!({"type": "object", "patternProperties": many})).contains("patterns"));
    }

    #[test]
    fn nothing_is_fetched() {
        let schema = json!({"$schema": "https://example.com/custom-meta", "type": "object"});
        let error = format!("{:#}", compile(&schema).unwrap_err());
        assert!(error.contains("not a valid JSON Schema"), "{error}");
    }

    #[test]
    fn the_deepest_schema_allowed_evaluates_on_a_small_stack() {
        // Depth is what evaluation recursion follows: check it fits in the
        // 2 MiB a tokio worker thread has.
        // Each level is an array whose items are the level below (2 schemas).
        let levels = (MAX_EXPANDED_DEPTH as usize - 3) / 2;
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "integer"}));
        let mut instance = json!(1);
        for level in 1..=levels {
            let below = format!("#/$defs/d{}", level - 1);
            defs.insert(format!("d{level}"), json!({"type": "array", "items": {"$ref": below}}));
            instance = json!([instance]);
        }
        let schema =
            json!({"type": "object", "$defs": defs, "properties": {"a": {"$ref": format!("#/$defs/d{levels}")}}});
        let instance = json!({"a": instance});
        let cost = measure(&schema).unwrap();
        assert!(cost.depth >= MAX_EXPANDED_DEPTH - 3, "{cost:?}");
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let (validator, _) = compile(&schema).unwrap();
                // `iter_errors` is what calls use (`declarations::violations`).
                assert_eq!(validator.iter_errors(&instance).count(), 0);
                assert_eq!(validator.iter_errors(&json!({"a": [[["x"]]]})).count(), 1);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
