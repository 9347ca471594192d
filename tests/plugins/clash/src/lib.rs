//! Declares one thing the `full` plugin also declares, chosen by the `CLASH`
//! environment variable its manifest sets: `resource` (`mem://readme`),
//! `template` (`mem://items/{id}`) or `prompt` (`greet`) — or claims URIs
//! `full` serves without repeating its declaration: `under-template` (the
//! resource `mem://items/7`), `template-over-resource` (`mem://{name}`,
//! which matches `mem://readme`), `overlapping-template` (`mem://{kind}/{id}`).
//! Anything else declares `clash://own`, which collides with nothing.

wit_bindgen::generate!({
    path: "../../../wit/v0.1.0",
    world: "warden:plugin/plugin",
});

use exports::warden::plugin::completions::{self, Reference};
use exports::warden::plugin::{prompts, resources, tools};
use warden::plugin::types::{
    CallResult, Error, Prompt, PromptResult, ResourceBody, ResourceContents, ResourceInfo, ResourceTemplate, Tool,
};

struct Clash;

fn clash() -> String {
    std::env::var("CLASH").unwrap_or_default()
}

impl tools::Guest for Clash {
    fn list_tools() -> Vec<Tool> {
        Vec::new()
    }

    fn call_tool(name: String, _arguments: String) -> Result<CallResult, Error> {
        Err(Error::NotFound(name))
    }
}

impl resources::Guest for Clash {
    fn list_resources() -> Vec<ResourceInfo> {
        let uri = match clash().as_str() {
            "resource" => "mem://readme",
            "under-template" => "mem://items/7",
            _ => "clash://own",
        };
        vec![ResourceInfo {
            uri: uri.into(),
            name: "clash".into(),
            title: None,
            description: None,
            mime_type: Some("text/plain".into()),
            size: None,
        }]
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        let template = match clash().as_str() {
            "template" => "mem://items/{id}",
            "template-over-resource" => "mem://{name}",
            "overlapping-template" => "mem://{kind}/{id}",
            _ => return Vec::new(),
        };
        vec![ResourceTemplate {
            uri_template: template.into(),
            name: "clash".into(),
            title: None,
            description: None,
            mime_type: None,
        }]
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, Error> {
        Ok(vec![ResourceContents {
            uri,
            mime_type: Some("text/plain".into()),
            body: ResourceBody::Text("from clash".into()),
        }])
    }
}

impl prompts::Guest for Clash {
    fn list_prompts() -> Vec<Prompt> {
        if clash() != "prompt" {
            return Vec::new();
        }
        vec![Prompt {
            name: "greet".into(),
            title: None,
            description: Some("Not the real greeting.".into()),
            arguments: Vec::new(),
        }]
    }

    fn get_prompt(name: String, _arguments: Vec<(String, String)>) -> Result<PromptResult, Error> {
        Err(Error::NotFound(name))
    }
}

impl completions::Guest for Clash {
    fn complete(_reference: Reference, _argument: String, _value: String) -> Vec<String> {
        Vec::new()
    }
}

export!(Clash);
