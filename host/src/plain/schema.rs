//! What a WIT type looks like as JSON: its JSON Schema and its WIT spelling.
//!
//! The encoding (one place, used by `values.rs` in both directions):
//! integers are JSON integers with their exact range; floats are numbers, or
//! `"NaN"`, `"Infinity"`, `"-Infinity"`; `char` is a one-character string;
//! `list<u8>` is a base64 string; other lists and tuples are arrays; a
//! record is an object; an enum case is its name; flags are an array of
//! names; a variant (and a nested `result`) case is its name when it has no
//! payload, else `{"case": payload}`; `option<T>` is `null` or the value
//! (`{"some": v}` when `T` is itself an option, so `null` stays unambiguous).

use std::cell::Cell;

use serde_json::{Map, Value, json};
use wasmtime::component::types::Type;

/// Types nested deeper than this are not exposed: a JSON value that deep
/// would be refused by most parsers anyway, and it bounds the host's
/// recursion on a component's types.
pub const MAX_DEPTH: usize = 16;

/// The strings that stand for non-finite floats.
pub const NAN: &str = "NaN";
pub const INFINITY: &str = "Infinity";
pub const NEG_INFINITY: &str = "-Infinity";

/// Why a type cannot cross as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Unsupported(pub String);

/// The most types one schema may expand to. A component's types form a
/// graph: a record whose fields reuse one type, nested a few times, expands
/// exponentially, and wasmparser only bounds that at a million. The schema
/// budget refuses more nodes than this anyway; stopping here keeps the
/// host from building a huge schema only to refuse it.
pub const MAX_EXPANDED_TYPES: usize = crate::schema_budget::MAX_SCHEMA_NODES;

/// The JSON Schema of values of `ty`.
pub fn schema(ty: &Type) -> Result<Value, Unsupported> {
    schema_at(ty, 0, &Cell::new(0))
}

fn schema_at(ty: &Type, depth: usize, visited: &Cell<usize>) -> Result<Value, Unsupported> {
    if depth > MAX_DEPTH {
        return Err(Unsupported(format!(
            "its types are nested more than {MAX_DEPTH} levels deep"
        )));
    }
    visited.set(visited.get() + 1);
    if visited.get() > MAX_EXPANDED_TYPES {
        return Err(Unsupported(format!(
            "its types expand to more than {MAX_EXPANDED_TYPES} schema nodes"
        )));
    }
    let inner = |ty: &Type| schema_at(ty, depth + 1, visited);
    Ok(match ty {
        Type::Bool => json!({"type": "boolean"}),
        Type::U8 => integer(u8::MIN, u8::MAX),
        Type::U16 => integer(u16::MIN, u16::MAX),
        Type::U32 => integer(u32::MIN, u32::MAX),
        Type::U64 => integer(u64::MIN, u64::MAX),
        Type::S8 => integer(i8::MIN, i8::MAX),
        Type::S16 => integer(i16::MIN, i16::MAX),
        Type::S32 => integer(i32::MIN, i32::MAX),
        Type::S64 => integer(i64::MIN, i64::MAX),
        // The bound as Warden prints an f32 (`3.4028235e38`, the shortest form
        // that reads back as `f32::MAX`), so every f32 result matches it.
        Type::Float32 => float(Some(f32::MAX.to_string().parse().unwrap_or(f64::from(f32::MAX)))),
        Type::Float64 => float(None),
        Type::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        Type::String => json!({"type": "string"}),
        Type::List(list) => match list.ty() {
            Type::U8 => json!({"type": "string", "contentEncoding": "base64"}),
            element => json!({"type": "array", "items": inner(&element)?}),
        },
        Type::FixedLengthList(list) => {
            let len = list.len();
            json!({"type": "array", "items": inner(&list.ty())?, "minItems": len, "maxItems": len})
        }
        Type::Map(map) => {
            let value = inner(&map.value())?;
            match map.key() {
                Type::String => json!({"type": "object", "additionalProperties": value}),
                key => {
                    let key = inner(&key)?;
                    json!({"type": "array", "items": {"type": "array", "prefixItems": [key, value], "minItems": 2, "maxItems": 2}})
                }
            }
        }
        Type::Record(record) => {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for field in record.fields() {
                if !matches!(field.ty, Type::Option(_)) {
                    required.push(Value::from(field.name));
                }
                properties.insert(field.name.to_string(), inner(&field.ty)?);
            }
            object(properties, required)
        }
        Type::Tuple(tuple) => {
            let items = tuple.types().map(|t| inner(&t)).collect::<Result<Vec<_>, _>>()?;
            let len = items.len();
            json!({"type": "array", "prefixItems": items, "minItems": len, "maxItems": len})
        }
        Type::Variant(variant) => {
            let cases = variant
                .cases()
                .map(|case| case_schema(case.name, case.ty.as_ref(), depth, visited))
                .collect::<Result<Vec<_>, _>>()?;
            json!({"oneOf": cases})
        }
        Type::Result(result) => json!({"oneOf": [
            case_schema("ok", result.ok().as_ref(), depth, visited)?,
            case_schema("err", result.err().as_ref(), depth, visited)?,
        ]}),
        Type::Enum(cases) => json!({"type": "string", "enum": cases.names().collect::<Vec<_>>()}),
        Type::Flags(flags) => json!({
            "type": "array",
            "items": {"type": "string", "enum": flags.names().collect::<Vec<_>>()},
            "uniqueItems": true,
        }),
        Type::Option(option) => {
            let some = option.ty();
            let some = if matches!(some, Type::Option(_)) {
                object(
                    Map::from_iter([("some".to_string(), inner(&some)?)]),
                    vec!["some".into()],
                )
            } else {
                inner(&some)?
            };
            json!({"anyOf": [some, {"type": "null"}]})
        }
        Type::Own(_) | Type::Borrow(_) => {
            return Err(Unsupported(
                "it passes a resource handle, which cannot cross as JSON".into(),
            ));
        }
        Type::Future(_) => return Err(Unsupported("it passes a future, which cannot cross as JSON".into())),
        Type::Stream(_) => return Err(Unsupported("it passes a stream, which cannot cross as JSON".into())),
        Type::ErrorContext => {
            return Err(Unsupported(
                "it passes an error-context, which cannot cross as JSON".into(),
            ));
        }
    })
}

