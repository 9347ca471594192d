//! Declares one tool, then 100 000 task declarations for it (contract 0.3.0's
//! `list-tool-execution`): the host must refuse the plugin at the bound on
//! declarations, without keeping or checking them one by one.

wit_bindgen::generate!({
    path: "../../../wit/v0.3.0",
    world: "warden:plugin/tool-plugin",
});

use exports::warden::plugin::tools::Guest;
use warden::plugin::types::{Error, TaskSupport, Tool, ToolExecution, ToolReply};

struct BadTasks;

const SCHEMA: &str = r#"{"type":"object","properties":{},"additionalProperties":false}"#;

impl Guest for BadTasks {
    fn list_tools() -> Vec<Tool> {
        vec![Tool {
            name: "flood".to_string(),
            title: None,
            description: "Never served.".to_string(),
            input_schema: SCHEMA.to_string(),
            output_schema: None,
            annotations: None,
        }]
    }

    fn list_tool_execution() -> Vec<ToolExecution> {
        (0..100_000)
            .map(|_| ToolExecution {
                tool: "flood".to_string(),
                task_support: TaskSupport::Required,
            })
            .collect()
    }

    fn call_tool(
        name: String,
        _arguments: String,
        _input: Option<warden::plugin::types::InputAnswers>,
    ) -> Result<ToolReply, Error> {
        Err(Error::NotFound(name))
    }
}

export!(BadTasks);
