//! Who may use what, in OAuth mode: the operator's access policy
//! (`--access FILE`) maps a token's scopes or claims to plugins, or to
//! single tools, prompts and resources. A principal may use the union of
//! every rule their token matches, and nothing else: a plugin no rule names
//! is visible to nobody.
//!
//! This file is the one place the rule lives; the HTTP layer asks it before
//! a call (to answer `403 insufficient_scope`), and the MCP handler asks it
//! again for every list and call (so nothing depends on the HTTP layer
//! having parsed the request the same way rmcp does). Subscriptions ask it
//! too, when made and again at every update (`may_subscribe`,
//! `may_deliver`): an update outlives the request, so it follows the policy
//! in force, and a grant the operator removes ends it.
//!
//! ```toml
//! [[allow]]
//! scope = "notes"              # the token's `scope` (or `scp`) holds it
//! plugins = ["notes"]          # all of these plugins' tools, resources, prompts
//!
//! [[allow]]
//! claim = "groups"             # or: this claim equals `value`,
//! value = "admins"             # or is an array that holds it
//! plugins = ["*"]              # every plugin
//!
//! [[allow]]
//! scope = "greet"
//! tools = ["greet"]            # single items, by the name clients see;
//! prompts = ["welcome"]        # resources by URI or URI template
//! resources = ["notes://{id}"]
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value};

use warden_plugins::catalog::{Catalog, Swap};

/// The policy file, as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    #[serde(default)]
    allow: Vec<RuleFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    scope: Option<String>,
    claim: Option<String>,
    value: Option<String>,
    #[serde(default)]
    plugins: Vec<String>,
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    prompts: Vec<String>,
    #[serde(default)]
    resources: Vec<String>,
}

/// What a token must carry for a rule to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Condition {
    Scope(String),
    Claim { name: String, value: String },
}

#[derive(Debug, Clone)]
struct Rule {
    condition: Condition,
    grant: Permissions,
}

/// The operator's access policy.
#[derive(Debug, Clone, Default)]
pub struct AccessPolicy {
    rules: Vec<Rule>,
}

/// Everything one principal may use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Permissions {
    every_plugin: bool,
    plugins: BTreeSet<String>,
    tools: BTreeSet<String>,
    prompts: BTreeSet<String>,
    resources: BTreeSet<String>,
}

/// One thing a request would use.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    Tool {
        plugin: &'a str,
        name: &'a str,
    },
    Prompt {
        plugin: &'a str,
        name: &'a str,
    },
    /// A concrete resource, or (for a read of a templated URI, or a
    /// completion) the template that serves it.
    Resource {
        plugin: &'a str,
        uri: &'a str,
        template: Option<&'a str>,
    },
}

impl Target<'_> {
    fn plugin(&self) -> &str {
        match self {
            Target::Tool { plugin, .. } | Target::Prompt { plugin, .. } | Target::Resource { plugin, .. } => plugin,
        }
    }
}

/// Whether a client may subscribe to the resource `uri` (be told when it
/// changes): some plugin in `catalog` serves it and, in OAuth mode, `grant`
/// reaches it. An unserved URI and an ungranted one get the same answer, so
/// a subscription tells a principal nothing about what others may read.
pub fn may_subscribe(grant: Option<&Permissions>, catalog: &Catalog, uri: &str) -> bool {
    match grant {
        None => catalog.resource_source(uri).is_some(),
        Some(grant) => grant.reaches_resource(catalog, uri),
    }
}

/// Whether the update of a subscribed `uri` that `swap` brings may be sent
/// to a subscriber whose grant is now `grant` (none without OAuth): the
/// grant reaches the resource as served before or after the swap (so the
/// update of a resource just removed still arrives). When it does not, the
/// subscription is over: the caller drops it.
pub fn may_deliver(grant: Option<&Permissions>, swap: &Swap, uri: &str) -> bool {
    grant.is_none_or(|grant| grant.reaches_resource(swap.after(), uri) || grant.reaches_resource(swap.before(), uri))
}