fn integer<T: Into<Value>>(min: T, max: T) -> Value {
    json!({"type": "integer", "minimum": min.into(), "maximum": max.into()})
}

fn float(bound: Option<f64>) -> Value {
    let mut number = json!({"type": "number"});
    if let Some(max) = bound {
        number["minimum"] = json!(-max);
        number["maximum"] = json!(max);
    }
    json!({"anyOf": [number, {"type": "string", "enum": [NAN, INFINITY, NEG_INFINITY]}]})
}

fn case_schema(name: &str, payload: Option<&Type>, depth: usize, visited: &Cell<usize>) -> Result<Value, Unsupported> {
    Ok(match payload {
        None => json!({"const": name}),
        Some(ty) => object(
            Map::from_iter([(name.to_string(), schema_at(ty, depth + 1, visited)?)]),
            vec![name.into()],
        ),
    })
}

/// A closed object schema: exactly the given properties, `required` of them.
pub fn object(properties: Map<String, Value>, required: Vec<Value>) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// `ty` as WIT spells it, for descriptions and `warden check`, when the
/// component's WIT (with type names) cannot be read: structures spelled out,
/// cut short past `MAX_EXPANDED_TYPES` types.
pub fn wit_name(ty: &Type) -> String {
    wit_name_at(ty, 0, &Cell::new(0))
}

fn wit_name_at(ty: &Type, depth: usize, visited: &Cell<usize>) -> String {
    visited.set(visited.get() + 1);
    if depth > MAX_DEPTH || visited.get() > MAX_EXPANDED_TYPES {
        return "…".into();
    }
    let inner = |ty: &Type| wit_name_at(ty, depth + 1, visited);
    match ty {
        Type::Bool => "bool".into(),
        Type::U8 => "u8".into(),
        Type::U16 => "u16".into(),
        Type::U32 => "u32".into(),
        Type::U64 => "u64".into(),
        Type::S8 => "s8".into(),
        Type::S16 => "s16".into(),
        Type::S32 => "s32".into(),
        Type::S64 => "s64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(list) => format!("list<{}>", inner(&list.ty())),
        Type::FixedLengthList(list) => format!("list<{}, {}>", inner(&list.ty()), list.len()),
        Type::Map(map) => format!("map<{}, {}>", inner(&map.key()), inner(&map.value())),
        Type::Record(record) => {
            let fields: Vec<String> = record
                .fields()
                .map(|f| format!("{}: {}", f.name, inner(&f.ty)))
                .collect();
            format!("record {{ {} }}", fields.join(", "))
        }
        Type::Tuple(tuple) => {
            let types: Vec<String> = tuple.types().map(|t| inner(&t)).collect();
            format!("tuple<{}>", types.join(", "))
        }
        Type::Variant(variant) => {
            let cases: Vec<String> = variant
                .cases()
                .map(|c| match &c.ty {
                    Some(ty) => format!("{}({})", c.name, inner(ty)),
                    None => c.name.to_string(),
                })
                .collect();
            format!("variant {{ {} }}", cases.join(", "))
        }
        Type::Enum(cases) => format!("enum {{ {} }}", cases.names().collect::<Vec<_>>().join(", ")),
        Type::Flags(flags) => format!("flags {{ {} }}", flags.names().collect::<Vec<_>>().join(", ")),
        Type::Option(option) => format!("option<{}>", inner(&option.ty())),
        Type::Result(result) => match (result.ok(), result.err()) {
            (None, None) => "result".into(),
            (Some(ok), None) => format!("result<{}>", inner(&ok)),
            (None, Some(err)) => format!("result<_, {}>", inner(&err)),
            (Some(ok), Some(err)) => format!("result<{}, {}>", inner(&ok), inner(&err)),
        },
        Type::Own(_) => "own<resource>".into(),
        Type::Borrow(_) => "borrow<resource>".into(),
        Type::Future(_) => "future".into(),
        Type::Stream(_) => "stream".into(),
        Type::ErrorContext => "error-context".into(),
    }
}
