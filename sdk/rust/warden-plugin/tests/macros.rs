//! The macros, expanded and called on the host: what a plugin written with them lists and
//! answers, through the same entry points the component exports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use warden_plugin::bindings::exports::warden::plugin::{completions, prompts, resources, tools};
use warden_plugin::{Content, Error, Json, Reference, ResourceBody, Role, prompt, resource, tool};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    /// Who to greet.
    name: String,
    /// How many times.
    #[schemars(range(min = 1, max = 3))]
    times: Option<u8>,
}

/// Greets someone
/// by name.
///
/// Second paragraph.
#[tool(title = "Greet", read_only, destructive = false)]
fn greet(args: GreetArgs) -> String {
    vec![format!("Hello, {}!", args.name); args.times.unwrap_or(1) as usize].join(" ")
}

#[derive(Serialize, JsonSchema)]
struct Count {
    /// How many.
    count: usize,
}

/// Counts the letters of a word, refusing empty ones.
#[tool(name = "count-letters")]
fn count(args: GreetArgs) -> Result<Json<Count>, String> {
    if args.name.is_empty() {
        return Err("the name is empty".into());
    }
    Ok(Json(Count {
        count: args.name.chars().count(),
    }))
}

/// Always says the arguments are wrong.
#[tool]
fn refuse() -> Result<String, Error> {
    Err(Error::InvalidArguments("never".into()))
}

const README: &str = "mem://readme";

/// The readme.
#[resource(uri = README, title = "Readme", mime_type = "text/plain", size)]
fn readme() -> &'static str {
    "hello resource"
}

#[derive(Deserialize, JsonSchema)]
struct ItemParams {
    id: u32,
}

/// One item.
#[resource(template = "mem://items/{id}", name = "item")]
fn item(params: ItemParams) -> Result<String, Error> {
    match params.id {
        42 => Ok("item 42".into()),
        id => Err(Error::NotFound(format!("no item {id}"))),
    }
}

#[derive(Deserialize, JsonSchema)]
struct ExplainArgs {
    /// The topic.
    topic: String,
    /// How deep.
    depth: Option<String>,
}

/// Asks for an explanation.
#[prompt(title = "Explain")]
fn explain(args: ExplainArgs) -> String {
    format!(
        "Explain {} ({})",
        args.topic,
        args.depth.as_deref().unwrap_or("briefly")
    )
}

fn complete(reference: &Reference, argument: &str, value: &str) -> Vec<String> {
    match reference {
        Reference::Prompt(name) if name == "explain" && argument == "topic" => ["rust", "wasm"]
            .iter()
            .filter(|t| t.starts_with(value))
            .map(|t| t.to_string())
            .collect(),
        _ => Vec::new(),
    }
}

warden_plugin::export! {
    tools: [greet, count, refuse],
    resources: [readme, item],
    prompts: [explain],
    completions: complete,
}

type Plugin = __WardenExport;

fn text(content: &[Content]) -> Vec<&str> {
    content
        .iter()
        .map(|c| match c {
            Content::Text(t) => t.as_str(),
            _ => panic!("not text"),
        })
        .collect()
}

