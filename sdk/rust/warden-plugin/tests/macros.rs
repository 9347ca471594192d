//! The macros, expanded and called on the host: what a plugin written with them lists and
//! answers, through the same entry points the component exports.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use warden_plugin::bindings::exports::warden::plugin::{completions, prompts, resources, tools};
use warden_plugin::{
    CallResult, Content, ElicitAction, ElicitAnswer, Elicited, Error, Input, InputAnswer, InputAnswers, InputRequest,
    InputRequired, Json, KeyedAnswer, PromptReply, ReadReply, Reference, Refused, ResourceBody, ResourceContents, Role,
    SamplingAnswer, SamplingRequest, TaskSupport, ToolReply, prompt, resource, tool,
};

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
#[tool(name = "count-letters", task = "optional")]
fn count(args: GreetArgs) -> Result<Json<Count>, String> {
    if args.name.is_empty() {
        return Err("the name is empty".into());
    }
    Ok(Json(Count {
        count: args.name.chars().count(),
    }))
}

/// Always says the arguments are wrong.
#[tool(task = "forbidden")]
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

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DropArgs {
    /// What to drop.
    what: String,
}

/// Drops something, after asking.
#[tool(destructive)]
fn drop_it(input: &mut Input, args: DropArgs) -> Result<String, Error> {
    match input.confirm("confirm", &format!("Drop {}?", args.what))? {
        Ok(true) => Ok(format!("Dropped {}.", args.what)),
        Ok(false) => Ok(format!("Kept {}.", args.what)),
        Err(Refused(why)) => Ok(format!("Kept {}: could not ask ({why}).", args.what)),
    }
}

/// Asks for a name and a poem in two rounds, keeping a counter in the state.
#[tool]
fn poem(input: &mut warden_plugin::Input) -> Result<String, String> {
    let round = input.state().first().copied().unwrap_or(0) + 1;
    input.set_state(vec![round]);
    #[derive(Deserialize, JsonSchema)]
    struct Who {
        /// Your name.
        name: String,
    }
    let name = match input.elicit::<Who>("who", "Who is it for?")?? {
        Elicited::Accepted(who) => who.name,
        Elicited::Declined | Elicited::Cancelled => return Ok("No poem, then.".into()),
    };
    let request = SamplingRequest::new(50).user(format!("A poem for {name}"));
    let poem = input.sample("poem", request)??;
    Ok(format!(
        "{} (round {round}, {})",
        poem.text.unwrap_or_default(),
        poem.model
    ))
}

/// Asks two things in one round.
#[tool]
fn both(input: &mut Input) -> Result<String, Error> {
    let first = input.confirm("first", "First?");
    let roots = input.roots("roots");
    let (first, roots) = (first?, roots?);
    Ok(format!("{:?} {}", first, roots.map(|r| r.len()).unwrap_or_default()))
}

/// Asks nothing though it could.
#[tool]
fn idle(_input: &mut Input) -> &'static str {
    "idle"
}

#[derive(Deserialize, JsonSchema)]
struct SecretParams {
    id: u32,
}

/// A secret, shown only when confirmed.
#[resource(template = "mem://secret/{id}")]
fn secret(params: SecretParams, input: &mut Input) -> Result<String, Error> {
    match input.confirm("show", "Show the secret?")?? {
        true => Ok(format!("secret {}", params.id)),
        false => Err(Error::Failed("not shown".into())),
    }
}

/// The roots, as a resource.
#[resource(uri = "mem://roots")]
fn roots(input: &mut Input) -> Result<String, Error> {
    let roots = input.roots("roots")??;
    Ok(roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join("\n"))
}

/// Asks the user for the topic.
#[prompt]
fn ask_topic(input: &mut Input) -> Result<String, Error> {
    #[derive(Deserialize, JsonSchema)]
    struct Topic {
        topic: String,
    }
    match input.elicit::<Topic>("topic", "Which topic?")?? {
        Elicited::Accepted(t) => Ok(format!("Explain {}", t.topic)),
        _ => Err(Error::Failed("no topic".into())),
    }
}

warden_plugin::export! {
    tools: [greet, count, refuse, drop_it, poem, both, idle],
    resources: [readme, item, secret, roots],
    prompts: [explain, ask_topic],
    completions: complete,
}

type Plugin = __WardenExport;

fn call(name: &str, arguments: Value) -> Result<CallResult, Error> {
    match <Plugin as tools::Guest>::call_tool(name.into(), arguments.to_string(), None)? {
        ToolReply::Done(result) => Ok(result),
        ToolReply::InputRequired(_) => panic!("{name} asked for input"),
    }
}

fn read(uri: &str) -> Result<Vec<ResourceContents>, Error> {
    match <Plugin as resources::Guest>::read_resource(uri.into(), None)? {
        ReadReply::Done(contents) => Ok(contents),
        ReadReply::InputRequired(_) => panic!("{uri} asked for input"),
    }
}

fn answers(required: InputRequired, answers: Vec<(&str, InputAnswer)>) -> Option<InputAnswers> {
    Some(InputAnswers {
        answers: answers
            .into_iter()
            .map(|(key, answer)| KeyedAnswer {
                key: key.into(),
                answer,
            })
            .collect(),
        state: required.state,
    })
}

