//! Schemas and helpers the budget's tests share.

use serde_json::{Value, json};

use super::measure;

pub(super) fn refused(schema: Value) -> String {
    format!("{:#}", measure(&schema).expect_err("the schema is refused"))
}

/// `depth` levels of `allOf: [$ref, $ref]`, each to the level below: the
/// schema that made jsonschema allocate 24 GB evaluating one argument.
pub(super) fn nested_ref_all_of(depth: usize) -> Value {
    let mut defs = serde_json::Map::new();
    defs.insert("d0".into(), json!({"type": "object"}));
    for level in 1..=depth {
        let below = format!("#/$defs/d{}", level - 1);
        defs.insert(
            format!("d{level}"),
            json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
        );
    }
    json!({"type": "object", "$defs": defs, "$ref": format!("#/$defs/d{depth}")})
}

/// 8 levels of 10 000-character property names, then 110 × 100 empty properties
/// (100 per object, within the work one value may get): under 256 KiB of text and
/// every other bound, yet each of the 11 000 keeps its 80 KB location in jsonschema
/// (and kept it in this analysis before it kept places).
pub(super) fn long_locations() -> Value {
    let group = |g: usize| {
        let leaves: serde_json::Map<String, Value> = (0..100).map(|n| (format!("p{n}"), json!({}))).collect();
        (format!("g{g}"), json!({ "properties": leaves }))
    };
    let groups: serde_json::Map<String, Value> = (0..110).map(group).collect();
    let mut schema = json!({ "properties": groups });
    for level in 0..8 {
        schema = json!({ "properties": { format!("{level}{}", "k".repeat(10_000)): schema } });
    }
    schema["type"] = json!("object");
    schema
}
