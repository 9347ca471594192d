//! How much a plugin may declare. Declarations are kept in memory for as
//! long as the plugin is loaded, listed to clients, and compared with every
//! other plugin's at each reload (see `Catalog::build`), so their count and
//! size are bounded — generously: a notes plugin may list thousands of
//! resources.

use anyhow::{Result, bail};

use crate::declarations::Declared;

pub const MAX_TOOLS: usize = 1_000;
pub const MAX_PROMPTS: usize = 1_000;
pub const MAX_RESOURCES: usize = 10_000;
/// Templates are matched one by one on every read of a URI no plugin lists,
/// and compared pairwise across plugins.
pub const MAX_TEMPLATES: usize = 100;
/// The longest resource template.
pub const MAX_TEMPLATE_BYTES: usize = 1_024;
/// The longest resource URI.
pub const MAX_URI_BYTES: usize = 4_096;
/// All the text a plugin declares together: names, titles, descriptions,
/// URIs, templates, schemas, and `ITEM_BYTES` for each item.
pub const MAX_DECLARED_BYTES: usize = 8 << 20;
/// What each declared item (tool, resource, template, prompt, prompt
/// argument) counts beyond its text: the host keeps a structure for it and
/// lists it as a JSON object, so a million one-letter prompt arguments are
/// not "a few megabytes" (as `[limits] output` counts items too).
pub const ITEM_BYTES: usize = 32;

/// Refuses declarations over any bound, naming it.
pub fn check(declared: &Declared) -> Result<()> {
    for (kind, count, limit) in [
        ("tools", declared.tools.len(), MAX_TOOLS),
        ("tool executions", declared.executions.len(), MAX_TOOLS),
        ("prompts", declared.prompts.len(), MAX_PROMPTS),
        ("resources", declared.resources.len(), MAX_RESOURCES),
        ("resource templates", declared.templates.len(), MAX_TEMPLATES),
    ] {
        if count > limit {
            bail!("it declares {count} {kind}, more than the {limit} a plugin may");
        }
    }
    if let Some(t) = declared
        .templates
        .iter()
        .find(|t| t.uri_template.len() > MAX_TEMPLATE_BYTES)
    {
        bail!(
            "its resource template starting {:?} is {} bytes long, more than {MAX_TEMPLATE_BYTES}",
            prefix(&t.uri_template),
            t.uri_template.len()
        );
    }
    if let Some(r) = declared.resources.iter().find(|r| r.uri.len() > MAX_URI_BYTES) {
        bail!(
            "its resource URI starting {:?} is {} bytes long, more than {MAX_URI_BYTES}",
            prefix(&r.uri),
            r.uri.len()
        );
    }
    let bytes = declared_bytes(declared);
    if bytes > MAX_DECLARED_BYTES {
        bail!(
            "its declarations take {bytes} bytes, more than the {} MiB a plugin may declare",
            MAX_DECLARED_BYTES >> 20
        );
    }
    Ok(())
}

/// The start of a long text, for messages.
fn prefix(text: &str) -> &str {
    let end = text.char_indices().nth(60).map_or(text.len(), |(i, _)| i);
    &text[..end]
}

fn optional(text: &Option<String>) -> usize {
    text.as_ref().map_or(0, String::len)
}

/// Every byte of text in the declarations, and `ITEM_BYTES` per item.
fn declared_bytes(declared: &Declared) -> usize {
    let tools = declared.tools.iter().map(|t| {
        ITEM_BYTES
            + t.name.len()
            + optional(&t.title)
            + t.description.len()
            + t.input_schema.len()
            + optional(&t.output_schema)
            + t.annotations.as_ref().map_or(0, |a| optional(&a.title))
    });
    let executions = declared.executions.iter().map(|e| ITEM_BYTES + e.tool.len());
    let resources = declared.resources.iter().map(|r| {
        ITEM_BYTES + r.uri.len() + r.name.len() + optional(&r.title) + optional(&r.description) + optional(&r.mime_type)
    });
    let templates = declared.templates.iter().map(|t| {
        ITEM_BYTES
            + t.uri_template.len()
            + t.name.len()
            + optional(&t.title)
            + optional(&t.description)
            + optional(&t.mime_type)
    });
    let prompts = declared.prompts.iter().map(|p| {
        ITEM_BYTES
            + p.name.len()
            + optional(&p.title)
            + optional(&p.description)
            + p.arguments
                .iter()
                .map(|a| ITEM_BYTES + a.name.len() + optional(&a.description))
                .sum::<usize>()
    });
    tools
        .chain(executions)
        .chain(resources)
        .chain(templates)
        .chain(prompts)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use warden_runtime::contract::types;

    fn resource(uri: String) -> types::ResourceInfo {
        types::ResourceInfo {
            uri,
            name: "r".into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    fn template(text: String) -> types::ResourceTemplate {
        types::ResourceTemplate {
            uri_template: text,
            name: "t".into(),
            title: None,
            description: None,
            mime_type: None,
        }
    }

    #[test]
    fn thousands_of_resources_are_fine() {
        let declared = Declared {
            resources: (0..MAX_RESOURCES).map(|n| resource(format!("notes://{n}"))).collect(),
            ..Declared::default()
        };
        check(&declared).unwrap();
    }

    #[test]
    fn each_bound_is_named() {
        let too_many = Declared {
            resources: (0..=MAX_RESOURCES).map(|n| resource(format!("notes://{n}"))).collect(),
            ..Declared::default()
        };
        let cases = [
            (too_many, "declares 10001 resources, more than the 10000"),
            (
                Declared {
                    templates: (0..=MAX_TEMPLATES)
                        .map(|n| template(format!("t://{n}/{{x}}")))
                        .collect(),
                    ..Declared::default()
                },
                "101 resource templates",
            ),
            (
                Declared {
                    executions: (0..=MAX_TOOLS)
                        .map(|n| types::ToolExecution {
                            tool: format!("t{n}"),
                            task_support: types::TaskSupport::Optional,
                        })
                        .collect(),
                    ..Declared::default()
                },
                "1001 tool executions",
            ),
            (
                Declared {
                    templates: vec![template(format!("t://{}{{x}}", "a".repeat(MAX_TEMPLATE_BYTES)))],
                    ..Declared::default()
                },
                "bytes long, more than 1024",
            ),
            (
                Declared {
                    resources: vec![resource(format!("t://{}", "a".repeat(MAX_URI_BYTES)))],
                    ..Declared::default()
                },
                "bytes long, more than 4096",
            ),
            (
                Declared {
                    resources: (0..9)
                        .map(|n| types::ResourceInfo {
                            description: Some("d".repeat(1 << 20)),
                            ..resource(format!("t://{n}"))
                        })
                        .collect(),
                    ..Declared::default()
                },
                "more than the 8 MiB a plugin may declare",
            ),
        ];
        let many_arguments = Declared {
            prompts: vec![types::Prompt {
                name: "p".into(),
                title: None,
                description: None,
                // 2 MB of names, 300 000 structures.
                arguments: (0..300_000)
                    .map(|n| types::PromptArgument {
                        name: format!("a{n}"),
                        description: None,
                        required: false,
                    })
                    .collect(),
            }],
            ..Declared::default()
        };
        let cases = cases
            .into_iter()
            .chain([(many_arguments, "more than the 8 MiB a plugin may declare")]);
        for (declared, expected) in cases {
            let error = check(&declared).unwrap_err().to_string();
            assert!(error.contains(expected), "{error} should mention {expected}");
        }
    }
}