fn accept(content: Value) -> InputAnswer {
    InputAnswer::Elicit(ElicitAnswer {
        action: ElicitAction::Accept,
        content: Some(content.to_string()),
    })
}

fn keys(required: &InputRequired) -> Vec<&str> {
    required.requests.iter().map(|r| r.key.as_str()).collect()
}

fn tool_round(name: &str, arguments: &Value, input: Option<InputAnswers>) -> ToolReply {
    <Plugin as tools::Guest>::call_tool(name.into(), arguments.to_string(), input).unwrap()
}

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
    assert_eq!(
        names,
        ["greet", "count-letters", "refuse", "drop_it", "poem", "both", "idle"]
    );
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
fn task_support_is_listed_for_the_tools_that_declare_it() {
    let listed: Vec<(String, TaskSupport)> = <Plugin as tools::Guest>::list_tool_execution()
        .into_iter()
        .map(|e| (e.tool, e.task_support))
        .collect();
    assert_eq!(
        listed,
        [
            ("count-letters".to_string(), TaskSupport::Optional),
            ("refuse".to_string(), TaskSupport::Forbidden)
        ]
    );
}

#[test]
fn calls_reach_the_functions_and_errors_become_is_error_or_contract_errors() {
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
    assert_eq!(listed.len(), 2);
    assert_eq!(listed[0].uri, "mem://readme");
    assert_eq!(listed[0].name, "readme");
    assert_eq!(listed[0].size, Some(14));
    assert_eq!(listed[0].description.as_deref(), Some("The readme."));
    let templates = <Plugin as resources::Guest>::list_resource_templates();
    assert_eq!(templates[0].uri_template, "mem://items/{id}");
    assert_eq!(templates[0].name, "item");

    let readme = read("mem://readme").unwrap();
    assert!(matches!(&readme[0].body, ResourceBody::Text(t) if t == "hello resource"));
    assert_eq!(readme[0].mime_type.as_deref(), Some("text/plain"));
    let item = read("mem://items/42").unwrap();
    assert_eq!(item[0].uri, "mem://items/42");
    assert!(matches!(&item[0].body, ResourceBody::Text(t) if t == "item 42"));
    assert!(matches!(
        read("mem://items/7"),
        Err(Error::NotFound(m)) if m == "no item 7"
    ));
    assert!(matches!(read("mem://other"), Err(Error::NotFound(_))));

    let prompts = <Plugin as prompts::Guest>::list_prompts();
    assert_eq!(prompts[0].name, "explain");
    let arguments: Vec<(&str, bool)> = prompts[0]
        .arguments
        .iter()
        .map(|a| (a.name.as_str(), a.required))
        .collect();
    assert_eq!(arguments, [("topic", true), ("depth", false)]);
    let got = <Plugin as prompts::Guest>::get_prompt("explain".into(), vec![("topic".into(), "wasm".into())], None);
    let Ok(PromptReply::Done(got)) = got else {
        panic!("not done")
    };
    assert_eq!(got.description.as_deref(), Some("Asks for an explanation."));
    assert!(matches!(got.messages[0].role, Role::User));
    assert!(matches!(&got.messages[0].content, Content::Text(t) if t == "Explain wasm (briefly)"));
    assert!(matches!(
        <Plugin as prompts::Guest>::get_prompt("explain".into(), vec![], None),
        Err(Error::InvalidArguments(_))
    ));

    let values =
        <Plugin as completions::Guest>::complete(Reference::Prompt("explain".into()), "topic".into(), "w".into());
    assert_eq!(values, ["wasm"]);
}

#[test]
fn a_confirmation_takes_two_rounds() {
    let arguments = json!({"what": "the table"});
    let ToolReply::InputRequired(required) = tool_round("drop_it", &arguments, None) else {
        panic!("did not ask")
    };
    assert_eq!(keys(&required), ["confirm"]);
    let InputRequest::ElicitForm(form) = &required.requests[0].request else {
        panic!("not a form")
    };
    assert_eq!(form.message, "Drop the table?");
    let schema: Value = serde_json::from_str(&form.requested_schema).unwrap();
    assert_eq!(schema["properties"]["confirm"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["confirm"]));

    let confirmed = answers(required.clone(), vec![("confirm", accept(json!({"confirm": true})))]);
    let ToolReply::Done(done) = tool_round("drop_it", &arguments, confirmed) else {
        panic!("asked again")
    };
    assert_eq!(text(&done.content), ["Dropped the table."]);

    let declined = InputAnswer::Elicit(ElicitAnswer {
        action: ElicitAction::Decline,
        content: None,
    });
    let ToolReply::Done(kept) = tool_round(
        "drop_it",
        &arguments,
        answers(required.clone(), vec![("confirm", declined)]),
    ) else {
        panic!("asked again")
    };
    assert_eq!(text(&kept.content), ["Kept the table."]);

    let refused = answers(required, vec![("confirm", InputAnswer::Refused("not granted".into()))]);
    let ToolReply::Done(refused) = tool_round("drop_it", &arguments, refused) else {
        panic!("asked again")
    };
    assert_eq!(text(&refused.content), ["Kept the table: could not ask (not granted)."]);
    assert!(!refused.is_error);
}

