//! `[tasks]` in the operator's manifest: which tools' calls may or must
//! become MCP tasks (SEP-2663), and how long a task may run.
//!
//! The decision is the operator's and the plugin author's, never the
//! model's: a client that declared the tasks extension gets a task only
//! where this says so. The manifest wins: `[tasks.tools] NAME`, then
//! `[tasks] default` when it is written, then what the plugin declares
//! (contract 0.3.0's `list-tool-execution`), then `forbidden`.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::Deserialize;

/// Whether a tool's calls become tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskSupport {
    /// Always an ordinary call (the default).
    #[default]
    Forbidden,
    /// A task for a client that declared the extension and a call that
    /// outlives the immediate window; an ordinary call otherwise.
    Optional,
    /// Only ever a task: a client without the extension gets `-32021`.
    Required,
}

impl TaskSupport {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// The validated `[tasks]` section.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskPolicy {
    /// For every tool not named in `tools`, over what the plugin declares;
    /// `None` when the manifest does not say.
    pub default: Option<TaskSupport>,
    /// Per tool, by the name the plugin declares.
    pub tools: BTreeMap<String, TaskSupport>,
    /// Wall-clock time one task may run, in place of `[limits] timeout`.
    pub timeout: Duration,
    /// How long its record (and result) is kept after that: its `ttlMs` is
    /// `timeout + keep`.
    pub keep: Duration,
}

/// Who decided a tool's task support, for `warden check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskSource {
    /// `[tasks.tools] NAME`.
    ManifestTool,
    /// `[tasks] default`.
    ManifestDefault,
    /// The plugin's `list-tool-execution`.
    Plugin,
    /// Nobody: `forbidden`.
    Default,
}

impl TaskSource {
    pub fn describe(self) -> &'static str {
        match self {
            TaskSource::ManifestTool => "the manifest's [tasks.tools]",
            TaskSource::ManifestDefault => "the manifest's [tasks] default",
            TaskSource::Plugin => "declared by the plugin",
            TaskSource::Default => "default",
        }
    }
}

/// A task runs for at most ten minutes unless the manifest says otherwise.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// And never for more than a day: a task holds a sandbox slot while it runs.
pub const MAX_TASK_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);
/// A task's record is kept fifteen minutes past its time limit unless the
/// manifest says otherwise, and at most a day: the store holds it.
pub const DEFAULT_TASK_KEEP: Duration = Duration::from_secs(15 * 60);
pub const MAX_TASK_KEEP: Duration = Duration::from_secs(24 * 60 * 60);

impl Default for TaskPolicy {
    fn default() -> Self {
        Self {
            default: None,
            tools: BTreeMap::new(),
            timeout: DEFAULT_TASK_TIMEOUT,
            keep: DEFAULT_TASK_KEEP,
        }
    }
}

impl TaskPolicy {
    /// The support of the tool the plugin declares as `tool`, given what
    /// the plugin itself declared for it, and who decided.
    pub fn decide(&self, tool: &str, declared: Option<TaskSupport>) -> (TaskSupport, TaskSource) {
        if let Some(support) = self.tools.get(tool) {
            return (*support, TaskSource::ManifestTool);
        }
        if let Some(support) = self.default {
            return (support, TaskSource::ManifestDefault);
        }
        match declared {
            Some(support) => (support, TaskSource::Plugin),
            None => (TaskSupport::Forbidden, TaskSource::Default),
        }
    }

    /// The support of `tool`, as `decide` has it.
    pub fn support(&self, tool: &str, declared: Option<TaskSupport>) -> TaskSupport {
        self.decide(tool, declared).0
    }
}

/// `[tasks]` as written.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTasks {
    default: Option<String>,
    timeout: Option<String>,
    keep: Option<String>,
    #[serde(default)]
    tools: BTreeMap<String, String>,
}

