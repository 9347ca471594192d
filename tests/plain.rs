//! Plain components: components that export ordinary WIT functions instead of
//! `warden:plugin`, each function served as a tool with the JSON encoding of WIT
//! values Warden defines. Exact values through the real binary and a real client,
//! with the `plain-*` test plugins (each its own WIT package, as a third party writes it).

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

mod support;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Map, Value, json};
use support::attacks::audit_lines;
use support::{ERAS, Era, PluginDir, Server, is_error, serve, text};
use xtask::component::Spec;

/// Every tool `plain-types` serves: its world-level functions under their own names, the
/// `describe` function of its `counters` interface, and the over-long name shortened to
/// 55 characters, `_` and 8 hex digits of its SHA-256. Not the resource's constructor and
/// methods, nor `make-counter` and `peek` (they return or take the resource), nor
/// `wasi:cli/run`.
const PLAIN_TYPES_TOOLS: &[&str] = &[
    "a-function-whose-name-is-much-too-long-to-be-served-as-_ed70b402",
    "answer",
    "check-age",
    "checked-div",
    "counters_describe",
    "discard",
    "echo-bool",
    "echo-bytes",
    "echo-char",
    "echo-color",
    "echo-f32",
    "echo-f64",
    "echo-list",
    "echo-nested-option",
    "echo-option",
    "echo-permissions",
    "echo-person",
    "echo-points",
    "echo-results",
    "echo-s16",
    "echo-s32",
    "echo-s64",
    "echo-s8",
    "echo-shape",
    "echo-string",
    "echo-tuple",
    "echo-u16",
    "echo-u32",
    "echo-u64",
    "echo-u8",
    "greet",
    "require-even",
    "reverse-bytes",
    "shape-for",
    "signs",
];

/// `plain-docs`' tools: world-level functions by name, functions of the interfaces `math`
/// and `text` (of its package `example:plain-docs@1.2.3`) and `stats` (defined inline in
/// the world) as `<interface>_<function>`.
const PLAIN_DOCS_TOOLS: &[&str] = &[
    "add",
    "greet",
    "math_multiply",
    "math_negate",
    "repeat",
    "stats_count",
    "stats_mean",
    "text_center",
    "text_length",
    "text_pad",
    "text_reverse",
];

/// The documented functions of `plain-docs` (`tests/plugins/plain-docs/wit/world.wit`):
/// tool, doc comment, signature.
const PLAIN_DOCS_DOCUMENTED: &[(&str, &str, &str)] = &[
    (
        "greet",
        "Says hello to someone by name.",
        "greet(name: string) -> string",
    ),
    (
        "stats_mean",
        "The arithmetic mean of the values; NaN for none.",
        "mean(values: list<f64>) -> f64",
    ),
    (
        "math_multiply",
        "Multiplies two numbers.\nOverflow wraps around.",
        "multiply(a: s64, b: s64) -> s64",
    ),
    (
        "text_reverse",
        "The characters of the text in reverse order.",
        "reverse(text: string) -> string",
    ),
    (
        "text_length",
        "How many characters (Unicode scalar values) the text has.",
        "length(text: string) -> u32",
    ),
    (
        "text_pad",
        "Pads the text to at least a width.",
        "pad(text: string, how: padding) -> string",
    ),
    (
        "repeat",
        "Repeats a text a number of times.\n\
         @param text the text to repeat\n\
         @param {u32} times how many copies, at most\n\
         \x20   a thousand\n\
         @param text the first description of a parameter wins\n\
         @param count not a parameter of `repeat`\n\
         \x20   (nor is this line)",
        "repeat(text: string, times: u32, separator: option<string>) -> string",
    ),
    (
        "text_center",
        "Centres the text in a width, padding both sides.\n\
         \n\
         # Arguments\n\
         \n\
         * `text` - The text to centre.\n\
         * `how` - The width to reach and the fill;\n\
         \x20 its `side` is where an odd fill character goes.\n\
         * `width` - Not a parameter of `center`: ignored.\n\
         \n\
         # Returns\n\
         \n\
         * `text` - The centred text (not under `# Arguments`: ignored).",
        "center(text: string, how: padding) -> string",
    ),
];

/// `text_pad`'s input schema: `how` (a `padding` record) described by its type's doc
/// comment, `width` and `fill` by theirs, `side` (no doc comment of its own) by its enum
/// type's; `described` false for a component without docs, whose schema is the same
/// without descriptions.
fn text_pad_input(described: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "how": {
                "description": "How `pad` pads a text.",
                "type": "object",
                "properties": {
                    "width": {
                        "description": "The width to pad to, in characters.",
                        "type": "integer", "minimum": 0, "maximum": u32::MAX,
                    },
                    "side": {
                        "description": "Which end of the text the fill goes on.",
                        "type": "string", "enum": ["left", "right"],
                    },
                    "fill": {
                        "description": "The fill character; a space when absent.",
                        "anyOf": [{"type": "string", "minLength": 1, "maxLength": 1}, {"type": "null"}],
                    },
                },
                "required": ["width", "side"],
                "additionalProperties": false,
            },
        },
        "required": ["text", "how"],
        "additionalProperties": false,
    });
    if !described {
        let how = &mut schema["properties"]["how"];
        how.as_object_mut().unwrap().remove("description");
        for field in ["width", "side", "fill"] {
            how["properties"][field].as_object_mut().unwrap().remove("description");
        }
    }
    schema
}

/// `text_center`'s input schema: its doc comment's `# Arguments` describe `text` and
/// `how`, in place of `padding`'s doc comment (the record's fields keep theirs); the same
/// as `text_pad`'s without docs.
fn text_center_input(described: bool) -> Value {
    let mut schema = text_pad_input(described);
    if described {
        schema["properties"]["text"]["description"] = json!("The text to centre.");
        schema["properties"]["how"]["description"] =
            json!("The width to reach and the fill; its `side` is where an odd fill character goes.");
    }
    schema
}

/// `repeat`'s input schema: `text` and `times` described by their `@param` tags in its
/// doc comment (the first for `text`; `times` with its continuation line), `separator`
/// by nothing (no tag, and `option<string>` has no doc comment).
fn repeat_input(described: bool) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "text": {"description": "the text to repeat", "type": "string"},
            "times": {
                "description": "how many copies, at most a thousand",
                "type": "integer", "minimum": 0, "maximum": u32::MAX,
            },
            "separator": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["text", "times"],
        "additionalProperties": false,
    });
    if !described {
        for param in ["text", "times"] {
            schema["properties"][param]
                .as_object_mut()
                .unwrap()
                .remove("description");
        }
    }
    schema
}

/// The undocumented functions of `plain-docs`: tool, signature.
const PLAIN_DOCS_UNDOCUMENTED: &[(&str, &str)] = &[
    ("add", "add(a: s64, b: s64) -> s64"),
    ("math_negate", "negate(a: s64) -> s64"),
    ("stats_count", "count(values: list<f64>) -> u32"),
];

async fn tools(server: &Server) -> Vec<Tool> {
    let mut tools = server.client.list_all_tools().await.expect("tools/list works");
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|tool| tool.name.as_ref()).collect()
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", names(tools)))
}

fn description<'a>(tools: &'a [Tool], name: &str) -> &'a str {
    tool(tools, name)
        .description
        .as_deref()
        .unwrap_or_else(|| panic!("{name} has no description"))
}

/// The input schema of a tool, as JSON.
fn input(tools: &[Tool], name: &str) -> Value {
    Value::Object((*tool(tools, name).input_schema).clone())
}

fn output(tools: &[Tool], name: &str) -> Option<Value> {
    tool(tools, name)
        .output_schema
        .as_ref()
        .map(|schema| Value::Object((**schema).clone()))
}

/// `schema` with a local `$ref` (`#/...`) followed, within `root`, as often as it has one.
fn resolve<'a>(root: &'a Value, mut schema: &'a Value) -> &'a Value {
    for _ in 0..32 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            return schema;
        };
        let pointer = reference
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("a non-local $ref {reference}"));
        schema = root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("$ref {reference} points nowhere in {root}"));
    }
    panic!("a $ref cycle in {root}")
}

/// The (resolved) schema of parameter `param` in an input schema.
fn param<'a>(root: &'a Value, param: &str) -> &'a Value {
    let schema = root["properties"]
        .get(param)
        .unwrap_or_else(|| panic!("no parameter {param} in {root}"));
    resolve(root, schema)
}