#[test]
fn answers_and_state_last_across_rounds() {
    let none = json!({});
    let ToolReply::InputRequired(first) = tool_round("poem", &none, None) else {
        panic!("did not ask")
    };
    assert_eq!(keys(&first), ["who"]);
    let ToolReply::InputRequired(second) = tool_round(
        "poem",
        &none,
        answers(first, vec![("who", accept(json!({"name": "Ada"})))]),
    ) else {
        panic!("did not ask")
    };
    assert_eq!(keys(&second), ["poem"]);
    let InputRequest::Sample(request) = &second.requests[0].request else {
        panic!("not sampling")
    };
    assert_eq!(request.max_tokens, 50);
    assert!(matches!(&request.messages[0].content, Content::Text(t) if t == "A poem for Ada"));
    // Only the poem is answered in round 3: the name comes from the state.
    let sampled = InputAnswer::Sample(SamplingAnswer {
        role: Role::Assistant,
        content: json!({"type": "text", "text": "Roses"}).to_string(),
        text: Some("Roses".into()),
        model: "m1".into(),
        stop_reason: Some("endTurn".into()),
    });
    let ToolReply::Done(done) = tool_round("poem", &none, answers(second, vec![("poem", sampled)])) else {
        panic!("asked again")
    };
    assert_eq!(text(&done.content), ["Roses (round 3, m1)"]);

    // A refused sampling request is an isError result with the reason (`??` on a Refused).
    let ToolReply::InputRequired(first) = tool_round("poem", &none, None) else {
        panic!()
    };
    let ToolReply::InputRequired(second) = tool_round(
        "poem",
        &none,
        answers(first, vec![("who", accept(json!({"name": "Ada"})))]),
    ) else {
        panic!()
    };
    let refused = answers(second, vec![("poem", InputAnswer::Refused("no sampling".into()))]);
    let ToolReply::Done(failed) = tool_round("poem", &none, refused) else {
        panic!()
    };
    assert!(failed.is_error);
    assert_eq!(text(&failed.content), ["refused: no sampling"]);
}

#[test]
fn several_requests_in_one_round_and_tools_that_never_ask() {
    let none = json!({});
    let ToolReply::InputRequired(required) = tool_round("both", &none, None) else {
        panic!()
    };
    assert_eq!(keys(&required), ["first", "roots"]);
    assert!(matches!(required.requests[1].request, InputRequest::ListRoots));
    let given = answers(
        required,
        vec![
            ("roots", InputAnswer::Roots(vec![])),
            ("first", accept(json!({"confirm": true}))),
            ("unasked", InputAnswer::Refused("ignored".into())),
        ],
    );
    let ToolReply::Done(done) = tool_round("both", &none, given) else {
        panic!()
    };
    assert_eq!(text(&done.content), ["Ok(true) 0"]);
    assert!(matches!(tool_round("idle", &none, None), ToolReply::Done(r) if text(&r.content) == ["idle"]));
    // An ordinary tool ignores any answers it is given.
    let ToolReply::Done(greeted) = tool_round(
        "greet",
        &json!({"name": "Ada"}),
        Some(InputAnswers {
            answers: vec![],
            state: vec![1, 2],
        }),
    ) else {
        panic!()
    };
    assert_eq!(text(&greeted.content), ["Hello, Ada!"]);
}

#[test]
fn reads_and_prompts_ask_too() {
    let ReadReply::InputRequired(required) =
        <Plugin as resources::Guest>::read_resource("mem://secret/7".into(), None).unwrap()
    else {
        panic!()
    };
    assert_eq!(keys(&required), ["show"]);
    let shown = answers(required.clone(), vec![("show", accept(json!({"confirm": true})))]);
    let ReadReply::Done(contents) =
        <Plugin as resources::Guest>::read_resource("mem://secret/7".into(), shown).unwrap()
    else {
        panic!()
    };
    assert!(matches!(&contents[0].body, ResourceBody::Text(t) if t == "secret 7"));
    let hidden = answers(required, vec![("show", accept(json!({"confirm": false})))]);
    assert!(matches!(
        <Plugin as resources::Guest>::read_resource("mem://secret/7".into(), hidden),
        Err(Error::Failed(m)) if m == "not shown"
    ));
    assert!(matches!(
        <Plugin as resources::Guest>::read_resource("mem://roots".into(), None),
        Ok(ReadReply::InputRequired(r)) if keys(&r) == ["roots"]
    ));

    let PromptReply::InputRequired(required) =
        <Plugin as prompts::Guest>::get_prompt("ask_topic".into(), vec![], None).unwrap()
    else {
        panic!()
    };
    let topic = answers(required, vec![("topic", accept(json!({"topic": "wasm"})))]);
    let PromptReply::Done(got) = <Plugin as prompts::Guest>::get_prompt("ask_topic".into(), vec![], topic).unwrap()
    else {
        panic!()
    };
    assert!(matches!(&got.messages[0].content, Content::Text(t) if t == "Explain wasm"));
}
