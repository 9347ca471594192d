//! A tool's JSON Schemas come from its plugin, which is untrusted, yet
//! jsonschema compiles and evaluates them on the host. This module bounds
//! what that can cost before jsonschema sees a schema, and compiles it with
//! options that keep evaluation linear.
//!
//! The bounds were set against jsonschema 0.33, which compiled a `$ref` by
//! compiling its target again at every use (no sharing), and a recursive
//! `$ref` as a lazy node that compiled a fresh copy of its target the first
//! time an instance reached it — copies that stayed in the shared validator.
//! jsonschema 0.61 compiles a reference's target once and shares it, so the
//! size of the tree with every `$ref` expanded is now an upper bound on what
//! it compiles; it is still what is measured here, and the work one value can
//! receive is still counted along every path:
//!
//! - the document: text size, JSON node count and nesting depth;
//! - references: only `#` and `#/json/pointer` within the document; no
//!   `$dynamicRef`, `$recursiveRef` or embedded `$id` (so no file or network
//!   fetch, and a reference always means what this analysis thinks);
//! - no reference cycle at all. Under jsonschema 0.33 a cycle through
//!   keywords that apply to the same value (`allOf`, `$ref`, …) overflowed
//!   the stack, and one that descends (`properties`, `items`, …) grew the
//!   shared validator by a copy of the schema for every new path an argument
//!   took. 0.61 does neither (measured: a recursive schema's validator stays
//!   the same size after arguments 1 000 levels deep), but the analysis below
//!   needs every path to end, so cycles stay refused: a plugin that takes
//!   recursive data can declare that part as `{}` and check it itself;
//! - with references expanded: the compiled size, the nesting depth (the
//!   host stack evaluation needs), the `pattern`s compiled, and the work one
//!   value of an instance can receive — so that evaluation costs at most
//!   `MAX_WORK_PER_VALUE` units for each value in the instance (plus the
//!   length of strings matched by patterns), never more;
//! - the schema locations jsonschema keeps: every compiled keyword holds
//!   its full JSON pointer as a string of its own (`jsonschema::paths::Location`),
//!   so long property names nested deep under many siblings cost the
//!   product of the two — bounded by `MAX_LOCATION_BYTES`, summed over the
//!   expansion. The analysis itself keeps each schema's place as its parent
//!   and one segment, never the whole pointer;
//! - `unevaluatedProperties` / `unevaluatedItems` are refused: jsonschema
//!   0.33 evaluated them by re-validating every applicator for every
//!   property, a cost that grows with nesting and is not bounded by the
//!   measures above (not measured again under 0.61).
//!
//! Patterns run on the `regex` crate's engine (linear time, no
//! backtracking; look-around and back-references are refused when the
//! schema compiles), with bounded compiled and cache sizes.

mod build;
mod cost;
mod cycles;
mod document;
mod graph;
#[cfg(test)]
mod test_schemas;
mod validator;

use anyhow::{Result, bail};
use serde_json::Value;

pub use document::{check_document, check_text};
use graph::Graph;
pub use validator::compile;

/// The longest schema text accepted (input and output schema each).
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
/// JSON values in one schema document.
pub const MAX_SCHEMA_NODES: usize = 20_000;
/// Nesting of the schema document (objects and arrays).
pub const MAX_SCHEMA_DEPTH: usize = 48;
/// Cost units of the schema with every `$ref` expanded: what jsonschema
/// compiles and keeps in memory.
pub const MAX_EXPANDED_UNITS: u64 = 50_000;
/// Schemas nested in one another with every `$ref` expanded: evaluation
/// recurses once per level on a 2 MiB async worker stack.
pub const MAX_EXPANDED_DEPTH: u64 = 64;
/// Cost units one value of an instance can receive from the whole schema.
pub const MAX_WORK_PER_VALUE: u64 = 2_000;
/// `pattern`s and `patternProperties` keys compiled, references expanded.
pub const MAX_PATTERNS: u64 = 100;
/// Bytes of schema locations (JSON pointers) jsonschema keeps, one per cost
/// unit, references expanded.
pub const MAX_LOCATION_BYTES: u64 = 16 << 20;
/// Heap one compiled pattern may take, and its lazy DFA cache.
pub const PATTERN_SIZE_LIMIT: usize = 256 << 10;