#[test]
fn tools_are_listed_with_their_doc_comments_schemas_and_annotations() {
    let listed = <Plugin as tools::Guest>::list_tools();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["greet", "count-letters", "refuse"]);
    let greet = &listed[0];
    assert_eq!(greet.description, "Greets someone by name.\n\nSecond paragraph.");
    assert_eq!(greet.title.as_deref(), Some("Greet"));
    let schema: Value = serde_json::from_str(&greet.input_schema).unwrap();
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Who to greet."},
                "times": {"type": "integer", "minimum": 1, "maximum": 3, "description": "How many times."}
            },
            "required": ["name"],
            "additionalProperties": false
        })
    );
    assert_eq!(greet.output_schema, None);
    let annotations = greet.annotations.as_ref().unwrap();
    assert_eq!(annotations.title.as_deref(), Some("Greet"));
    assert_eq!(annotations.read_only_hint, Some(true));
    assert_eq!(annotations.destructive_hint, Some(false));
    assert_eq!(annotations.idempotent_hint, None);

    let count = &listed[1];
    assert!(count.annotations.is_none() && count.title.is_none());
    let output: Value = serde_json::from_str(count.output_schema.as_deref().unwrap()).unwrap();
    assert_eq!(output["type"], "object");
    assert_eq!(output["required"], json!(["count"]));
    let empty: Value = serde_json::from_str(&listed[2].input_schema).unwrap();
    assert_eq!(
        empty,
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

#[test]
fn calls_reach_the_functions_and_errors_become_is_error_or_contract_errors() {
    let call = |name: &str, arguments: Value| <Plugin as tools::Guest>::call_tool(name.into(), arguments.to_string());
    let greeted = call("greet", json!({"name": "Ada", "times": 2})).unwrap();
    assert_eq!(text(&greeted.content), ["Hello, Ada! Hello, Ada!"]);
    assert!(!greeted.is_error && greeted.structured_content.is_none());

    let counted = call("count-letters", json!({"name": "Ada"})).unwrap();
    assert_eq!(counted.structured_content.as_deref(), Some(r#"{"count":3}"#));
    assert_eq!(text(&counted.content), [r#"{"count":3}"#]);
    let empty = call("count-letters", json!({"name": ""})).unwrap();
    assert!(empty.is_error);
    assert_eq!(text(&empty.content), ["the name is empty"]);

    assert!(matches!(call("refuse", json!({})), Err(Error::InvalidArguments(m)) if m == "never"));
    assert!(matches!(
        call("greet", json!({"nom": "Ada"})),
        Err(Error::InvalidArguments(_))
    ));
    assert!(matches!(call("nope", json!({})), Err(Error::NotFound(_))));
}

#[test]
fn resources_templates_prompts_and_completions() {
    let listed = <Plugin as resources::Guest>::list_resources();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].uri, "mem://readme");
    assert_eq!(listed[0].name, "readme");
    assert_eq!(listed[0].size, Some(14));
    assert_eq!(listed[0].description.as_deref(), Some("The readme."));
    let templates = <Plugin as resources::Guest>::list_resource_templates();
    assert_eq!(templates[0].uri_template, "mem://items/{id}");
    assert_eq!(templates[0].name, "item");

    let read = <Plugin as resources::Guest>::read_resource("mem://readme".into()).unwrap();
    assert!(matches!(&read[0].body, ResourceBody::Text(t) if t == "hello resource"));
    assert_eq!(read[0].mime_type.as_deref(), Some("text/plain"));
    let item = <Plugin as resources::Guest>::read_resource("mem://items/42".into()).unwrap();
    assert_eq!(item[0].uri, "mem://items/42");
    assert!(matches!(&item[0].body, ResourceBody::Text(t) if t == "item 42"));
    assert!(matches!(
        <Plugin as resources::Guest>::read_resource("mem://items/7".into()),
        Err(Error::NotFound(m)) if m == "no item 7"
    ));
    assert!(matches!(
        <Plugin as resources::Guest>::read_resource("mem://other".into()),
        Err(Error::NotFound(_))
    ));

    let prompts = <Plugin as prompts::Guest>::list_prompts();
    assert_eq!(prompts[0].name, "explain");
    let arguments: Vec<(&str, bool)> = prompts[0]
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("topic", true), ("depth", false)]);
    let got = <Plugin as prompts::Guest>::get_prompt("explain".into(), vec![("topic".into(), "wasm".into())]).unwrap();
    assert_eq!(got.description.as_deref(), Some("Asks for an explanation."));
    assert!(matches!(got.messages[0].role, Role::User));
    assert!(matches!(&got.messages[0].content, Content::Text(t) if t == "Explain wasm (briefly)"));
    assert!(matches!(
        <Plugin as prompts::Guest>::get_prompt("explain".into(), vec![]),
        Err(Error::InvalidArguments(_))
    ));

    let values =
        <Plugin as completions::Guest>::complete(Reference::Prompt("explain".into()), "topic".into(), "w".into());
    assert_eq!(values, ["wasm"]);
}
