//! Plain-component type derivation (`plain::discover`, as a plugin loads):
//! components whose exported functions have random WIT types — named types
//! built on earlier ones, structural types repeated many times, long names,
//! nesting past the depth bound — hand-encoded (`xtask::component`), then
//! compiled and derived as Warden does.
//!
//! Whatever the types, derivation must answer with tools or a refusal, never
//! a panic, and stay within the load budget (`plain::budget`): every text it
//! keeps (schema, description) within the bounds of one text, each schema
//! valid JSON with no more values than one schema may have, and all it keeps
//! together (names, texts, skipped functions' reasons) within the
//! component's budget.

use std::sync::OnceLock;

use arbitrary::{Result, Unstructured};
use serde_json::Value;
use warden_plugins::plain::budget::LoadBudget;
use warden_plugins::schema_budget::{MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES};
use wasmtime::Engine;
use wasmtime::component::Component;
use xtask::component::{Func, Named, Spec, Ty};

pub fn check(data: &[u8]) {
    let Ok(spec) = spec(&mut Unstructured::new(data)) else {
        return;
    };
    let bytes = xtask::component::encode(&spec);
    let engine = engine();
    // Types wasmparser refuses (too large an effective size, say) never reach Warden.
    let Ok(component) = Component::new(engine, &bytes) else {
        return;
    };
    let budget = LoadBudget::for_component(bytes.len()).max_bytes();
    let found = match warden_plugins::plain::discover(&component, engine, &bytes) {
        Ok(found) => found,
        Err(error) => {
            let message = format!("{error:#}");
            assert!(
                message.starts_with("function `") && message.contains("deriving the component's tools"),
                "{message}"
            );
            return;
        }
    };
    let mut kept = 0;
    for function in &found.functions {
        let tool = &function.declared;
        let texts = [Some(&tool.input_schema), tool.output_schema.as_ref()];
        for schema in texts.into_iter().flatten() {
            assert!(schema.len() <= MAX_SCHEMA_BYTES, "{} bytes", schema.len());
            let value: Value = serde_json::from_str(schema).expect("a derived schema is JSON");
            assert!(values(&value) <= MAX_SCHEMA_NODES, "{schema}");
            kept += schema.len();
        }
        assert!(tool.description.len() <= MAX_SCHEMA_BYTES);
        kept += tool.description.len() + 2 * tool.name.len() + function.export_name.len();
        kept += function.params.iter().map(|(name, _)| name.len()).sum::<usize>();
    }
    kept += found
        .skipped
        .iter()
        .map(|s| s.export_name.len() + s.reason.len())
        .sum::<usize>();
    assert!(kept <= budget, "kept {kept} bytes, budget {budget}");
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(Engine::default)
}

/// JSON values, as `schema_budget` counts them.
fn values(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(values).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(values).sum::<usize>(),
        _ => 1,
    }
}

/// A name unique by its index, sometimes long (up to 20 000 characters).
fn name(u: &mut Unstructured, prefix: &str, index: usize) -> Result<String> {
    let padding = match u.int_in_range(0..=9)? {
        0 => u.int_in_range(1..=20_000)?,
        1..=3 => u.int_in_range(1..=40)?,
        _ => 0,
    };
    let mut name = format!("{prefix}{index}");
    if padding > 0 {
        name.push('-');
        name.push_str(&"z".repeat(padding));
    }
    Ok(name)
}

/// A count, now and then large, so that one type is used many times.
fn count(u: &mut Unstructured, usual: usize, large: usize) -> Result<usize> {
    if u.ratio(1, 8)? {
        u.int_in_range(1..=large)
    } else {
        u.int_in_range(1..=usual)
    }
}

fn ty(u: &mut Unstructured, named: usize, depth: usize) -> Result<Ty> {
    // Mostly shallow; now and then deeper than the 16 levels Warden exposes.
    let leaf = depth >= 20 || (depth >= 4 && !u.ratio(1, 4)?);
    let choice = if leaf {
        u.int_in_range(0..=13)?
    } else {
        u.int_in_range(0..=17)?
    };
    Ok(match choice {
        0 => Ty::Bool,
        1 => Ty::U8,
        2 => Ty::U16,
        3 => Ty::U32,
        4 => Ty::U64,
        5 => Ty::S8,
        6 => Ty::S16,
        7 => Ty::S32,
        8 => Ty::S64,
        9 => Ty::F32,
        10 => Ty::F64,
        11 => Ty::Char,
        12 => Ty::String,
        13 if named > 0 => Ty::Named(u.int_in_range(0..=named - 1)?),
        13 => Ty::U8,
        14 => Ty::List(Box::new(ty(u, named, depth + 1)?)),
        15 => Ty::Option(Box::new(ty(u, named, depth + 1)?)),
        16 => {
            let ok = if u.arbitrary()? {
                Some(Box::new(ty(u, named, depth + 1)?))
            } else {
                None
            };
            let err = if u.arbitrary()? {
                Some(Box::new(ty(u, named, depth + 1)?))
            } else {
                None
            };
            Ty::Result(ok, err)
        }
        _ => {
            // One element type repeated, or a few different ones.
            let n = count(u, 4, 300)?;
            if u.arbitrary()? {
                Ty::Tuple(vec![ty(u, named, depth + 1)?; n])
            } else {
                Ty::Tuple((0..n.min(8)).map(|_| ty(u, named, depth + 1)).collect::<Result<_>>()?)
            }
        }
    })
}

fn spec(u: &mut Unstructured) -> Result<Spec> {
    let mut spec = Spec {
        // World-level exports, or one interface (which the WIT decoder reads too).
        interface: u.arbitrary::<bool>()?.then(|| "fuzz:types/api".to_string()),
        ..Spec::default()
    };
    for index in 0..u.int_in_range(0..=8)? {
        let named = match u.int_in_range(0..=3)? {
            0 => {
                let shared = ty(u, index, 1)?;
                let fields = (0..count(u, 6, 3_000)?)
                    .map(|n| {
                        Ok((
                            name(u, "a", n)?,
                            if u.ratio(3, 4)? {
                                shared.clone()
                            } else {
                                ty(u, index, 1)?
                            },
                        ))
                    })
                    .collect::<Result<_>>()?;
                Named::Record(fields)
            }
            1 => Named::Variant(
                (0..count(u, 6, 300)?)
                    .map(|n| {
                        Ok((
                            name(u, "c", n)?,
                            if u.arbitrary()? { Some(ty(u, index, 1)?) } else { None },
                        ))
                    })
                    .collect::<Result<_>>()?,
            ),
            2 => Named::Enum(
                (0..count(u, 10, 500)?)
                    .map(|n| name(u, "e", n))
                    .collect::<Result<_>>()?,
            ),
            _ => Named::Flags(
                (0..u.int_in_range(1..=32)?)
                    .map(|n| name(u, "g", n))
                    .collect::<Result<_>>()?,
            ),
        };
        spec.types.push((name(u, "t", index)?, named));
    }
    let named = spec.types.len();
    for index in 0..u.int_in_range(1..=12)? {
        let params = (0..u.int_in_range(0..=4)?)
            .map(|n| Ok((name(u, "p", n)?, ty(u, named, 0)?)))
            .collect::<Result<_>>()?;
        let result = if u.arbitrary()? { Some(ty(u, named, 0)?) } else { None };
        spec.functions.push(Func {
            name: name(u, "f", index)?,
            params,
            result,
            answer: None,
        });
    }
    Ok(spec)
}
