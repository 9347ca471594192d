//! Converting JSON arguments into component values and results back, by
//! the encoding `schema.rs` describes. Arguments have already matched the
//! schema; what a schema cannot say (a base64 body, the values of a map with
//! non-string keys) is checked here, and an error names the path.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Number, Value};
use wasmtime::component::Val;
use wasmtime::component::types::Type;

use super::schema::{INFINITY, MAX_DEPTH, NAN, NEG_INFINITY};

/// Converts `value` (at `path`, for messages) into a value of type `ty`.
pub fn to_val(ty: &Type, value: &Value, path: &str) -> Result<Val, String> {
    to_val_at(ty, value, path, 0)
}

fn to_val_at(ty: &Type, value: &Value, path: &str, depth: usize) -> Result<Val, String> {
    if depth > MAX_DEPTH {
        return Err(format!("{path}: nested too deeply"));
    }
    let wrong = |expected: &str| Err(format!("{path}: expected {expected}, got {}", kind(value)));
    let inner = |ty: &Type, value: &Value, path: &str| to_val_at(ty, value, path, depth + 1);
    Ok(match ty {
        Type::Bool => match value {
            Value::Bool(b) => Val::Bool(*b),
            _ => return wrong("a boolean"),
        },
        Type::U8 => Val::U8(int(value, path)?),
        Type::U16 => Val::U16(int(value, path)?),
        Type::U32 => Val::U32(int(value, path)?),
        Type::U64 => Val::U64(int(value, path)?),
        Type::S8 => Val::S8(int(value, path)?),
        Type::S16 => Val::S16(int(value, path)?),
        Type::S32 => Val::S32(int(value, path)?),
        Type::S64 => Val::S64(int(value, path)?),
        Type::Float64 => Val::Float64(float(value, path)?),
        Type::Float32 => {
            let wide = float(value, path)?;
            let narrow = wide as f32;
            if wide.is_finite() && !narrow.is_finite() {
                return Err(format!("{path}: {wide} is out of range for f32"));
            }
            Val::Float32(narrow)
        }
        Type::Char => {
            let Value::String(text) = value else {
                return wrong("a one-character string");
            };
            let mut chars = text.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Val::Char(c),
                _ => return Err(format!("{path}: expected exactly one character, got {text:?}")),
            }
        }
        Type::String => match value {
            Value::String(text) => Val::String(text.clone()),
            _ => return wrong("a string"),
        },
        Type::List(list) => match (list.ty(), value) {
            (Type::U8, Value::String(text)) => {
                let bytes = BASE64
                    .decode(text)
                    .map_err(|e| format!("{path}: not valid base64 ({e})"))?;
                Val::List(bytes.into_iter().map(Val::U8).collect())
            }
            (Type::U8, _) => return wrong("a base64 string"),
            (element, Value::Array(items)) => Val::List(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| inner(&element, item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ),
            _ => return wrong("an array"),
        },
        Type::FixedLengthList(list) => {
            let Value::Array(items) = value else {
                return wrong("an array");
            };
            if items.len() != list.len() as usize {
                return Err(format!("{path}: expected {} items, got {}", list.len(), items.len()));
            }
            let element = list.ty();
            Val::FixedLengthList(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| inner(&element, item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Map(map) => {
            let (key_ty, value_ty) = (map.key(), map.value());
            let entries = match (&key_ty, value) {
                (Type::String, Value::Object(object)) => object
                    .iter()
                    .map(|(k, v)| Ok((Val::String(k.clone()), inner(&value_ty, v, &format!("{path}.{k}"))?)))
                    .collect::<Result<Vec<_>, String>>()?,
                (Type::String, _) => return wrong("an object"),
                (_, Value::Array(pairs)) => pairs
                    .iter()
                    .enumerate()
                    .map(|(i, pair)| match pair.as_array().map(Vec::as_slice) {
                        Some([k, v]) => Ok((
                            inner(&key_ty, k, &format!("{path}[{i}][0]"))?,
                            inner(&value_ty, v, &format!("{path}[{i}][1]"))?,
                        )),
                        _ => Err(format!("{path}[{i}]: expected a [key, value] pair")),
                    })
                    .collect::<Result<Vec<_>, String>>()?,
                _ => return wrong("an array of [key, value] pairs"),
            };
            Val::Map(entries)
        }
        Type::Record(record) => {
            let Value::Object(object) = value else {
                return wrong("an object");
            };
            let mut fields = Vec::with_capacity(record.fields().len());
            for field in record.fields() {
                let at = format!("{path}.{}", field.name);
                let val = match (object.get(field.name), &field.ty) {
                    (Some(v), ty) => inner(ty, v, &at)?,
                    (None, Type::Option(_)) => Val::Option(None),
                    (None, _) => return Err(format!("{at}: missing")),
                };
                fields.push((field.name.to_string(), val));
            }
            if let Some(extra) = object.keys().find(|k| !record.fields().any(|f| f.name == k.as_str())) {
                return Err(format!("{path}: unknown field {extra:?}"));
            }
            Val::Record(fields)
        }
        Type::Tuple(tuple) => {
            let Value::Array(items) = value else {
                return wrong("an array");
            };
            if items.len() != tuple.types().len() {
                return Err(format!(
                    "{path}: expected {} items, got {}",
                    tuple.types().len(),
                    items.len()
                ));
            }
            Val::Tuple(
                tuple
                    .types()
                    .zip(items)
                    .enumerate()
                    .map(|(i, (ty, item))| inner(&ty, item, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            )
        }
        Type::Variant(variant) => {
            let cases: Vec<(&str, Option<Type>)> = variant.cases().map(|c| (c.name, c.ty)).collect();
            let (name, payload) = case(&cases, value, path, depth)?;
            Val::Variant(name, payload)
        }
        Type::Result(result) => {
            let cases = [("ok", result.ok()), ("err", result.err())];
            let (name, payload) = case(&cases, value, path, depth)?;
            Val::Result(if name == "ok" { Ok(payload) } else { Err(payload) })
        }
        Type::Enum(cases) => {
            let Value::String(name) = value else {
                return wrong("a string");
            };
            if !cases.names().any(|c| c == name) {
                return Err(format!("{path}: unknown case {name:?}"));
            }
            Val::Enum(name.clone())
        }
        Type::Flags(flags) => {
            let Value::Array(items) = value else {
                return wrong("an array of flag names");
            };
            let mut set = Vec::with_capacity(items.len());
            for item in items {
                let Some(name) = item.as_str().filter(|n| flags.names().any(|f| f == *n)) else {
                    return Err(format!("{path}: unknown flag {item}"));
                };
                if !set.iter().any(|s| s == name) {
                    set.push(name.to_string());
                }
            }
            Val::Flags(set)
        }
        Type::Option(option) => match (option.ty(), value) {
            (_, Value::Null) => Val::Option(None),
            (some @ Type::Option(_), Value::Object(object)) if object.len() == 1 && object.contains_key("some") => {
                Val::Option(Some(Box::new(inner(&some, &object["some"], &format!("{path}.some"))?)))
            }
            (Type::Option(_), _) => return wrong("null or {\"some\": …}"),
            (some, value) => Val::Option(Some(Box::new(inner(&some, value, path)?))),
        },
        Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            return Err(format!("{path}: this type cannot cross as JSON"));
        }
    })
}

/// A variant-like value: `"case"` for a case without payload, `{"case": v}` for one with.
fn case(
    cases: &[(&str, Option<Type>)],
    value: &Value,
    path: &str,
    depth: usize,
) -> Result<(String, Option<Box<Val>>), String> {
    let (name, payload) = match value {
        Value::String(name) => (name.as_str(), None),
        Value::Object(object) if object.len() == 1 => {
            let (name, payload) = object.iter().next().expect("one entry");
            (name.as_str(), Some(payload))
        }
        _ => {
            return Err(format!(
                "{path}: expected a case name or an object with one case, got {}",
                kind(value)
            ));
        }
    };
    let Some((_, ty)) = cases.iter().find(|(case, _)| *case == name) else {
        return Err(format!("{path}: unknown case {name:?}"));
    };
    match (ty, payload) {
        (None, None) => Ok((name.to_string(), None)),
        (Some(ty), Some(payload)) => {
            let val = to_val_at(ty, payload, &format!("{path}.{name}"), depth + 1)?;
            Ok((name.to_string(), Some(Box::new(val))))
        }
        (None, Some(_)) => Err(format!(
            "{path}: case {name:?} takes no value; write it as the string {name:?}"
        )),
        (Some(_), None) => Err(format!("{path}: case {name:?} needs a value: {{{name:?}: …}}")),
    }
}

fn int<T: TryFrom<i64> + TryFrom<u64>>(value: &Value, path: &str) -> Result<T, String> {
    let Value::Number(number) = value else {
        return Err(format!("{path}: expected an integer, got {}", kind(value)));
    };
    let converted = match (number.as_u64(), number.as_i64(), number.as_f64()) {
        (Some(u), _, _) => T::try_from(u).ok(),
        (None, Some(i), _) => T::try_from(i).ok(),
        // JSON Schema counts 3.0 as an integer; so does Warden, in range.
        (None, None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e18 => T::try_from(f as i64).ok(),
        _ => return Err(format!("{path}: expected an integer, got {number}")),
    };
    converted.ok_or_else(|| format!("{path}: {number} is out of range"))
}

fn float(value: &Value, path: &str) -> Result<f64, String> {
    match value {
        Value::Number(number) => number
            .as_f64()
            .ok_or_else(|| format!("{path}: {number} is not a number")),
        Value::String(s) if s == NAN => Ok(f64::NAN),
        Value::String(s) if s == INFINITY => Ok(f64::INFINITY),
        Value::String(s) if s == NEG_INFINITY => Ok(f64::NEG_INFINITY),
        _ => Err(format!(
            "{path}: expected a number (or \"{NAN}\", \"{INFINITY}\", \"{NEG_INFINITY}\"), got {}",
            kind(value)
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Converts a value the component returned into JSON. `ty` is its declared
/// type (wasmtime has checked the value against it).
pub fn to_json(ty: &Type, val: &Val) -> Value {
    match (ty, val) {
        (_, Val::Bool(b)) => Value::Bool(*b),
        (_, Val::U8(n)) => (*n).into(),
        (_, Val::U16(n)) => (*n).into(),
        (_, Val::U32(n)) => (*n).into(),
        (_, Val::U64(n)) => (*n).into(),
        (_, Val::S8(n)) => (*n).into(),
        (_, Val::S16(n)) => (*n).into(),
        (_, Val::S32(n)) => (*n).into(),
        (_, Val::S64(n)) => (*n).into(),
        // The shortest decimal that reads back as the same f32, not the
        // f64 widening of it (0.1f32 is 0.1, not 0.10000000149011612).
        (_, Val::Float32(x)) => float_json(x.to_string().parse().unwrap_or(f64::from(*x)), x.is_nan()),
        (_, Val::Float64(x)) => float_json(*x, x.is_nan()),
        (_, Val::Char(c)) => Value::String(c.to_string()),
        (_, Val::String(s)) => Value::String(s.clone()),
        (Type::List(list), Val::List(items)) => match list.ty() {
            Type::U8 => {
                let bytes: Vec<u8> = items.iter().map(|v| if let Val::U8(b) = v { *b } else { 0 }).collect();
                Value::String(BASE64.encode(bytes))
            }
            element => Value::Array(items.iter().map(|v| to_json(&element, v)).collect()),
        },
        (Type::FixedLengthList(list), Val::FixedLengthList(items)) => {
            let element = list.ty();
            Value::Array(items.iter().map(|v| to_json(&element, v)).collect())
        }
        (Type::Map(map), Val::Map(entries)) => {
            let (key_ty, value_ty) = (map.key(), map.value());
            if matches!(key_ty, Type::String) {
                let mut object = Map::new();
                for (k, v) in entries {
                    if let Val::String(k) = k {
                        // Last value wins, as for the component model's maps.
                        object.insert(k.clone(), to_json(&value_ty, v));
                    }
                }
                Value::Object(object)
            } else {
                Value::Array(
                    entries
                        .iter()
                        .map(|(k, v)| Value::Array(vec![to_json(&key_ty, k), to_json(&value_ty, v)]))
                        .collect(),
                )
            }
        }
        (Type::Record(record), Val::Record(fields)) => Value::Object(
            record
                .fields()
                .zip(fields)
                .map(|(field, (name, v))| (name.clone(), to_json(&field.ty, v)))
                .collect(),
        ),
        (Type::Tuple(tuple), Val::Tuple(items)) => {
            Value::Array(tuple.types().zip(items).map(|(ty, v)| to_json(&ty, v)).collect())
        }
        (Type::Variant(variant), Val::Variant(name, payload)) => {
            let ty = variant.cases().find(|c| c.name == name).and_then(|c| c.ty);
            case_json(name, ty.as_ref(), payload.as_deref())
        }
        (Type::Result(result), Val::Result(outcome)) => match outcome {
            Ok(payload) => case_json("ok", result.ok().as_ref(), payload.as_deref()),
            Err(payload) => case_json("err", result.err().as_ref(), payload.as_deref()),
        },
        (_, Val::Enum(name)) => Value::String(name.clone()),
        (_, Val::Flags(names)) => Value::Array(names.iter().map(|n| Value::String(n.clone())).collect()),
        (Type::Option(_), Val::Option(None)) => Value::Null,
        (Type::Option(option), Val::Option(Some(value))) => {
            let some = option.ty();
            let json = to_json(&some, value);
            if matches!(some, Type::Option(_)) {
                Value::Object(Map::from_iter([("some".to_string(), json)]))
            } else {
                json
            }
        }
        // Resources, futures and streams are never exposed (see `schema`),
        // and wasmtime has type-checked the rest.
        _ => Value::Null,
    }
}

fn case_json(name: &str, ty: Option<&Type>, payload: Option<&Val>) -> Value {
    match (ty, payload) {
        (Some(ty), Some(payload)) => Value::Object(Map::from_iter([(name.to_string(), to_json(ty, payload))])),
        _ => Value::String(name.to_string()),
    }
}

fn float_json(x: f64, nan: bool) -> Value {
    if nan {
        return Value::String(NAN.into());
    }
    match Number::from_f64(x) {
        Some(number) => Value::Number(number),
        None if x > 0.0 => Value::String(INFINITY.into()),
        None => Value::String(NEG_INFINITY.into()),
    }
}