/// The names in a schema's `required`, sorted.
fn required(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["required"]
        .as_array()
        .unwrap_or_else(|| panic!("no required array in {schema}"))
        .iter()
        .map(|name| name.as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// The keys of a schema's `properties`, sorted.
fn property_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {schema}"))
        .keys()
        .cloned()
        .collect();
    names.sort();
    names
}

/// Every value of `key` anywhere in `schema` (an integer's bounds may sit in an `anyOf`
/// beside the strings "NaN", "Infinity" and "-Infinity" of a float).
fn all_of_key<'a>(schema: &'a Value, key: &str, found: &mut Vec<&'a Value>) {
    match schema {
        Value::Object(map) => {
            for (k, v) in map {
                if k == key {
                    found.push(v);
                }
                all_of_key(v, key, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| all_of_key(item, key, found)),
        _ => {}
    }
}

fn has_key_value(schema: &Value, key: &str, value: &Value) -> bool {
    let mut found = Vec::new();
    all_of_key(schema, key, &mut found);
    found.contains(&value)
}

/// An integer parameter's schema: type integer and its exact bounds.
fn assert_integer(root: &Value, name: &str, minimum: Value, maximum: Value) {
    let schema = param(root, name);
    assert_eq!(schema["type"], "integer", "{root}");
    assert_eq!(schema["minimum"], minimum, "{root}");
    assert_eq!(schema["maximum"], maximum, "{root}");
}

/// The whole input schema of a tool: an object of its parameters, the non-option ones
/// required, nothing else allowed.
fn assert_object_of(root: &Value, properties: &[&str], required_names: &[&str]) {
    assert_eq!(root["type"], "object", "{root}");
    assert_eq!(root["additionalProperties"], false, "{root}");
    assert_eq!(property_names(root), properties, "{root}");
    assert_eq!(required(root), required_names, "{root}");
}

/// Calls `tool`, which must succeed with `structuredContent` = `{"result": v}`; returns `v`
/// after checking the text content is its JSON text. (For a value that is a JSON string —
/// a char, an enum case, "NaN" — the text may be the string itself or its JSON text: the
/// spec asks for the string as is only for a WIT `string`, see `string_result`.)
async fn value(server: &Server, tool: &str, arguments: Value) -> Value {
    let result = server.call(tool, arguments.clone()).await;
    assert!(!is_error(&result), "{tool} {arguments} failed: {result:?}");
    let structured = result
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("{tool} {arguments}: no structuredContent in {result:?}"));
    let keys: Vec<&String> = structured.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["result"], "{tool} {arguments}: {structured}");
    let value = structured["result"].clone();
    let text = text(&result);
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    // The text is the value itself when its JSON is a string, else its JSON text.
    match &value {
        Value::String(s) => assert_eq!(text, *s, "{tool} {arguments}: text for {value}"),
        _ => assert_eq!(parsed, Some(value.clone()), "{tool} {arguments}: text {text:?}"),
    }
    value
}

/// Calls `tool`, which returns a WIT `string`: the text content is the string itself.
async fn string_result(server: &Server, tool: &str, arguments: Value) -> String {
    let result = server.call(tool, arguments.clone()).await;
    assert!(!is_error(&result), "{tool} {arguments} failed: {result:?}");
    let text = text(&result);
    assert_eq!(
        result.structured_content,
        Some(json!({ "result": text })),
        "{tool} {arguments}"
    );
    text
}

/// Calls `tool`, which must fail; returns the error text.
async fn failure(server: &Server, tool: &str, arguments: Value) -> String {
    let result = server.call(tool, arguments.clone()).await;
    assert!(is_error(&result), "{tool} {arguments} should have failed: {result:?}");
    text(&result)
}

/// A result with nothing in it: a function that returns nothing (or `ok` of a
/// `result<_, E>`).
fn assert_empty(result: &CallToolResult, what: &str) {
    assert!(!is_error(result), "{what}: {result:?}");
    assert!(result.content.is_empty(), "{what}: {result:?}");
    assert_eq!(result.structured_content, None, "{what}");
}

/// The lines of a log that mention every one of `needles`.
fn lines_with<'a>(log: &'a str, needles: &[&str]) -> Vec<&'a str> {
    log.lines()
        .filter(|line| needles.iter().all(|needle| line.contains(needle)))
        .collect()
}

#[tokio::test]
async fn plain_types_tools_are_listed_with_their_schemas() {
    let dir = PluginDir::with(&["plain-types"]);
    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let tools = tools(&server).await;
        assert_eq!(names(&tools), PLAIN_TYPES_TOOLS, "{era:?}");

        // Without a doc comment the description is the signature, in WIT syntax.
        for (name, signature) in [
            ("echo-u64", "echo-u64(v: u64) -> u64"),
            ("answer", "answer() -> u32"),
            ("discard", "discard(v: string)"),
            ("checked-div", "checked-div(a: s32, b: s32) -> result<s32, string>"),
            (
                "echo-nested-option",
                "echo-nested-option(v: option<option<string>>) -> option<option<string>>",
            ),
            ("greet", "greet(name: string, greeting: option<string>) -> string"),
            // Named types by their WIT names, from the component's own type information.
            ("echo-person", "echo-person(p: person) -> person"),
            ("check-age", "check-age(age: s32) -> result<u8, age-error>"),
            ("echo-shape", "echo-shape(s: shape) -> shape"),
        ] {
            assert_eq!(description(&tools, name), signature, "{era:?}");
        }

        // Integers: exact bounds, u64 and s64 included.
        let integers = [
            ("echo-u8", json!(0), json!(255)),
            ("echo-u16", json!(0), json!(65535)),
            ("echo-u32", json!(0), json!(4294967295u32)),
            ("echo-u64", json!(0), json!(u64::MAX)),
            ("echo-s8", json!(-128), json!(127)),
            ("echo-s16", json!(-32768), json!(32767)),
            ("echo-s32", json!(i32::MIN), json!(i32::MAX)),
            ("echo-s64", json!(i64::MIN), json!(i64::MAX)),
        ];
        for (name, minimum, maximum) in integers {
            let schema = input(&tools, name);
            assert_object_of(&schema, &["v"], &["v"]);
            assert_integer(&schema, "v", minimum, maximum.clone());
            // The output schema wraps the same type in `result`.
            let out = output(&tools, name).unwrap_or_else(|| panic!("{name} has no outputSchema"));
            assert_eq!(out["type"], "object", "{out}");
            assert_eq!(out["required"], json!(["result"]), "{out}");
            assert_eq!(resolve(&out, &out["properties"]["result"])["maximum"], maximum, "{out}");
        }

        // f32 is bounded by its largest finite value, as Warden prints it (the
        // shortest form that reads back as f32::MAX), so every f32 result matches.
        let f32_schema = input(&tools, "echo-f32");
        let f32_max = json!(3.4028235e38);
        let f32_min = json!(-3.4028235e38);
        assert!(has_key_value(&f32_schema, "maximum", &f32_max), "{f32_schema}");
        assert!(has_key_value(&f32_schema, "minimum", &f32_min), "{f32_schema}");

        // list<u8> is a base64 string.
        let bytes = input(&tools, "echo-bytes");
        assert_eq!(param(&bytes, "b")["type"], "string", "{bytes}");
        assert_eq!(param(&bytes, "b")["contentEncoding"], "base64", "{bytes}");

        // Option parameters are not required; no parameters, an empty object.
        assert_object_of(&input(&tools, "greet"), &["greeting", "name"], &["name"]);
        assert_object_of(&input(&tools, "answer"), &[], &[]);
        assert_object_of(&input(&tools, "echo-option"), &["v"], &[]);

        // A record: its fields, option fields not required, no other keys; nested too.
        let person_tool = input(&tools, "echo-person");
        assert_object_of(&person_tool, &["p"], &["p"]);
        let person = param(&person_tool, "p");
        assert_eq!(person["type"], "object", "{person_tool}");
        assert_eq!(person["additionalProperties"], false, "{person_tool}");
        assert_eq!(
            property_names(person),
            ["age", "email", "home", "name", "tags"],
            "{person_tool}"
        );
        assert_eq!(required(person), ["age", "home", "name", "tags"], "{person_tool}");
        let home = resolve(&person_tool, &person["properties"]["home"]);
        assert_eq!(
            property_names(home),
            ["city", "location", "street", "zip"],
            "{person_tool}"
        );
        assert_eq!(required(home), ["city", "street"], "{person_tool}");
        assert_eq!(home["additionalProperties"], false, "{person_tool}");

        // An enum: its case names.
        let color = input(&tools, "echo-color");
        assert!(
            has_key_value(&color, "enum", &json!(["red", "green", "sky-blue"])),
            "{color}"
        );

        // Output schemas: a top-level result describes its ok type; nothing returned, none.
        let div = output(&tools, "checked-div").expect("checked-div has an outputSchema");
        assert_eq!(div["required"], json!(["result"]), "{div}");
        let div_result = resolve(&div, &div["properties"]["result"]);
        assert_eq!(
            (&div_result["type"], &div_result["maximum"]),
            (&json!("integer"), &json!(i32::MAX)),
            "{div}"
        );
        let age = output(&tools, "check-age").expect("check-age has an outputSchema");
        assert_eq!(resolve(&age, &age["properties"]["result"])["maximum"], 255, "{age}");
        assert_eq!(output(&tools, "discard"), None);
        assert_eq!(output(&tools, "require-even"), None, "ok has no payload");
        assert!(output(&tools, "echo-person").is_some());

        let log = server.stop().await;
        // One log line for each function that cannot be a tool, naming it and saying why
        // (the wording is the host's).
        for function in ["make-counter", "peek", "counter.get", "counter.increment"] {
            let lines = lines_with(&log, &[function]);
            assert_eq!(lines.len(), 1, "one log line names {function}:\n{log}");
            assert!(
                lines[0].contains("resource") || lines[0].contains("borrow"),
                "{function}: {}",
                lines[0]
            );
        }
    }
}