/// What a schema that passed costs, for the plugin-wide totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaCost {
    /// Cost units with references expanded (compiled size).
    pub expanded: u64,
    /// Nesting depth with references expanded.
    pub depth: u64,
    /// Cost units the top-level value (the arguments object) can receive.
    pub root_work: u64,
    /// Most cost units any other value of an instance can receive.
    pub value_work: u64,
    /// Patterns compiled.
    pub patterns: u64,
    /// Bytes of the locations compiled keywords hold.
    pub locations: u64,
}

/// Measures `schema` and refuses it when a bound is exceeded.
pub fn measure(schema: &Value) -> Result<SchemaCost> {
    check_document(schema)?;
    let graph = Graph::build(schema)?;
    graph.refuse_cycles()?;
    let cost = graph.cost();
    if cost.expanded > MAX_EXPANDED_UNITS {
        bail!(
            "expands to {} cost units with its `$ref`s followed, more than {MAX_EXPANDED_UNITS}; \
             reference shared definitions less often",
            cost.expanded
        );
    }
    if cost.depth > MAX_EXPANDED_DEPTH {
        bail!(
            "nests {} schemas deep with its `$ref`s followed, more than {MAX_EXPANDED_DEPTH}",
            cost.depth
        );
    }
    let work_per_value = cost.root_work.max(cost.value_work);
    if work_per_value > MAX_WORK_PER_VALUE {
        bail!(
            "could apply {work_per_value} cost units of checks to a single value, more than {MAX_WORK_PER_VALUE}; \
             nested `allOf`/`anyOf`/`oneOf` of `$ref`s multiply the work"
        );
    }
    if cost.locations > MAX_LOCATION_BYTES {
        bail!(
            "would make jsonschema keep {} bytes of schema locations (each compiled keyword holds its \
             whole JSON pointer) with its `$ref`s followed, more than {} MiB; use shorter property \
             names or nest them less deeply",
            cost.locations,
            MAX_LOCATION_BYTES >> 20
        );
    }
    if cost.patterns > MAX_PATTERNS {
        bail!(
            "compiles {} patterns with its `$ref`s followed, more than {MAX_PATTERNS}",
            cost.patterns
        );
    }
    Ok(cost)
}

#[cfg(test)]
mod tests {
    use super::test_schemas::{long_locations, nested_ref_all_of, refused};
    use super::*;
    use serde_json::json;

    #[test]
    fn ordinary_schemas_are_cheap() {
        let cost = measure(&json!({
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$"},
                "home": {"$ref": "#/$defs/address"},
                "work": {"$ref": "#/$defs/address"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            },
            "required": ["name"],
            "additionalProperties": false
        }))
        .unwrap();
        assert_eq!(cost.patterns, 1);
        assert_eq!(cost.depth, 4, "root → home → its $ref's target → city");
        assert!(
            cost.root_work < 30 && cost.value_work < 40 && cost.expanded < 100,
            "{cost:?}"
        );
    }

    #[test]
    fn exponential_ref_expansion_is_refused() {
        // Ten levels double to 1024 copies: allowed. Thirty would be 10⁹.
        assert!(measure(&nested_ref_all_of(6)).is_ok());
        let error = refused(nested_ref_all_of(30));
        assert!(error.contains("cost units with its `$ref`s followed"), "{error}");
    }

    #[test]
    fn work_on_one_value_is_bounded_even_when_compiled_size_is_fine() {
        // 40 alternatives each checking a 60-value enum apply to every item.
        let alternatives: Vec<Value> = (0..40)
            .map(|n| json!({"enum": (0..60).map(|i| i * n).collect::<Vec<_>>()}))
            .collect();
        let error = refused(
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"anyOf": alternatives}}}}),
        );
        assert!(error.contains("cost units of checks to a single value"), "{error}");
    }
    #[test]
    fn long_names_nested_under_many_schemas_are_refused_for_their_locations() {
        let schema = long_locations();
        assert!(schema.to_string().len() < MAX_SCHEMA_BYTES);
        let started = std::time::Instant::now();
        let error = refused(schema);
        assert!(
            error.contains("bytes of schema locations") && error.contains("more than 16 MiB"),
            "{error}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "a hang, not a timing check"
        );
        // Shorter names under the same nesting are fine.
        let cost = measure(&nested_ref_all_of(6)).unwrap();
        assert!(cost.locations > 0 && cost.locations < 100_000, "{cost:?}");
    }
}