/// The longest policy file read; a policy is a few rules, not a database.
pub const MAX_POLICY_BYTES: u64 = 1 << 20;

impl AccessPolicy {
    pub fn load(path: &Path) -> Result<Self> {
        let text = warden_runtime::bounded_file::read_text(path, MAX_POLICY_BYTES, "the access policy")?;
        Self::parse(&text).with_context(|| format!("in the access policy {}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Self> {
        let file: PolicyFile = toml::from_str(text).context("not a valid access policy")?;
        if file.allow.is_empty() {
            bail!(
                "it has no [[allow]] rules, so no one could use anything; add a rule such as \
                 `[[allow]]` `scope = \"warden\"` `plugins = [\"*\"]`"
            );
        }
        let rules = file
            .allow
            .into_iter()
            .enumerate()
            .map(|(i, rule)| Rule::from_file(rule).with_context(|| format!("[[allow]] rule {}", i + 1)))
            .collect::<Result<_>>()?;
        Ok(Self { rules })
    }

    /// What a token with these claims may use.
    pub fn grant(&self, claims: &Map<String, Value>) -> Permissions {
        let scopes = token_scopes(claims);
        let mut grant = Permissions::default();
        for rule in self.rules.iter().filter(|rule| rule.condition.holds(claims, &scopes)) {
            grant.add(&rule.grant);
        }
        grant
    }

    /// The scopes that would give access to `target` (for a `403`'s
    /// `scope` attribute), in the policy's order.
    pub fn scopes_for(&self, target: Target<'_>) -> Vec<&str> {
        let mut scopes = Vec::new();
        for rule in &self.rules {
            if let Condition::Scope(scope) = &rule.condition
                && rule.grant.allows(target)
                && !scopes.contains(&scope.as_str())
            {
                scopes.push(scope.as_str());
            }
        }
        scopes
    }

    /// Every scope the policy knows, for the protected resource metadata's
    /// `scopes_supported`.
    pub fn scopes(&self) -> Vec<&str> {
        let mut scopes = Vec::new();
        for rule in &self.rules {
            if let Condition::Scope(scope) = &rule.condition
                && !scopes.contains(&scope.as_str())
            {
                scopes.push(scope.as_str());
            }
        }
        scopes
    }
}

impl AccessPolicy {
    /// The names the policy grants that nothing in `catalog` has: a typo
    /// grants nothing, silently, so the operator is told at start.
    pub fn unmatched(&self, catalog: &Catalog) -> Vec<String> {
        let mut missing = BTreeSet::new();
        for grant in self.rules.iter().map(|rule| &rule.grant) {
            for plugin in &grant.plugins {
                if !catalog.plugins().iter().any(|p| &*p.name == plugin) {
                    missing.insert(format!("plugin `{plugin}`"));
                }
            }
            for tool in grant.tools.iter().filter(|t| catalog.tool(t).is_none()) {
                missing.insert(format!("tool `{tool}`"));
            }
            for prompt in grant.prompts.iter().filter(|p| catalog.prompt(p).is_none()) {
                missing.insert(format!("prompt `{prompt}`"));
            }
            for resource in &grant.resources {
                let listed = catalog.resources().iter().any(|r| &r.decl().resource.uri == resource);
                if !listed && catalog.template(resource).is_none() {
                    missing.insert(format!("resource `{resource}`"));
                }
            }
        }
        missing.into_iter().collect()
    }
}

impl Rule {
    fn from_file(rule: RuleFile) -> Result<Self> {
        let condition = match (rule.scope, rule.claim, rule.value) {
            (Some(scope), None, None) => {
                if scope.is_empty() || scope.contains(char::is_whitespace) {
                    bail!("`scope = {scope:?}` must be one scope: non-empty, without spaces");
                }
                Condition::Scope(scope)
            }
            (None, Some(name), Some(value)) => {
                if name.is_empty() {
                    bail!("`claim` is empty; name the token claim to match, such as \"groups\"");
                }
                Condition::Claim { name, value }
            }
            (None, Some(_), None) => bail!("`claim` needs a `value` to match"),
            (None, None, Some(_)) => bail!("`value` needs a `claim` to match it against"),
            (Some(_), Some(_), _) | (Some(_), None, Some(_)) => {
                bail!("a rule matches either a `scope` or a `claim` with a `value`, not both; split it in two")
            }
            (None, None, None) => bail!("a rule needs a `scope`, or a `claim` and a `value`, to say whom it is for"),
        };
        if rule.plugins.is_empty() && rule.tools.is_empty() && rule.prompts.is_empty() && rule.resources.is_empty() {
            bail!("it grants nothing; list `plugins`, `tools`, `prompts` or `resources`");
        }
        for name in rule
            .plugins
            .iter()
            .chain(&rule.tools)
            .chain(&rule.prompts)
            .chain(&rule.resources)
        {
            if name.is_empty() {
                bail!("an empty name; remove it or name a plugin, tool, prompt or resource");
            }
        }
        let every_plugin = rule.plugins.iter().any(|p| p == "*");
        Ok(Self {
            condition,
            grant: Permissions {
                every_plugin,
                plugins: rule.plugins.into_iter().filter(|p| p != "*").collect(),
                tools: rule.tools.into_iter().collect(),
                prompts: rule.prompts.into_iter().collect(),
                resources: rule.resources.into_iter().collect(),
            },
        })
    }
}

impl Condition {
    fn holds(&self, claims: &Map<String, Value>, scopes: &BTreeSet<&str>) -> bool {
        match self {
            Condition::Scope(scope) => scopes.contains(scope.as_str()),
            Condition::Claim { name, value } => match claims.get(name) {
                Some(Value::String(s)) => s == value,
                Some(Value::Array(items)) => items.iter().any(|item| item.as_str() == Some(value)),
                Some(Value::Bool(b)) => value == if *b { "true" } else { "false" },
                Some(Value::Number(n)) => value == &n.to_string(),
                _ => false,
            },
        }
    }
}

/// The scopes a token carries: RFC 9068's space-separated `scope`, or the
/// `scp` array (or string) some servers use instead.
pub fn token_scopes(claims: &Map<String, Value>) -> BTreeSet<&str> {
    let mut scopes = BTreeSet::new();
    for key in ["scope", "scp"] {
        match claims.get(key) {
            Some(Value::String(s)) => scopes.extend(s.split_ascii_whitespace()),
            Some(Value::Array(items)) => scopes.extend(items.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    scopes
}

impl Permissions {
    fn add(&mut self, other: &Permissions) {
        self.every_plugin |= other.every_plugin;
        self.plugins.extend(other.plugins.iter().cloned());
        self.tools.extend(other.tools.iter().cloned());
        self.prompts.extend(other.prompts.iter().cloned());
        self.resources.extend(other.resources.iter().cloned());
    }

    /// Whether `target` may be used (and so listed).
    pub fn allows(&self, target: Target<'_>) -> bool {
        if self.every_plugin || self.plugins.contains(target.plugin()) {
            return true;
        }
        match target {
            Target::Tool { name, .. } => self.tools.contains(name),
            Target::Prompt { name, .. } => self.prompts.contains(name),
            Target::Resource { uri, template, .. } => {
                self.resources.contains(uri) || template.is_some_and(|t| self.resources.contains(t))
            }
        }
    }

    /// Whether this grant reaches the resource `uri` as `catalog` serves it;
    /// false for a URI nothing in `catalog` serves.
    fn reaches_resource(&self, catalog: &Catalog, uri: &str) -> bool {
        catalog.resource_source(uri).is_some_and(|(plugin, template)| {
            self.allows(Target::Resource {
                plugin: &plugin.name,
                uri,
                template,
            })
        })
    }

    /// Whether anything at all is granted.
    pub fn is_empty(&self) -> bool {
        !self.every_plugin
            && self.plugins.is_empty()
            && self.tools.is_empty()
            && self.prompts.is_empty()
            && self.resources.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const POLICY: &str = r#"
        [[allow]]
        scope = "notes"
        plugins = ["notes"]

        [[allow]]
        claim = "groups"
        value = "admins"
        plugins = ["*"]

        [[allow]]
        scope = "greet"
        tools = ["greet"]
        prompts = ["welcome"]
        resources = ["notes://{id}", "config://main"]
    "#;

    fn claims(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn tool<'a>(plugin: &'a str, name: &'a str) -> Target<'a> {
        Target::Tool { plugin, name }
    }

    #[test]
    fn scopes_and_claims_grant_their_rules_and_nothing_else() {
        let policy = AccessPolicy::parse(POLICY).unwrap();
        let notes = policy.grant(&claims(json!({ "scope": "openid notes" })));
        assert!(notes.allows(tool("notes", "add_note")));
        assert!(!notes.allows(tool("hello", "greet")));

        let greet = policy.grant(&claims(json!({ "scp": ["greet"] })));
        assert!(greet.allows(tool("hello", "greet")));
        assert!(!greet.allows(tool("hello", "shout")));
        assert!(greet.allows(Target::Prompt {
            plugin: "hello",
            name: "welcome"
        }));
        let templated = Target::Resource {
            plugin: "notes",
            uri: "notes://7",
            template: Some("notes://{id}"),
        };
        assert!(greet.allows(templated));
        assert!(greet.allows(Target::Resource {
            plugin: "cfg",
            uri: "config://main",
            template: None
        }));
        assert!(!greet.allows(Target::Resource {
            plugin: "cfg",
            uri: "config://other",
            template: None
        }));

        let admin = policy.grant(&claims(json!({ "groups": ["staff", "admins"] })));
        assert!(admin.allows(tool("anything", "at_all")));

        let nobody = policy.grant(&claims(json!({ "scope": "note", "groups": "admin" })));
        assert!(nobody.is_empty());
        assert!(!nobody.allows(tool("notes", "add_note")));
    }

    #[test]
    fn the_403_names_the_scopes_that_would_do() {
        let policy = AccessPolicy::parse(POLICY).unwrap();
        assert_eq!(policy.scopes_for(tool("notes", "add_note")), ["notes"]);
        assert_eq!(policy.scopes_for(tool("hello", "greet")), ["greet"]);
        assert!(policy.scopes_for(tool("hello", "shout")).is_empty());
        assert_eq!(policy.scopes(), ["notes", "greet"]);
    }

    #[test]
    fn mistakes_are_named() {
        let error = |text: &str| format!("{:#}", AccessPolicy::parse(text).unwrap_err());
        assert!(error("").contains("no [[allow]] rules"));
        assert!(error("[[allow]]\nplugins = [\"x\"]").contains("needs a `scope`"));
        assert!(error("[[allow]]\nscope = \"a\"").contains("grants nothing"));
        assert!(error("[[allow]]\nscope = \"a b\"\nplugins = [\"x\"]").contains("one scope"));
        assert!(error("[[allow]]\nclaim = \"g\"\nplugins = [\"x\"]").contains("needs a `value`"));
        assert!(
            error("[[allow]]\nscope = \"a\"\nclaim = \"g\"\nvalue = \"v\"\nplugins = [\"x\"]").contains("not both")
        );
        assert!(error("[[allow]]\nscope = \"a\"\nplugin = [\"x\"]").contains("unknown field `plugin`"));
        let numbered = error("[[allow]]\nscope = \"a\"\nplugins = [\"x\"]\n[[allow]]\nscope = \"b\"");
        assert!(numbered.contains("rule 2"), "{numbered}");
    }
}
