//! Tool argument validation: a tool's input schema compiled as Warden does
//! when a plugin loads (`declarations::tools`), then arguments checked as
//! Warden does on each call (`declarations::violations`).
//!
//! Input: the schema on the first line, then one JSON instance per line.
//! Neither step may panic, and `violations` must agree with the validator's
//! own yes/no answer: no violations exactly when the instance is valid.

use serde_json::Value;
use warden_plugins::declarations;
use warden_runtime::contract::types::Tool;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (schema, instances) = text.split_once('\n').unwrap_or((text, ""));
    let declared = Tool {
        name: "fuzzed".into(),
        title: None,
        description: "a tool whose schema the fuzzer wrote".into(),
        input_schema: schema.into(),
        output_schema: None,
        annotations: None,
    };
    let Ok(mut tools) = declarations::tools(vec![declared], Vec::new()) else {
        return;
    };
    let tool = tools.pop().expect("one tool declared, one accepted");
    for line in instances.lines() {
        let Ok(instance) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let violations = declarations::violations(&tool.input, &instance);
        // Past the work budget an instance is refused unchecked.
        if violations.first().is_some_and(|v| v.contains("too large to check")) {
            continue;
        }
        assert_eq!(
            violations.is_empty(),
            tool.input.is_valid(&instance),
            "schema {schema} and instance {instance}: {violations:?}"
        );
    }
}