pub(crate) fn parse(raw: RawTasks) -> Result<TaskPolicy> {
    let support = |value: &str, key: &str| -> Result<TaskSupport> {
        match value {
            "forbidden" => Ok(TaskSupport::Forbidden),
            "optional" => Ok(TaskSupport::Optional),
            "required" => Ok(TaskSupport::Required),
            other => bail!("`{key}` = {other:?}: write \"forbidden\", \"optional\" or \"required\""),
        }
    };
    let default = match &raw.default {
        Some(value) => Some(support(value, "tasks.default")?),
        None => None,
    };
    let mut tools = BTreeMap::new();
    for (name, value) in &raw.tools {
        tools.insert(name.clone(), support(value, &format!("tasks.tools.{name}"))?);
    }
    let timeout = match &raw.timeout {
        Some(text) => humantime::parse_duration(text.trim())
            .with_context(|| format!("`tasks.timeout` = {text:?} is not valid; write it like `30m` or `2h`"))?,
        None => DEFAULT_TASK_TIMEOUT,
    };
    if timeout.is_zero() || timeout > MAX_TASK_TIMEOUT {
        bail!("`tasks.timeout` must be longer than zero and at most 24h");
    }
    let keep = match &raw.keep {
        Some(text) => humantime::parse_duration(text.trim())
            .with_context(|| format!("`tasks.keep` = {text:?} is not valid; write it like `15m` or `1h`"))?,
        None => DEFAULT_TASK_KEEP,
    };
    if keep < Duration::from_secs(1) || keep > MAX_TASK_KEEP {
        bail!("`tasks.keep` must be at least 1s and at most 24h");
    }
    Ok(TaskPolicy {
        default,
        tools,
        timeout,
        keep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> Result<TaskPolicy> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            tasks: RawTasks,
        }
        parse(toml::from_str::<Raw>(text)?.tasks)
    }

    #[test]
    fn tools_are_forbidden_to_become_tasks_by_default() {
        let tasks = policy("").unwrap();
        assert_eq!(
            tasks.decide("anything", None),
            (TaskSupport::Forbidden, TaskSource::Default)
        );
        assert_eq!(tasks.timeout, DEFAULT_TASK_TIMEOUT);
    }

    #[test]
    fn the_plugin_decides_where_the_manifest_is_silent() {
        let tasks = policy("").unwrap();
        assert_eq!(
            tasks.decide("crawl", Some(TaskSupport::Required)),
            (TaskSupport::Required, TaskSource::Plugin)
        );
        let tasks = policy("[tasks.tools]\ncrawl = \"forbidden\"\n").unwrap();
        assert_eq!(
            tasks.decide("crawl", Some(TaskSupport::Required)),
            (TaskSupport::Forbidden, TaskSource::ManifestTool)
        );
        assert_eq!(
            tasks.decide("other", Some(TaskSupport::Optional)),
            (TaskSupport::Optional, TaskSource::Plugin)
        );
    }

    #[test]
    fn a_tool_entry_overrides_the_default_and_the_default_the_plugin() {
        let tasks = policy(
            "[tasks]\ndefault = \"optional\"\ntimeout = \"2h\"\n[tasks.tools]\ncrawl = \"required\"\nping = \"forbidden\"\n",
        )
        .unwrap();
        assert_eq!(tasks.support("crawl", None), TaskSupport::Required);
        assert_eq!(
            tasks.support("ping", Some(TaskSupport::Required)),
            TaskSupport::Forbidden
        );
        assert_eq!(
            tasks.decide("other", Some(TaskSupport::Required)),
            (TaskSupport::Optional, TaskSource::ManifestDefault)
        );
        assert_eq!(tasks.timeout, Duration::from_secs(7200));
        assert_eq!(tasks.keep, DEFAULT_TASK_KEEP);
        assert_eq!(
            policy("[tasks]\nkeep = \"2h\"").unwrap().keep,
            Duration::from_secs(7200)
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let err = format!("{:#}", policy("[tasks.tools]\ncrawl = \"always\"").unwrap_err());
        assert!(err.contains("tasks.tools.crawl") && err.contains("required"), "{err}");
        let err = format!("{:#}", policy("[tasks]\ntimeout = \"3d\"").unwrap_err());
        assert!(err.contains("tasks.timeout"), "{err}");
        let err = format!("{:#}", policy("[tasks]\nkeep = \"0s\"").unwrap_err());
        assert!(err.contains("tasks.keep"), "{err}");
        let err = format!("{:#}", policy("[tasks]\nlimit = 3").unwrap_err());
        assert!(err.contains("limit"), "{err}");
    }
}
