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

use serde_json::{Value, json};
use wasmtime::component::types::Type;

use super::budget::{OverBudget, Text};
use super::wit_shape::Shape;

/// Types nested deeper than this are not exposed: a JSON value that deep
/// would be refused by most parsers anyway, and it bounds the host's
/// recursion on a component's types.
pub const MAX_DEPTH: usize = 16;

/// The strings that stand for non-finite floats.
pub const NAN: &str = "NaN";
pub const INFINITY: &str = "Infinity";
pub const NEG_INFINITY: &str = "-Infinity";

/// Why a function is not served: a type that cannot cross as JSON, or a text
/// that would pass its bound (see `budget`).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Unsupported(String),
    OverBudget(OverBudget),
}

impl From<OverBudget> for Refusal {
    fn from(over: OverBudget) -> Self {
        Self::OverBudget(over)
    }
}

impl Refusal {
    /// The same refusal, its reason prefixed with where it is (`parameter `x``).
    pub fn at(self, place: &str) -> Self {
        match self {
            Self::Unsupported(why) => Self::Unsupported(format!("{place}: {why}")),
            over => over,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unsupported(why) => f.write_str(why),
            Self::OverBudget(over) => over.fmt(f),
        }
    }
}

fn unsupported<T>(why: &str) -> Result<T, Refusal> {
    Err(Refusal::Unsupported(why.to_string()))
}

/// One property of an object schema: a record's field, a function's
/// parameter, a case's payload. `shape` is its type in the component's WIT,
/// when that can be read; `description` its own doc comment (a field's), or
/// a parameter's description from its function's doc comment (`param_docs`).
#[derive(Clone)]
pub struct Property<'t, 'r> {
    pub name: &'t str,
    pub ty: Type,
    pub required: bool,
    pub shape: Option<Shape<'r>>,
    pub description: Option<&'r str>,
}

impl<'t, 'r> Property<'t, 'r> {
    /// A property that is required unless its type is an `option`.
    pub fn new(name: &'t str, ty: Type, shape: Option<Shape<'r>>) -> Self {
        Self {
            name,
            required: !matches!(ty, Type::Option(_)),
            ty,
            shape,
            description: None,
        }
    }
}

/// Writes the JSON Schema of values of `ty` (of WIT type `shape`, when known)
/// to `out`. Every piece is counted against the budget before it is
/// written, so a type that uses one large type many times is refused before
/// the host holds its expansion.
pub fn schema(ty: &Type, shape: Option<Shape<'_>>, out: &mut Text) -> Result<(), Refusal> {
    schema_at(ty, shape, None, 0, out)
}