#[tokio::test]
async fn integers_and_floats_round_trip_exactly() {
    let dir = PluginDir::with(&["plain-types"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;

    // The extremes of u64 and s64 are exact JSON numbers, in the text too.
    let max = server.call("echo-u64", json!({"v": u64::MAX})).await;
    assert_eq!(text(&max), "18446744073709551615");
    assert_eq!(max.structured_content, Some(json!({"result": u64::MAX})));
    let min = server.call("echo-s64", json!({"v": i64::MIN})).await;
    assert_eq!(text(&min), "-9223372036854775808");
    assert_eq!(min.structured_content, Some(json!({"result": i64::MIN})));

    for (tool, values) in [
        ("echo-u8", vec![json!(0), json!(255)]),
        ("echo-u16", vec![json!(0), json!(65535)]),
        ("echo-u32", vec![json!(0), json!(u32::MAX)]),
        ("echo-u64", vec![json!(0), json!(1u64 << 53), json!((1u64 << 53) + 1)]),
        ("echo-s8", vec![json!(-128), json!(127)]),
        ("echo-s16", vec![json!(-32768), json!(32767)]),
        ("echo-s32", vec![json!(i32::MIN), json!(i32::MAX)]),
        ("echo-s64", vec![json!(i64::MAX), json!(-1), json!(-(1i64 << 53) - 1)]),
    ] {
        for v in values {
            assert_eq!(value(&server, tool, json!({ "v": v })).await, v, "{tool}");
        }
    }

    // Floats: finite values exact; NaN and the infinities as strings.
    for v in [
        json!(0.1),
        json!(-2.5),
        json!(1.7976931348623157e308),
        json!(5e-324),
        json!(0),
        json!("NaN"),
        json!("Infinity"),
        json!("-Infinity"),
    ] {
        let back = value(&server, "echo-f64", json!({ "v": v })).await;
        assert_eq!(back.as_f64(), v.as_f64(), "echo-f64 {v} gave {back}");
        if v.is_string() {
            assert_eq!(back, v);
        }
    }
    // f32 results in their shortest form: 0.1f32 is 0.1, not 0.10000000149011612.
    assert_eq!(value(&server, "echo-f32", json!({"v": 0.1})).await, json!(0.1));
    assert_eq!(value(&server, "echo-f32", json!({"v": -1.5})).await, json!(-1.5));
    // 2^24 + 1 has no f32: it rounds to 2^24.
    let rounded = value(&server, "echo-f32", json!({"v": 16777217})).await;
    assert_eq!(rounded.as_f64(), Some(16777216.0), "{rounded}");
    for special in ["NaN", "Infinity", "-Infinity"] {
        assert_eq!(value(&server, "echo-f32", json!({ "v": special })).await, special);
    }

    assert_eq!(value(&server, "echo-bool", json!({"v": true})).await, true);
    assert_eq!(value(&server, "echo-bool", json!({"v": false})).await, false);
    assert_eq!(value(&server, "answer", json!({})).await, 42);

    // The largest f32s, which the schema allows, come back in their shortest form.
    assert_eq!(
        value(&server, "echo-f32", json!({"v": 3.4028234663852886e38})).await,
        json!(3.4028235e38)
    );
    assert_eq!(
        value(&server, "echo-f32", json!({"v": -3.4028234663852886e38})).await,
        json!(-3.4028235e38)
    );
    server.stop().await;
}

#[tokio::test]
async fn strings_chars_and_bytes_round_trip() {
    let dir = PluginDir::with(&["plain-types"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;

    // A string's text content is the string itself, not its JSON text.
    for s in [
        "héllo 🌍",
        "",
        "a \"quoted\"\nline\tand \\ backslash",
        "{\"not\": \"json\"}",
        "42",
    ] {
        assert_eq!(string_result(&server, "echo-string", json!({ "s": s })).await, s);
    }
    assert_eq!(
        string_result(&server, "greet", json!({"name": "Ada"})).await,
        "Hello, Ada!"
    );
    assert_eq!(
        string_result(&server, "greet", json!({"name": "Ada", "greeting": null})).await,
        "Hello, Ada!"
    );
    assert_eq!(
        string_result(&server, "greet", json!({"name": "Ada", "greeting": "Grüß dich"})).await,
        "Grüß dich, Ada!"
    );
    assert_eq!(
        string_result(&server, "counters_describe", json!({})).await,
        "counters that cannot be served"
    );
    assert_eq!(
        string_result(
            &server,
            "a-function-whose-name-is-much-too-long-to-be-served-as-_ed70b402",
            json!({})
        )
        .await,
        "long"
    );

    for c in ["🌍", "é", "a", "\u{0}", "\""] {
        assert_eq!(value(&server, "echo-char", json!({ "c": c })).await, c);
    }

    // list<u8>: standard, padded base64.
    for b in ["", "aGVsbG8=", "AAEC/w==", "+/+/"] {
        assert_eq!(value(&server, "echo-bytes", json!({ "b": b })).await, b);
    }
    assert_eq!(
        value(&server, "reverse-bytes", json!({"b": "AAEC/w=="})).await,
        "/wIBAA==",
        "[0, 1, 2, 255] reversed"
    );
    server.stop().await;
}

/// `value` with every null-valued object key removed: whether a record's `none` field comes
/// back as `null` or is left out, the spec allows both.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

fn sorted_strings(value: &Value) -> Vec<String> {
    let mut items: Vec<String> = value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|item| item.as_str().unwrap().to_string())
        .collect();
    items.sort();
    items
}

#[tokio::test]
async fn compound_values_round_trip() {
    let dir = PluginDir::with(&["plain-types"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;

    // Lists.
    for v in [json!([]), json!([i32::MIN, 0, i32::MAX])] {
        assert_eq!(value(&server, "echo-list", json!({ "v": v })).await, v);
    }
    let points = json!([{"x": 1, "y": -1}, {"x": i32::MAX, "y": i32::MIN}]);
    assert_eq!(value(&server, "echo-points", json!({ "v": points })).await, points);

    // option<T>: null for none, the value for some; an option parameter may be left out.
    assert_eq!(value(&server, "echo-option", json!({"v": 7})).await, 7);
    assert_eq!(value(&server, "echo-option", json!({"v": 0})).await, 0);
    assert_eq!(value(&server, "echo-option", json!({"v": null})).await, Value::Null);
    assert_eq!(value(&server, "echo-option", json!({})).await, Value::Null);

    // option<option<T>>: some(x) is {"some": x}.
    for v in [
        json!(null),
        json!({"some": null}),
        json!({"some": "x"}),
        json!({"some": ""}),
    ] {
        assert_eq!(value(&server, "echo-nested-option", json!({ "v": v })).await, v);
    }
    assert_eq!(value(&server, "echo-nested-option", json!({})).await, Value::Null);

    // Records: nested, option fields left out or given.
    let minimal = json!({
        "name": "Ada",
        "age": 36,
        "home": {"street": "1 Main St", "city": "London"},
        "tags": [],
    });
    let back = value(&server, "echo-person", json!({ "p": minimal })).await;
    assert_eq!(without_nulls(back), minimal);
    let with_nulls = json!({
        "name": "Ada",
        "age": 36,
        "email": null,
        "home": {"street": "1 Main St", "city": "London", "zip": null, "location": null},
        "tags": [],
    });
    let back = value(&server, "echo-person", json!({ "p": with_nulls })).await;
    assert_eq!(without_nulls(back), minimal, "null is none too");
    let full = json!({
        "name": "Grace Hopper 🌍",
        "age": 255,
        "email": "grace@example.com",
        "home": {
            "street": "Rue de l'Été",
            "city": "Paris",
            "zip": "75001",
            "location": {"x": -3, "y": 4},
        },
        "tags": ["admiral", "cobol", ""],
    });
    assert_eq!(value(&server, "echo-person", json!({ "p": full })).await, full);

    // Tuples: fixed-length arrays.
    let tuple = json!(["héllo", u32::MAX, true]);
    assert_eq!(value(&server, "echo-tuple", json!({ "t": tuple })).await, tuple);

    // Variants: a case without payload is its name; with one, an object with one key.
    for s in [
        json!({"circle": 2.5}),
        json!({"rectangle": {"x": 1, "y": 2}}),
        json!("circle-unit"),
        json!("nothing"),
    ] {
        assert_eq!(value(&server, "echo-shape", json!({ "s": s })).await, s);
    }
    for (n, shape) in [
        (0, json!({"circle": 1.5})),
        (1, json!({"rectangle": {"x": 3, "y": -4}})),
        (2, json!("circle-unit")),
        (3, json!("nothing")),
        (u32::MAX, json!("nothing")),
    ] {
        assert_eq!(value(&server, "shape-for", json!({ "n": n })).await, shape, "{n}");
    }

    // Enums: the case name.
    for c in ["red", "green", "sky-blue"] {
        assert_eq!(value(&server, "echo-color", json!({ "c": c })).await, c);
    }

    // Flags: the names of the set flags, in any order.
    for p in [
        json!([]),
        json!(["read"]),
        json!(["execute-all", "write"]),
        json!(["read", "write", "execute-all"]),
    ] {
        let back = value(&server, "echo-permissions", json!({ "p": p })).await;
        assert_eq!(sorted_strings(&back), sorted_strings(&p), "{p}");
    }

    // A result inside a value: {"ok": v} / {"err": e}, or "ok" / "err" without payload.
    let results = json!([{"ok": 5}, {"err": "bad"}, {"ok": 0}, {"err": ""}]);
    assert_eq!(value(&server, "echo-results", json!({ "v": results })).await, results);
    assert_eq!(
        value(&server, "signs", json!({"v": [-1, 0, 3, i32::MIN]})).await,
        json!(["err", "ok", "ok", "err"])
    );
    server.stop().await;
}

#[tokio::test]
async fn top_level_results_and_functions_returning_nothing() {
    let dir = PluginDir::with(&["plain-types"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;

    // ok(v) is as if the function returned v.
    assert_eq!(value(&server, "checked-div", json!({"a": 7, "b": 2})).await, 3);
    assert_eq!(value(&server, "checked-div", json!({"a": -7, "b": 2})).await, -3);
    assert_eq!(value(&server, "check-age", json!({"age": 36})).await, 36);

    // err(e): isError, the text a string error as is.
    assert_eq!(
        failure(&server, "checked-div", json!({"a": 1, "b": 0})).await,
        "cannot divide 1 by 0"
    );
    assert_eq!(
        failure(&server, "checked-div", json!({"a": i32::MIN, "b": -1})).await,
        "cannot divide -2147483648 by -1"
    );
    // Any other error type: its JSON text.
    let error = failure(&server, "check-age", json!({"age": -1})).await;
    assert_eq!(
        serde_json::from_str::<Value>(&error).unwrap_or_else(|_| panic!("not JSON: {error:?}")),
        json!({"age": -1, "reason": "negative"})
    );
    let error = failure(&server, "check-age", json!({"age": 200})).await;
    assert_eq!(
        serde_json::from_str::<Value>(&error).unwrap_or_else(|_| panic!("not JSON: {error:?}")),
        json!({"age": 200, "reason": "too old"})
    );

    // result<_, string>: ok is as if the function returned nothing.
    let even = server.call("require-even", json!({"n": 4})).await;
    assert_empty(&even, "require-even 4");
    assert_eq!(failure(&server, "require-even", json!({"n": 3})).await, "3 is odd");

    // Nothing returned: empty content, no structuredContent.
    let discarded = server.call("discard", json!({"v": "gone"})).await;
    assert_empty(&discarded, "discard");
    server.stop().await;
}

#[tokio::test]
async fn arguments_that_do_not_match_are_refused_and_the_plugin_is_not_called() {
    let dir = PluginDir::with(&["plain-types"]);
    let audit = dir.path().join("audit.jsonl");
    let server = serve(
        dir.path(),
        Era::Handshake,
        &["--no-watch", "--audit-log", audit.to_str().unwrap()],
    )
    .await;
    let home = json!({"street": "1 Main St", "city": "London"});
    // (tool, arguments, a word the error must contain, or "" when any wording will do)
    let bad = [
        ("echo-bool", json!({"v": "true"}), "bool"),
        ("echo-bool", json!({"v": 1}), "bool"),
        ("echo-u8", json!({"v": 256}), "256"),
        ("echo-u8", json!({"v": -1}), "-1"),
        ("echo-s8", json!({"v": 128}), "128"),
        ("echo-s8", json!({"v": -129}), "-129"),
        ("echo-u32", json!({"v": 1.5}), "1.5"),
        ("echo-u32", json!({"v": "7"}), ""),
        // 2^64, one past the largest u64 (a JSON number a float holds exactly).
        ("echo-u64", json!({"v": 18446744073709551616.0}), ""),
        ("echo-u64", json!({"v": -1}), "-1"),
        ("echo-s64", json!({"v": 9223372036854775808u64}), ""),
        ("echo-f32", json!({"v": 1e39}), ""),
        ("echo-f64", json!({"v": "nan"}), "nan"),
        ("echo-f64", json!({"v": "1.5"}), ""),
        ("echo-char", json!({"c": "ab"}), "ab"),
        ("echo-char", json!({"c": ""}), ""),
        ("echo-char", json!({"c": "🏳️‍🌈"}), ""),
        ("echo-string", json!({"s": 5}), "string"),
        ("echo-string", json!({"s": null}), ""),
        ("echo-bytes", json!({"b": "not base64!"}), "base64"),
        ("echo-bytes", json!({"b": [1, 2, 3]}), ""),
        ("echo-list", json!({"v": [1, "2"]}), ""),
        ("echo-list", json!({"v": 1}), ""),
        ("echo-color", json!({"c": "purple"}), "purple"),
        ("echo-color", json!({"c": "Red"}), "Red"),
        ("echo-permissions", json!({"p": ["read", "fly"]}), "fly"),
        ("echo-permissions", json!({"p": ["read", "read"]}), ""),
        ("echo-permissions", json!({"p": "read"}), ""),
        (
            "echo-person",
            json!({"p": {"age": 3, "home": home, "tags": []}}),
            "name",
        ),
        (
            "echo-person",
            json!({"p": {"name": "Ada", "age": 3, "home": {"street": "x"}, "tags": []}}),
            "city",
        ),
        (
            "echo-person",
            json!({"p": {"name": "Ada", "age": 3, "home": home, "tags": [], "nickname": "A"}}),
            "nickname",
        ),
        (
            "echo-person",
            json!({"p": {"name": "Ada", "age": 300, "home": home, "tags": []}}),
            "300",
        ),
        ("echo-shape", json!({"s": "triangle"}), "triangle"),
        ("echo-shape", json!({"s": "circle"}), ""),
        ("echo-shape", json!({"s": {"circle": 1.0, "nothing": null}}), ""),
        ("echo-shape", json!({"s": {"circle-unit": 1.0}}), ""),
        ("echo-tuple", json!({"t": ["a", 1]}), ""),
        ("echo-tuple", json!({"t": ["a", 1, true, 2]}), ""),
        ("echo-nested-option", json!({"v": "x"}), ""),
        ("echo-results", json!({"v": [{"ok": 1, "err": "x"}]}), ""),
        ("echo-results", json!({"v": [{"ok": "1"}]}), ""),
        ("echo-u8", json!({}), ""),
        ("echo-u8", json!({"v": 1, "w": 2}), ""),
        ("greet", json!({"greeting": "Hi"}), "name"),
        ("checked-div", json!({"a": 1}), ""),
    ];
    for (tool, arguments, word) in &bad {
        let error = failure(&server, tool, arguments.clone()).await;
        assert!(!error.is_empty(), "{tool} {arguments}: an empty error");
        assert!(
            error.contains(word),
            "{tool} {arguments}: {error:?} does not name {word:?}"
        );
    }
    // Still serving.
    assert_eq!(value(&server, "echo-u8", json!({"v": 255})).await, 255);
    server.stop().await;

    // Each refused call is audited as rejected: the plugin never ran.
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), bad.len() + 1, "{lines:#?}");
    for ((tool, arguments, _), line) in bad.iter().zip(&lines) {
        assert_eq!(line["target"], *tool, "{line}");
        assert_eq!(line["outcome"], "rejected", "{tool} {arguments}: {line}");
        assert!(
            line.get("timing").is_none(),
            "{tool} {arguments} reached the plugin: {line}"
        );
    }
    assert_eq!(lines[bad.len()]["outcome"], "ok");
}

/// Calls the `plain-docs` tools with exact values.
async fn call_plain_docs(server: &Server) {
    assert_eq!(
        string_result(server, "greet", json!({"name": "Ada"})).await,
        "Hello, Ada!"
    );
    assert_eq!(value(server, "add", json!({"a": 2, "b": -5})).await, -3);
    assert_eq!(
        value(server, "add", json!({"a": i64::MAX, "b": 1})).await,
        json!(i64::MIN),
        "wraps"
    );
    assert_eq!(value(server, "math_multiply", json!({"a": 6, "b": -7})).await, -42);
    assert_eq!(value(server, "math_negate", json!({"a": i64::MAX})).await, -i64::MAX);
    assert_eq!(
        string_result(server, "text_reverse", json!({"text": "héllo 🌍"})).await,
        "🌍 olléh"
    );
    assert_eq!(value(server, "text_length", json!({"text": "héllo 🌍"})).await, 7);
    assert_eq!(
        string_result(
            server,
            "text_pad",
            json!({"text": "7", "how": {"width": 3, "side": "left", "fill": "0"}})
        )
        .await,
        "007"
    );
    assert_eq!(
        string_result(
            server,
            "text_pad",
            json!({"text": "ab", "how": {"width": 4, "side": "right"}})
        )
        .await,
        "ab  "
    );
    assert_eq!(
        value(server, "stats_mean", json!({"values": [1.5, 2.5, "Infinity"]})).await,
        "Infinity"
    );
    assert_eq!(value(server, "stats_mean", json!({"values": [1, 2.5]})).await, 1.75);
    assert_eq!(value(server, "stats_mean", json!({"values": []})).await, "NaN");
    assert_eq!(
        value(server, "stats_count", json!({"values": [0.5, "NaN", "-Infinity"]})).await,
        3
    );
    assert_eq!(
        string_result(server, "repeat", json!({"text": "ab", "times": 3, "separator": "-"})).await,
        "ab-ab-ab"
    );
    assert_eq!(
        string_result(server, "repeat", json!({"text": "x", "times": 2})).await,
        "xx"
    );
    assert_eq!(
        string_result(
            server,
            "text_center",
            json!({"text": "ab", "how": {"width": 5, "side": "left", "fill": "*"}})
        )
        .await,
        "**ab*"
    );
}

#[tokio::test]
async fn plain_docs_tools_are_named_by_interface_and_described_by_signature_without_docs() {
    // As cargo builds it: the component the Rust toolchain produces today (wit-bindgen
    // 0.61, wasm-component-ld) does not carry the WIT doc comments, so every function is
    // described by its signature.
    let dir = PluginDir::with(&["plain-docs"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let tools = tools(&server).await;
    assert_eq!(names(&tools), PLAIN_DOCS_TOOLS);
    for (name, signature) in PLAIN_DOCS_UNDOCUMENTED {
        assert_eq!(description(&tools, name), *signature);
    }
    for (name, _, signature) in PLAIN_DOCS_DOCUMENTED {
        assert_eq!(description(&tools, name), *signature, "{name}");
    }
    assert_object_of(&input(&tools, "add"), &["a", "b"], &["a", "b"]);
    assert_integer(&input(&tools, "add"), "a", json!(i64::MIN), json!(i64::MAX));
    assert_object_of(&input(&tools, "text_reverse"), &["text"], &["text"]);
    assert_eq!(input(&tools, "text_pad"), text_pad_input(false));
    assert_eq!(input(&tools, "text_center"), text_center_input(false));
    assert_eq!(input(&tools, "repeat"), repeat_input(false));
    assert!(output(&tools, "text_length").is_some());
    call_plain_docs(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn embedded_package_docs_become_the_descriptions() {
    // The same component with the doc comments of the WIT it was built from (written by
    // `warden_plugins::plain::docs::embed`): in a `package-docs` custom section, the form in
    // which the Bytecode Alliance tools keep WIT docs in a binary, for the component's own
    // package (world-level functions, interfaces defined inline), and in
    // `warden:package-docs` for the interfaces of its named package (`math`, `text`).
    let component = std::fs::read(support::guest("plain-docs")).unwrap();
    let wit = xtask::repo_root().join("tests/plugins/plain-docs/wit");
    let documented = warden_plugins::plain::docs::embed(&component, &wit, None).unwrap();
    let dir = PluginDir::new();
    dir.write("plain-docs.wasm", documented);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let tools = tools(&server).await;
    assert_eq!(names(&tools), PLAIN_DOCS_TOOLS);
    for (name, doc, _) in PLAIN_DOCS_DOCUMENTED {
        assert_eq!(description(&tools, name), *doc, "{name}");
    }
    for (name, signature) in PLAIN_DOCS_UNDOCUMENTED {
        assert_eq!(description(&tools, name), *signature, "{name}");
    }
    assert_eq!(input(&tools, "text_pad"), text_pad_input(true));
    call_plain_docs(&server).await;
    server.stop().await;
}

#[tokio::test]
async fn a_function_doc_comment_describes_its_parameters() {
    // WIT has no doc comments on parameters; authors describe them in the function's.
    // `repeat` (world level: the `package-docs` section) does with `@param` tags, and
    // `text_center` (interface `text` of the named package: `warden:package-docs`) under
    // a rustdoc `# Arguments` heading. Each parameter's property carries its own text,
    // `how`'s in place of its type's doc comment; the tool's description stays the whole
    // doc comment, tags and list included.
    let component = std::fs::read(support::guest("plain-docs")).unwrap();
    let wit = xtask::repo_root().join("tests/plugins/plain-docs/wit");
    let documented = warden_plugins::plain::docs::embed(&component, &wit, None).unwrap();
    let dir = PluginDir::new();
    dir.write("plain-docs.wasm", documented);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let tools = tools(&server).await;
    assert_eq!(input(&tools, "repeat"), repeat_input(true));
    assert_eq!(input(&tools, "text_center"), text_center_input(true));
    for name in ["repeat", "text_center"] {
        let (_, doc, _) = PLAIN_DOCS_DOCUMENTED.iter().find(|(tool, ..)| *tool == name).unwrap();
        assert_eq!(description(&tools, name), *doc);
    }
    // A function whose doc comment describes no parameter keeps its types' descriptions.
    assert_eq!(input(&tools, "text_pad"), text_pad_input(true));
    assert_eq!(
        string_result(&server, "repeat", json!({"text": "ab", "times": 2, "separator": ", "})).await,
        "ab, ab"
    );
    server.stop().await;
}

#[tokio::test]
async fn a_doc_comment_too_large_for_its_schema_skips_that_function_only() {
    // Hostile docs: the `padding` record's doc comment is 300 KiB, which `text_pad`'s
    // input schema would carry past the 256 KiB one derived text may take. The doc
    // comment is counted before it is copied, that one function is not served (the log
    // says why), and the other functions are, with their docs.
    let wit = tempfile::tempdir().unwrap();
    let source = std::fs::read_to_string(xtask::repo_root().join("tests/plugins/plain-docs/wit/world.wit")).unwrap();
    let huge = format!("/// {}\n    record padding {{", "x".repeat(300 << 10));
    let hostile = source.replace("/// How `pad` pads a text.\n    record padding {", &huge);
    assert_ne!(hostile, source);
    std::fs::write(wit.path().join("world.wit"), hostile).unwrap();
    let component = std::fs::read(support::guest("plain-docs")).unwrap();
    let documented = warden_plugins::plain::docs::embed(&component, wit.path(), None).unwrap();
    let dir = PluginDir::new();
    dir.write("plain-docs.wasm", documented);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let tools = tools(&server).await;
    let served: Vec<&str> = PLAIN_DOCS_TOOLS.iter().copied().filter(|t| *t != "text_pad").collect();
    assert_eq!(names(&tools), served);
    assert_eq!(
        description(&tools, "text_reverse"),
        "The characters of the text in reverse order."
    );
    let log = server.stop().await;
    let skipped = lines_with(&log, &["pad", "is not served as a tool", "input schema", "256 KiB"]);
    assert_eq!(skipped.len(), 1, "{log}");
}

#[tokio::test]
async fn a_malformed_warden_package_docs_section_leaves_the_signatures() {
    // `warden:package-docs` is read as best it can be: a section that is not its format
    // (here: an unknown version, then JSON naming an interface the package lacks) is
    // ignored, and the component is served, described by its signatures.
    let component = std::fs::read(support::guest("plain-docs")).unwrap();
    let bad: [&[u8]; 2] = [
        b"\x07{}",
        b"\x01{\"example:plain-docs@1.2.3\":{\"interfaces\":{\"missing\":{\"docs\":\"no\"}}}}",
    ];
    for data in bad {
        let name = b"warden:package-docs";
        let mut payload = vec![u8::try_from(name.len()).unwrap()];
        payload.extend_from_slice(name);
        payload.extend_from_slice(data);
        let mut with = component.clone();
        with.push(0);
        with.push(u8::try_from(payload.len()).unwrap());
        with.extend_from_slice(&payload);
        let dir = PluginDir::new();
        dir.write("plain-docs.wasm", with);
        let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
        let tools = tools(&server).await;
        assert_eq!(names(&tools), PLAIN_DOCS_TOOLS);
        for (name, _, signature) in PLAIN_DOCS_DOCUMENTED {
            assert_eq!(description(&tools, name), *signature, "{name}");
        }
        server.stop().await;
    }
}

#[tokio::test]
async fn config_values_come_from_the_manifest_and_nothing_else() {
    let dir = PluginDir::with(&["plain-config"]);
    dir.write(
        "plain-config.toml",
        "[config]\napi-base = \"https://example.com\"\nuser-agent = \"warden-test/1.0 (ünïcode)\"\n",
    );
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    assert_eq!(
        names(&tools(&server).await),
        ["all-settings", "get-setting", "print-setting"]
    );
    assert_eq!(
        value(&server, "get-setting", json!({"key": "api-base"})).await,
        "https://example.com"
    );
    assert_eq!(
        value(&server, "get-setting", json!({"key": "user-agent"})).await,
        "warden-test/1.0 (ünïcode)"
    );
    assert_eq!(
        value(&server, "get-setting", json!({"key": "missing"})).await,
        Value::Null
    );
    assert_eq!(
        value(&server, "all-settings", json!({})).await,
        json!([
            ["api-base", "https://example.com"],
            ["user-agent", "warden-test/1.0 (ünïcode)"]
        ])
    );
    server.stop().await;

    // Without a manifest the store is empty (and the host's environment is not in it).
    let bare = PluginDir::with(&["plain-config"]);
    let mut command = support::warden();
    command.env("api-base", "from-the-environment");
    let server = support::serve_command(
        command,
        bare.path(),
        Era::Handshake,
        &["--no-watch"],
        tempfile::NamedTempFile::new().unwrap(),
    )
    .await;
    assert_eq!(value(&server, "all-settings", json!({})).await, json!([]));
    assert_eq!(
        value(&server, "get-setting", json!({"key": "api-base"})).await,
        Value::Null
    );
    server.stop().await;
}

#[tokio::test]
async fn a_component_importing_anything_else_is_refused_naming_the_import() {
    let dir = PluginDir::with(&["plain-foreign", "plain-docs"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    // The others still serve.
    assert_eq!(names(&tools(&server).await), PLAIN_DOCS_TOOLS);
    assert_eq!(value(&server, "add", json!({"a": 1, "b": 2})).await, 3);
    let log = server.stop().await;
    let refusals = lines_with(&log, &["skipped plugin", "plain-foreign"]);
    assert_eq!(refusals.len(), 1, "plain-foreign is refused once:\n{log}");
    assert!(
        log.contains("acme:thing/gadget"),
        "the refusal names the import:\n{log}"
    );
}

#[tokio::test]
async fn check_lists_each_function_as_a_tool_or_skipped() {
    let dir = PluginDir::with(&["plain-types", "plain-foreign"]);
    let output = support::warden()
        .arg("check")
        .arg(dir.path().join("plain-types.wasm"))
        .output()
        .await
        .unwrap();
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{report}");
    for tool in PLAIN_TYPES_TOOLS {
        assert!(report.contains(tool), "{tool} is not in the report:\n{report}");
    }
    // With its schema: echo-u64's bound appears.
    assert!(report.contains("18446744073709551615"), "{report}");
    assert!(report.to_lowercase().contains("skipped"), "{report}");
    for skipped in ["make-counter", "peek"] {
        assert!(report.contains(skipped), "{skipped} is not in the report:\n{report}");
    }
    assert!(report.ends_with("1 plugin(s) valid, 0 invalid\n"), "{report}");

    let output = support::warden()
        .arg("check")
        .arg(dir.path().join("plain-foreign.wasm"))
        .output()
        .await
        .unwrap();
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(!output.status.success(), "{report}");
    assert!(report.contains("acme:thing/gadget"), "{report}");
    assert!(report.ends_with("0 plugin(s) valid, 1 invalid\n"), "{report}");
}

#[tokio::test]
async fn plain_component_answers_are_bounded_by_hostcall_fuel() {
    // `plain-greedy` lowers its answers by hand: `aliased(n)` is a `list<string>` of n items
    // that all point at the same MiB of its memory, so reading it would copy n MiB into
    // the host whatever the plugin's memory limit; `big-bytes(n)` is n bytes, each a
    // whole host value when read.
    let dir = PluginDir::with(&["plain-greedy"]);
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    assert_eq!(string_result(&server, "ping", json!({})).await, "pong");
    let before = support::status_kib(server.pid, "VmHWM");
    let refused = failure(&server, "aliased", json!({"count": 4000})).await;
    assert_eq!(
        refused,
        "plugin `plain-greedy` handed Warden more data than it reads in one go (64 MiB) while running \
         `aliased`, far beyond its output limit of 1 MiB; the operator can raise `[limits] output` in \
         plain-greedy.toml"
    );
    // 1 MiB a few times over the default output limit: read, then refused by the limit.
    let over = failure(&server, "aliased", json!({"count": 2})).await;
    assert!(over.contains("more than its output limit of 1 MiB"), "{over}");
    let bytes = failure(&server, "big-bytes", json!({"n": 4 << 20})).await;
    assert!(
        bytes.contains("handed Warden more data than it reads in one go (64 MiB)"),
        "{bytes}"
    );
    let grown = support::status_kib(server.pid, "VmHWM").saturating_sub(before);
    eprintln!("peak RSS grew by {grown} KiB (4 000 MiB of aliased strings without the bound)");
    assert!(grown < 400 << 10, "peak RSS grew by {grown} KiB");
    // Below the bound, bytes come back exactly, and the component still serves.
    assert_eq!(value(&server, "big-bytes", json!({"n": 3})).await, "BwcH");
    assert_eq!(string_result(&server, "ping", json!({})).await, "pong");
    server.stop().await;
}

#[tokio::test]
async fn plain_components_crash_and_time_out_like_any_plugin() {
    let dir = PluginDir::with(&["plain-greedy"]);
    dir.write("plain-greedy.toml", "[limits]\ntimeout = \"300ms\"\n");
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let crashed = failure(&server, "crash", json!({})).await;
    assert!(
        crashed.starts_with("plugin `plain-greedy` crashed while running `crash`: the plugin panicked"),
        "{crashed}"
    );
    assert!(crashed.contains("deliberate failure for the test"), "{crashed}");
    let spun = failure(&server, "spin", json!({})).await;
    assert!(
        spun.starts_with("plugin `plain-greedy` exceeded its 300ms time limit while running `spin`"),
        "{spun}"
    );
    assert_eq!(string_result(&server, "ping", json!({})).await, "pong");
    server.stop().await;
}

#[tokio::test]
async fn plain_components_reload_and_collide_like_any_plugin() {
    let dir = PluginDir::with(&["plain-docs"]);
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    assert_eq!(names(&tools(&server).await), PLAIN_DOCS_TOOLS);
    // The same file now holds another component: its functions replace the tools.
    dir.replace("plain-docs.wasm", std::fs::read(support::guest("plain-types")).unwrap());
    let seen = server.wait_for_list_change(0).await;
    assert_eq!(names(&tools(&server).await), PLAIN_TYPES_TOOLS);
    // A second plugin with a tool of the same name (`greet`) is refused whole.
    dir.add("plain-docs", "plain-docs-again");
    server.wait_for_log("plugin `plain-docs-again` is refused whole").await;
    assert_eq!(names(&tools(&server).await), PLAIN_TYPES_TOOLS);
    assert_eq!(server.list_changes(), seen, "a refused plugin changes nothing");
    call_plain_docs_absent(&server).await;
    server.stop().await;
}

/// `plain-docs`' own tools are not served while `plain-types` holds `greet`.
async fn call_plain_docs_absent(server: &Server) {
    let error = server.try_call("math_multiply", json!({"a": 1, "b": 2})).await;
    assert!(error.is_err(), "{error:?}");
    assert_eq!(
        string_result(server, "greet", json!({"name": "Ada"})).await,
        "Hello, Ada!"
    );
}

#[tokio::test]
async fn embed_docs_writes_the_doc_comments_and_replaces_earlier_ones() {
    let dir = PluginDir::new();
    let component = dir.path().join("plain-docs.wasm");
    std::fs::copy(support::guest("plain-docs"), &component).unwrap();
    let wit = xtask::repo_root().join("tests/plugins/plain-docs/wit");
    // Twice: the second run replaces the section the first wrote (a component may
    // carry only one).
    for _ in 0..2 {
        let out = support::warden()
            .arg("embed-docs")
            .arg(&component)
            .arg("--wit")
            .arg(&wit)
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("8 function(s) documented"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
    let server = serve(dir.path(), Era::Handshake, &["--no-watch"]).await;
    let tools = tools(&server).await;
    assert_eq!(description(&tools, "greet"), "Says hello to someone by name.");
    assert_eq!(
        description(&tools, "stats_mean"),
        "The arithmetic mean of the values; NaN for none."
    );
    assert_eq!(
        description(&tools, "math_multiply"),
        "Multiplies two numbers.\nOverflow wraps around."
    );
    assert_eq!(description(&tools, "add"), "add(a: s64, b: s64) -> s64");
    assert_eq!(description(&tools, "math_negate"), "negate(a: s64) -> s64");
    call_plain_docs(&server).await;
    server.stop().await;

    // A folder that is not the component's WIT: a clear error, the file untouched.
    let before = std::fs::read(&component).unwrap();
    let out = support::warden()
        .arg("embed-docs")
        .arg(&component)
        .arg("--wit")
        .arg(dir.path().join("missing"))
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot read the WIT in"), "{stderr}");
    assert_eq!(std::fs::read(&component).unwrap(), before);
}

/// A hand-encoded hostile component: `t0` is `record { a: u8 }` and each `tN` a record of
/// four `tN-1` fields, so `t8` names 4^8 = 65 536 records while the binary stays a few
/// hundred bytes (wasmparser refuses one more level: it bounds a type's effective size at
/// a million). `bomb(x: t8) -> u8`
/// must be skipped without expanding it all; `ok() -> u8` still serves.
fn type_bomb_component() -> Vec<u8> {
    use wasm_encoder::Alias;
    use wasm_encoder::{
        CanonicalFunctionSection, CanonicalOption, CodeSection, Component, ComponentAliasSection, ComponentExportKind,
        ComponentExportSection, ComponentTypeSection, ComponentValType, ExportKind, ExportSection, Function,
        FunctionSection, InstanceSection, Instruction, MemorySection, MemoryType, Module, ModuleSection,
        PrimitiveValType, TypeSection, ValType,
    };

    let mut module = Module::new();
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32; 4], [ValType::I32]); // realloc
    types.ty().function([ValType::I32], [ValType::I32]); // bomb: its argument by pointer
    types.ty().function([], [ValType::I32]); // ok
    module.section(&types);
    let mut functions = FunctionSection::new();
    functions.function(0).function(1).function(2);
    module.section(&functions);
    let mut memories = MemorySection::new();
    memories.memory(MemoryType {
        minimum: 1,
        maximum: Some(1),
        memory64: false,
        shared: false,
        page_size_log2: None,
    });
    module.section(&memories);
    let mut exports = ExportSection::new();
    exports
        .export("realloc", ExportKind::Func, 0)
        .export("bomb", ExportKind::Func, 1)
        .export("ok", ExportKind::Func, 2)
        .export("memory", ExportKind::Memory, 0);
    module.section(&exports);
    let mut code = CodeSection::new();
    for answer in [8, 0, 42] {
        let mut body = Function::new([]);
        body.instruction(&Instruction::I32Const(answer))
            .instruction(&Instruction::End);
        code.function(&body);
    }
    module.section(&code);

    let mut component = Component::new();
    component.section(&ModuleSection(&module));
    let mut instances = InstanceSection::new();
    instances.instantiate(0, Vec::<(&str, wasm_encoder::ModuleArg)>::new());
    component.section(&instances);

    // Each record type is exported (an exported function may only use named types), and
    // the next one refers to the export: type indices go definition, export, definition, ….
    let mut next_type = 0u32;
    let mut field = ComponentValType::Primitive(PrimitiveValType::U8);
    for level in 0..9 {
        let mut defined = ComponentTypeSection::new();
        let fields: Vec<(String, ComponentValType)> = if level == 0 {
            vec![("a".into(), field)]
        } else {
            ["a", "b", "c", "d"]
                .iter()
                .map(|name| (name.to_string(), field))
                .collect()
        };
        defined
            .defined_type()
            .record(fields.iter().map(|(name, ty)| (name.as_str(), *ty)));
        component.section(&defined);
        let mut export = ComponentExportSection::new();
        export.export(format!("t{level}"), ComponentExportKind::Type, next_type, None);
        component.section(&export);
        field = ComponentValType::Type(next_type + 1);
        next_type += 2;
    }
    let mut signatures = ComponentTypeSection::new();
    signatures
        .function()
        .params([("x", field)])
        .result(Some(ComponentValType::Primitive(PrimitiveValType::U8)));
    signatures
        .function()
        .params(Vec::<(&str, ComponentValType)>::new())
        .result(Some(ComponentValType::Primitive(PrimitiveValType::U8)));
    component.section(&signatures);
    let (bomb_type, ok_type) = (next_type, next_type + 1);

    let mut aliases = ComponentAliasSection::new();
    for (kind, name) in [
        (ExportKind::Func, "realloc"),
        (ExportKind::Func, "bomb"),
        (ExportKind::Func, "ok"),
        (ExportKind::Memory, "memory"),
    ] {
        aliases.alias(Alias::CoreInstanceExport {
            instance: 0,
            kind,
            name,
        });
    }
    component.section(&aliases);
    let mut canon = CanonicalFunctionSection::new();
    canon.lift(1, bomb_type, [CanonicalOption::Memory(0), CanonicalOption::Realloc(0)]);
    canon.lift(2, ok_type, []);
    component.section(&canon);
    let mut exports = ComponentExportSection::new();
    exports
        .export("bomb", ComponentExportKind::Func, 0, None)
        .export("ok", ComponentExportKind::Func, 1, None);
    component.section(&exports);
    component.finish()
}

#[tokio::test]
async fn types_that_expand_exponentially_are_refused_without_expanding_them() {
    let bytes = type_bomb_component();
    assert!(bytes.len() < 4096, "the bomb is small: {} bytes", bytes.len());
    let dir = PluginDir::new();
    dir.write("bomb.wasm", &bytes);

    let output = support::warden()
        .arg("check")
        .arg(dir.path().join("bomb.wasm"))
        .output()
        .await
        .unwrap();
    let report = String::from_utf8(output.stdout).unwrap();
    assert!(output.status.success(), "{report}");
    assert!(
        report.contains("bomb") && report.contains("its input schema would hold more than 20000 JSON values or types"),
        "bomb is skipped for its expansion:\n{report}"
    );

    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        assert_eq!(names(&tools(&server).await), ["ok"]);
        assert_eq!(value(&server, "ok", json!({})).await, 42);
        server.stop().await;
    }
}

/// Hostile plain components, a few KB each, whose types describe gigabytes of text when
/// written out at every use; each beside a function that must still serve (`good`, its
/// tool name), except the one refused whole. (file stem, spec, good tool, what the
/// refusal must say).
fn type_text_bombs() -> Vec<(&'static str, Spec, Option<&'static str>, Vec<&'static str>)> {
    use xtask::component::{Func, Named, Ty};
    let good = |name: &str| Func {
        name: name.into(),
        params: Vec::new(),
        result: Some(Ty::U8),
        answer: Some(42),
    };
    let bomb = |name: &str, params: Vec<(String, Ty)>| Func {
        name: name.into(),
        params,
        result: None,
        answer: None,
    };
    let kebab = |prefix: &str, length: usize| format!("{prefix}{}", "a".repeat(length - prefix.len()));
    // An enum with a 5 000-character name in a tuple of 40 tuples of 100: its schema is
    // small, but its WIT signature (the description) names it 4 000 times, 20 MB.
    let long_enum = Named::Enum(vec!["a".into()]);
    let tuples = Ty::Tuple(vec![Ty::Tuple(vec![Ty::Named(0); 100]); 40]);
    // In an exported interface, as toolchains write one, so that the WIT decoder reads it
    // and the signature names the type.
    let enum_tuples = Spec {
        types: vec![(kebab("e-", 5_000), long_enum)],
        functions: vec![bomb("tuple-bomb", vec![("x".into(), tuples)]), good("tuple-ok")],
        interface: Some("test:bombs/api".into()),
    };
    // A record of 9 000 fields of one 200-case enum: the schema copies the 200 names
    // 9 000 times (the 20 000-type bound counted it as 9 001 types).
    let cases: Vec<String> = (0..200).map(|n| format!("case-number-{n}")).collect();
    let fields: Vec<(String, Ty)> = (0..9_000).map(|n| (format!("f{n}"), Ty::Named(0))).collect();
    let enum_record = Spec {
        types: vec![
            ("choice".into(), Named::Enum(cases.clone())),
            ("wide".into(), Named::Record(fields)),
        ],
        functions: vec![bomb("record-bomb", vec![("r".into(), Ty::Named(1))]), good("record-ok")],
        interface: None,
    };
    // 60 functions, each taking a record of 70 such enums: about 190 KB of schema each,
    // under the 256 KiB one schema may take, 11 MB together.
    let fields: Vec<(String, Ty)> = (0..70).map(|n| (format!("f{n}"), Ty::Named(0))).collect();
    let many = Spec {
        types: vec![
            ("choice".into(), Named::Enum(cases)),
            ("medium".into(), Named::Record(fields)),
        ],
        functions: (0..60)
            .map(|n| bomb(&format!("part{n:02}"), vec![("r".into(), Ty::Named(1))]))
            .collect(),
        interface: None,
    };
    // A variant whose 8 cases have names of 90 000 characters (a name may have 100 000),
    // in a list of tuples of 50: 36 MB of schema from a component of 720 KB.
    let variant = Named::Variant((0..8).map(|n| (kebab(&format!("c{n}-"), 90_000), None)).collect());
    let long_variant = Spec {
        types: vec![("long".into(), variant)],
        functions: vec![
            bomb(
                "variant-bomb",
                vec![("v".into(), Ty::List(Box::new(Ty::Tuple(vec![Ty::Named(0); 50]))))],
            ),
            good("variant-ok"),
        ],
        interface: None,
    };
    vec![
        (
            "enum-tuples",
            enum_tuples,
            Some("api_tuple-ok"),
            vec![
                "tuple-bomb",
                "its description would take more than 256 KiB",
                "MAX_SCHEMA_BYTES",
            ],
        ),
        (
            "enum-record",
            enum_record,
            Some("record-ok"),
            vec!["record-bomb", "its input schema would", "more than"],
        ),
        (
            "many-functions",
            many,
            None,
            vec![
                "function `part",
                "deriving the component's tools would write more than 1048576 bytes",
                "its load budget",
            ],
        ),
        (
            "long-variant",
            long_variant,
            Some("variant-ok"),
            vec!["variant-bomb", "its input schema would take more than 256 KiB"],
        ),
    ]
}

/// Runs `warden check FILE` and waits for it with `wait4`, whose resource usage is that
/// child's alone: its report (stdout), whether it passed, its peak RSS in MiB, how long it took.
// `wait4` reaps the child, which `Child::wait` would not let us measure.
#[allow(clippy::zombie_processes)]
fn check_with_peak(file: &std::path::Path) -> (String, bool, u64, std::time::Duration) {
    use std::io::Read as _;
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_warden"))
        .env(
            "XDG_CACHE_HOME",
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("warden-test-cache"),
        )
        .arg("check")
        .arg(file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut report = String::new();
        stdout.read_to_string(&mut report).unwrap();
        report
    });
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: an all-zero `rusage` is valid, and `wait4` writes only into the two out-parameters.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4 failed");
    let passed = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // ru_maxrss is in KiB on Linux.
    let peak_mib = usage.ru_maxrss as u64 / 1024;
    (reader.join().unwrap(), passed, peak_mib, started.elapsed())
}

/// The most `warden check` may take on a bomb: far above its ordinary ~60 MiB, far below
/// the gigabytes the bombs made it take before the load budget.
const CHECK_PEAK_BOUND_MIB: u64 = 200;

#[tokio::test]
async fn type_text_bombs_are_refused_by_warden_check_quickly_in_little_memory() {
    let dir = PluginDir::new();
    for (stem, spec, good, expected) in type_text_bombs() {
        let bytes = xtask::component::encode(&spec);
        let file = dir.path().join(format!("{stem}.wasm"));
        std::fs::write(&file, &bytes).unwrap();
        let (report, passed, peak, took) = tokio::task::spawn_blocking(move || check_with_peak(&file))
            .await
            .unwrap();
        eprintln!(
            "{stem}: {} bytes, `warden check` peak RSS {peak} MiB in {took:?}",
            bytes.len()
        );
        for needle in &expected {
            assert!(report.contains(needle), "{stem}: {needle:?} not in:\n{report}");
        }
        match good {
            // The bomb is skipped; the good function still serves.
            Some(good) => {
                assert!(passed, "{stem}:\n{report}");
                assert!(report.contains(&format!("→ tool `{good}`")), "{stem}:\n{report}");
                assert!(report.contains("1 function(s) served as tools, 1 skipped"), "{report}");
            }
            None => {
                assert!(!passed && report.contains("✗"), "{stem}:\n{report}");
                // `warden inspect` loads the same way, and says the same.
                let inspected = support::warden()
                    .arg("inspect")
                    .arg(dir.path().join(format!("{stem}.wasm")))
                    .output()
                    .await
                    .unwrap();
                let shown = String::from_utf8_lossy(&inspected.stdout);
                assert_eq!(inspected.status.code(), Some(2), "{shown}");
                for needle in &expected {
                    assert!(shown.contains(needle), "inspect {stem}: {needle:?} not in:\n{shown}");
                }
            }
        }
        assert!(peak < CHECK_PEAK_BOUND_MIB, "{stem}: peak RSS {peak} MiB");
        assert!(took < std::time::Duration::from_secs(60), "{stem}: {took:?}, a hang");
    }
}

#[tokio::test]
async fn type_text_bombs_dropped_into_a_running_server_leave_it_small_and_serving() {
    let dir = PluginDir::with(&["text"]);
    let server = serve(dir.path(), Era::Handshake, &[]).await;
    support::attacks::healthy(&server).await;
    let before = support::status_kib(server.pid, "VmHWM");
    let mut changes = server.list_changes();
    for (stem, spec, good, expected) in type_text_bombs() {
        dir.replace(&format!("{stem}.wasm"), xtask::component::encode(&spec));
        match good {
            Some(good) => {
                changes = server.wait_for_list_change(changes).await;
                server
                    .wait_until(&format!("the line skipping {}", expected[0]), || {
                        let log = server.log();
                        (!lines_with(&log, &[expected[0], "is not served as a tool"]).is_empty()).then_some(())
                    })
                    .await;
                assert_eq!(value(&server, good, json!({})).await, 42);
                let log = server.log();
                let line = lines_with(&log, &[stem, "is not served as a tool"]);
                assert!(
                    line.iter().any(|l| expected.iter().all(|n| l.contains(n))),
                    "{stem}: {expected:?} not in {line:?}"
                );
            }
            None => {
                server
                    .wait_for_log(&format!("skipped plugin {}", dir.path().join(stem).display()))
                    .await;
                let log = server.log();
                let line = lines_with(&log, &["skipped plugin", stem]);
                assert!(
                    line.iter().any(|l| expected.iter().all(|n| l.contains(n))),
                    "{stem}: {expected:?} not in {line:?}"
                );
            }
        }
        support::attacks::healthy(&server).await;
    }
    let grown = support::status_kib(server.pid, "VmHWM").saturating_sub(before);
    eprintln!("peak RSS grew by {} MiB loading the bombs", grown >> 10);
    assert!(grown < 200 << 10, "peak RSS grew by {grown} KiB");
    let mut served = names(&tools(&server).await)
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
    served.sort();
    assert_eq!(
        served,
        [
            "api_tuple-ok",
            "change_case",
            "record-ok",
            "slugify",
            "text_stats",
            "variant-ok"
        ]
    );
    server.stop().await;
}

/// Not a test: writes the bombs into `$WARDEN_BOMBS_DIR`, to measure another `warden`
/// (an older one, say) on them by hand.
/// `WARDEN_BOMBS_DIR=/tmp/bombs cargo test --test plain -- --ignored write_type_text_bombs`.
#[test]
#[ignore]
fn write_type_text_bombs() {
    let dir = std::path::PathBuf::from(std::env::var("WARDEN_BOMBS_DIR").expect("WARDEN_BOMBS_DIR"));
    std::fs::create_dir_all(&dir).unwrap();
    for (stem, spec, ..) in type_text_bombs() {
        std::fs::write(dir.join(format!("{stem}.wasm")), xtask::component::encode(&spec)).unwrap();
    }
}

#[tokio::test]
async fn the_manifest_describes_and_titles_a_tool_in_place_of_its_signature() {
    // `math_negate` is described only by its signature (its function has no doc comment);
    // the operator says what it does, and gives `add` a title.
    let dir = PluginDir::with(&["plain-docs"]);
    dir.write(
        "plain-docs.toml",
        "[tools.math_negate]\ndescription = \"Negates a whole number: 5 becomes -5.\"\n\n\
         [tools.add]\ntitle = \"Add two numbers\"\n",
    );
    for era in ERAS {
        let server = serve(dir.path(), era, &["--no-watch"]).await;
        let tools = tools(&server).await;
        assert_eq!(
            description(&tools, "math_negate"),
            "Negates a whole number: 5 becomes -5."
        );
        assert_eq!(tool(&tools, "add").title.as_deref(), Some("Add two numbers"));
        assert_eq!(description(&tools, "add"), "add(a: s64, b: s64) -> s64");
        assert_eq!(value(&server, "math_negate", json!({"a": 5})).await, -5);
        server.stop().await;
    }
    let checked = support::warden()
        .arg("check")
        .arg(dir.path().join("plain-docs.wasm"))
        .output()
        .await
        .unwrap();
    let report = String::from_utf8_lossy(&checked.stdout);
    for line in [
        "    described  Negates a whole number: 5 becomes -5. (the manifest's [tools.math_negate])",
        "    title      Add two numbers (the manifest's [tools.add])",
    ] {
        assert!(report.contains(line), "{line:?} in:\n{report}");
    }

    // A name that is no tool of the plugin refuses it, naming the key and the tools.
    dir.write("plain-docs.toml", "[tools.negate]\ndescription = \"Negates.\"\n");
    let refused = support::warden()
        .arg("check")
        .arg(dir.path().join("plain-docs.wasm"))
        .output()
        .await
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(!refused.status.success(), "{said}");
    assert!(
        said.contains("`tools.negate` names no tool of this plugin") && said.contains("math_negate"),
        "{said}"
    );
}