/// A closed object schema of `properties`, each one's schema written by
/// `schema`, with its doc comment (or its named type's) as its
/// description. The input schema of a function is one, with its parameters
/// as properties; `kind` names them in a refusal (`parameter`).
pub fn object<'t, 'r, I: Iterator<Item = Property<'t, 'r>>>(
    out: &mut Text,
    properties: impl Fn() -> I,
    kind: Option<&str>,
    description: Option<&str>,
    depth: usize,
) -> Result<(), Refusal> {
    // The object, "object", its properties, `required`, `false`, and each required name.
    let required = properties().filter(|p| p.required).count();
    out.values(5 + required)?;
    open(out, description, r#""type":"object","properties":{"#)?;
    for (n, property) in properties().enumerate() {
        if n > 0 {
            out.push(",")?;
        }
        out.json_string(property.name)?;
        out.push(":")?;
        schema_at(&property.ty, property.shape, property.description, depth, out).map_err(|refusal| match kind {
            Some(kind) => refusal.at(&format!("{kind} `{}`", property.name)),
            None => refusal,
        })?;
    }
    out.push(r#"},"required":["#)?;
    for (n, property) in properties().filter(|p| p.required).enumerate() {
        if n > 0 {
            out.push(",")?;
        }
        out.json_string(property.name)?;
    }
    out.push(r#"],"additionalProperties":false}"#)?;
    Ok(())
}

/// Opens a schema object: `{`, its `description` when it has one, then the
/// members `rest` starts with.
fn open(out: &mut Text, description: Option<&str>, rest: &str) -> Result<(), OverBudget> {
    out.push("{")?;
    if let Some(description) = description {
        out.values(1)?;
        out.push(r#""description":"#)?;
        out.json_string(description)?;
        out.push(",")?;
    }
    out.push(rest)
}

fn schema_at(
    ty: &Type,
    shape: Option<Shape<'_>>,
    description: Option<&str>,
    depth: usize,
    out: &mut Text,
) -> Result<(), Refusal> {
    if depth > MAX_DEPTH {
        return Err(Refusal::Unsupported(format!(
            "its types are nested more than {MAX_DEPTH} levels deep"
        )));
    }
    let below = depth + 1;
    // A field's own doc comment first, else its named type's.
    let description = description.or_else(|| shape.and_then(|s| s.docs()));
    let leaf = |out: &mut Text, schema: Value| leaf(out, schema, description);
    match ty {
        Type::Bool => leaf(out, json!({"type": "boolean"})),
        Type::U8 => leaf(out, integer(u8::MIN, u8::MAX)),
        Type::U16 => leaf(out, integer(u16::MIN, u16::MAX)),
        Type::U32 => leaf(out, integer(u32::MIN, u32::MAX)),
        Type::U64 => leaf(out, integer(u64::MIN, u64::MAX)),
        Type::S8 => leaf(out, integer(i8::MIN, i8::MAX)),
        Type::S16 => leaf(out, integer(i16::MIN, i16::MAX)),
        Type::S32 => leaf(out, integer(i32::MIN, i32::MAX)),
        Type::S64 => leaf(out, integer(i64::MIN, i64::MAX)),
        // The bound as Warden prints an f32 (`3.4028235e38`, the shortest form
        // that reads back as `f32::MAX`), so every f32 result matches it.
        Type::Float32 => leaf(
            out,
            float(Some(f32::MAX.to_string().parse().unwrap_or(f64::from(f32::MAX)))),
        ),
        Type::Float64 => leaf(out, float(None)),
        Type::Char => leaf(out, json!({"type": "string", "minLength": 1, "maxLength": 1})),
        Type::String => leaf(out, json!({"type": "string"})),
        Type::List(list) => match list.ty() {
            Type::U8 => leaf(out, json!({"type": "string", "contentEncoding": "base64"})),
            element => {
                out.values(2)?;
                open(out, description, r#""type":"array","items":"#)?;
                schema_at(&element, shape.and_then(|s| s.element()), None, below, out)?;
                Ok(out.push("}")?)
            }
        },
        Type::FixedLengthList(list) => {
            out.values(4)?;
            open(out, description, r#""type":"array","items":"#)?;
            schema_at(&list.ty(), shape.and_then(|s| s.element()), None, below, out)?;
            let len = list.len();
            Ok(out.push(&format!(r#","minItems":{len},"maxItems":{len}}}"#))?)
        }
        Type::Map(map) => {
            let (key_shape, value_shape) = shape.and_then(|s| s.map()).unzip();
            match map.key() {
                Type::String => {
                    out.values(2)?;
                    open(out, description, r#""type":"object","additionalProperties":"#)?;
                    schema_at(&map.value(), value_shape, None, below, out)?;
                    Ok(out.push("}")?)
                }
                key => {
                    out.values(7)?;
                    open(
                        out,
                        description,
                        r#""type":"array","items":{"type":"array","prefixItems":["#,
                    )?;
                    schema_at(&key, key_shape, None, below, out)?;
                    out.push(",")?;
                    schema_at(&map.value(), value_shape, None, below, out)?;
                    Ok(out.push(r#"],"minItems":2,"maxItems":2}}"#)?)
                }
            }
        }
        Type::Record(record) => object(
            out,
            || {
                record.fields().map(|field| {
                    let (docs, field_shape) = shape.and_then(|s| s.field(field.name)).unzip();
                    Property {
                        description: docs.flatten(),
                        ..Property::new(field.name, field.ty.clone(), field_shape)
                    }
                })
            },
            None,
            description,
            below,
        ),
        Type::Tuple(tuple) => {
            out.values(5)?;
            open(out, description, r#""type":"array","prefixItems":["#)?;
            for (n, ty) in tuple.types().enumerate() {
                if n > 0 {
                    out.push(",")?;
                }
                schema_at(&ty, shape.and_then(|s| s.item(n)), None, below, out)?;
            }
            let len = tuple.types().len();
            Ok(out.push(&format!(r#"],"minItems":{len},"maxItems":{len}}}"#))?)
        }
        Type::Variant(variant) => {
            out.values(2)?;
            open(out, description, r#""oneOf":["#)?;
            for (n, case) in variant.cases().enumerate() {
                if n > 0 {
                    out.push(",")?;
                }
                let (docs, payload) = shape.and_then(|s| s.case(case.name)).unzip();
                case_schema(
                    case.name,
                    case.ty.as_ref(),
                    payload.flatten(),
                    docs.flatten(),
                    below,
                    out,
                )?;
            }
            Ok(out.push("]}")?)
        }
        Type::Result(result) => {
            let (ok, err) = shape.and_then(|s| s.outcome()).unzip();
            out.values(2)?;
            open(out, description, r#""oneOf":["#)?;
            case_schema("ok", result.ok().as_ref(), ok.flatten(), None, below, out)?;
            out.push(",")?;
            case_schema("err", result.err().as_ref(), err.flatten(), None, below, out)?;
            Ok(out.push("]}")?)
        }
        Type::Enum(cases) => {
            out.values(3)?;
            open(out, description, r#""type":"string","enum":["#)?;
            names(out, cases.names())?;
            Ok(out.push("]}")?)
        }
        Type::Flags(flags) => {
            out.values(6)?;
            open(out, description, r#""type":"array","items":{"type":"string","enum":["#)?;
            names(out, flags.names())?;
            Ok(out.push(r#"]},"uniqueItems":true}"#)?)
        }
        Type::Option(option) => {
            out.values(4)?;
            open(out, description, r#""anyOf":["#)?;
            let some_shape = shape.and_then(|s| s.some());
            match option.ty() {
                // `{"some": v}`, so that `null` stays unambiguous.
                some @ Type::Option(_) => object(
                    out,
                    || std::iter::once(Property::new("some", some.clone(), some_shape)),
                    None,
                    None,
                    below,
                )?,
                some => schema_at(&some, some_shape, None, below, out)?,
            }
            Ok(out.push(r#",{"type":"null"}]}"#)?)
        }
        Type::Own(_) | Type::Borrow(_) => unsupported("it passes a resource handle, which cannot cross as JSON"),
        Type::Future(_) => unsupported("it passes a future, which cannot cross as JSON"),
        Type::Stream(_) => unsupported("it passes a stream, which cannot cross as JSON"),
        Type::ErrorContext => unsupported("it passes an error-context, which cannot cross as JSON"),
    }
}

/// A schema with no types below it: small and of fixed size (but for its
/// description).
fn leaf(out: &mut Text, schema: Value, description: Option<&str>) -> Result<(), Refusal> {
    out.values(values_in(&schema))?;
    let text = schema.to_string();
    // Every leaf schema is an object: its members follow the brace.
    Ok(open(out, description, &text[1..])?)
}

/// JSON values in `value`, as `schema_budget` counts them.
fn values_in(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(values_in).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(values_in).sum::<usize>(),
        _ => 1,
    }
}

/// Case or flag names as JSON strings, separated by commas: each one counted
/// at every use of its type.
fn names<'n>(out: &mut Text, names: impl Iterator<Item = &'n str>) -> Result<(), Refusal> {
    for (n, name) in names.enumerate() {
        out.values(1)?;
        if n > 0 {
            out.push(",")?;
        }
        out.json_string(name)?;
    }
    Ok(())
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

/// A variant-like case: `{"const": name}` without payload, `{name: payload}`
/// with one; the case's doc comment as its description.
fn case_schema(
    name: &str,
    payload: Option<&Type>,
    shape: Option<Shape<'_>>,
    description: Option<&str>,
    depth: usize,
    out: &mut Text,
) -> Result<(), Refusal> {
    match payload {
        None => {
            out.values(2)?;
            open(out, description, r#""const":"#)?;
            out.json_string(name)?;
            Ok(out.push("}")?)
        }
        Some(ty) => object(
            out,
            || {
                std::iter::once(Property {
                    required: true,
                    ..Property::new(name, ty.clone(), shape)
                })
            },
            None,
            description,
            depth,
        ),
    }
}

/// Writes `ty` as WIT spells it, for descriptions and `warden check`, when
/// the component's WIT (with type names) cannot be read: structures spelled
/// out, `…` past `MAX_DEPTH` levels. Each type and name is counted.
pub fn wit_name(ty: &Type, out: &mut Text) -> Result<(), OverBudget> {
    wit_name_at(ty, 0, out)
}

fn wit_name_at(ty: &Type, depth: usize, out: &mut Text) -> Result<(), OverBudget> {
    out.values(1)?;
    if depth > MAX_DEPTH {
        return out.push("…");
    }
    let below = depth + 1;
    let simple = match ty {
        Type::Bool => "bool",
        Type::U8 => "u8",
        Type::U16 => "u16",
        Type::U32 => "u32",
        Type::U64 => "u64",
        Type::S8 => "s8",
        Type::S16 => "s16",
        Type::S32 => "s32",
        Type::S64 => "s64",
        Type::Float32 => "f32",
        Type::Float64 => "f64",
        Type::Char => "char",
        Type::String => "string",
        Type::Own(_) => "own<resource>",
        Type::Borrow(_) => "borrow<resource>",
        Type::Future(_) => "future",
        Type::Stream(_) => "stream",
        Type::ErrorContext => "error-context",
        Type::List(list) => {
            out.push("list<")?;
            wit_name_at(&list.ty(), below, out)?;
            return out.push(">");
        }
        Type::FixedLengthList(list) => {
            out.push("list<")?;
            wit_name_at(&list.ty(), below, out)?;
            return out.push(&format!(", {}>", list.len()));
        }
        Type::Map(map) => {
            out.push("map<")?;
            wit_name_at(&map.key(), below, out)?;
            out.push(", ")?;
            wit_name_at(&map.value(), below, out)?;
            return out.push(">");
        }
        Type::Record(record) => {
            out.push("record { ")?;
            for (n, field) in record.fields().enumerate() {
                out.values(1)?;
                out.push(if n > 0 { ", " } else { "" })?;
                out.push(field.name)?;
                out.push(": ")?;
                wit_name_at(&field.ty, below, out)?;
            }
            return out.push(" }");
        }
        Type::Tuple(tuple) => {
            out.push("tuple<")?;
            for (n, ty) in tuple.types().enumerate() {
                out.push(if n > 0 { ", " } else { "" })?;
                wit_name_at(&ty, below, out)?;
            }
            return out.push(">");
        }
        Type::Variant(variant) => {
            out.push("variant { ")?;
            for (n, case) in variant.cases().enumerate() {
                out.values(1)?;
                out.push(if n > 0 { ", " } else { "" })?;
                out.push(case.name)?;
                if let Some(ty) = &case.ty {
                    out.push("(")?;
                    wit_name_at(ty, below, out)?;
                    out.push(")")?;
                }
            }
            return out.push(" }");
        }
        Type::Enum(cases) => return spelled_names(out, "enum { ", cases.names()),
        Type::Flags(flags) => return spelled_names(out, "flags { ", flags.names()),
        Type::Option(option) => {
            out.push("option<")?;
            wit_name_at(&option.ty(), below, out)?;
            return out.push(">");
        }
        Type::Result(result) => {
            let (ok, err) = (result.ok(), result.err());
            if ok.is_none() && err.is_none() {
                return out.push("result");
            }
            out.push("result<")?;
            match &ok {
                Some(ok) => wit_name_at(ok, below, out)?,
                None => out.push("_")?,
            }
            if let Some(err) = &err {
                out.push(", ")?;
                wit_name_at(err, below, out)?;
            }
            return out.push(">");
        }
    };
    out.push(simple)
}

fn spelled_names<'n>(out: &mut Text, opening: &str, names: impl Iterator<Item = &'n str>) -> Result<(), OverBudget> {
    out.push(opening)?;
    for (n, name) in names.enumerate() {
        out.values(1)?;
        out.push(if n > 0 { ", " } else { "" })?;
        out.push(name)?;
    }
    out.push(" }")
}
