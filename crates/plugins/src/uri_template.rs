//! RFC 6570 URI templates, run backwards: does a concrete URI match a
//! template, and with which variables? That is how `resources/read` of a URI
//! like `notes://todo` finds the plugin that declared `notes://{name}`.
//!
//! All operators of levels 1–4 are understood. Prefix (`:3`) and explode
//! (`*`) modifiers are accepted; exploded lists come back as one value.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use anyhow::{Result, bail};
use percent_encoding::percent_decode_str;
use regex::Regex;
use regex_automata::dfa::dense::DFA;

/// A parsed template, ready to match URIs.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    text: String,
    pattern: Regex,
    /// The variables in the order their capture groups appear, with how each
    /// group is to be read back.
    captures: Vec<Capture>,
    /// Characters outside expressions: a template with more of them is more
    /// specific and wins when several match.
    literal_len: usize,
    /// The automaton for overlap checks between plugins, built on first use.
    dfa: Arc<OnceLock<Result<DFA<Vec<u32>>, String>>>,
}

#[derive(Debug, Clone)]
enum Capture {
    /// One variable's value.
    Value(String),
    /// `name=value` pairs (`?`, `&` and `;` operators) for these variables.
    Pairs(Vec<String>),
}

impl UriTemplate {
    pub fn parse(text: &str) -> Result<Self> {
        let mut pattern = String::from("^");
        let mut captures = Vec::new();
        let mut literal_len = 0;
        let mut rest = text;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(open) => {
                    let literal = &rest[..open];
                    if literal.contains('}') {
                        bail!("`}}` without a matching `{{` in {text:?}");
                    }
                    pattern.push_str(&regex::escape(literal));
                    literal_len += literal.len();
                    let after = &rest[open + 1..];
                    let Some(close) = after.find('}') else {
                        bail!("`{{` without a matching `}}` in {text:?}");
                    };
                    expression(&after[..close], &mut pattern, &mut captures)
                        .map_err(|e| anyhow::anyhow!("{e} in {text:?}"))?;
                    rest = &after[close + 1..];
                }
                None => {
                    if rest.contains('}') {
                        bail!("`}}` without a matching `{{` in {text:?}");
                    }
                    pattern.push_str(&regex::escape(rest));
                    literal_len += rest.len();
                    rest = "";
                }
            }
        }
        pattern.push('$');
        let pattern = Regex::new(&pattern).map_err(|e| anyhow::anyhow!("cannot match {text:?}: {e}"))?;
        Ok(Self {
            text: text.to_string(),
            pattern,
            captures,
            literal_len,
            dfa: Arc::default(),
        })
    }

    /// The anchored regular expression a URI must match.
    pub fn pattern(&self) -> &str {
        self.pattern.as_str()
    }

    /// The text before the first expression: every URI it matches starts so.
    pub fn literal_prefix(&self) -> &str {
        self.text.split('{').next().unwrap_or_default()
    }

    /// The template's DFA (`uri_overlap` compares two), built once.
    pub fn dfa(&self) -> Result<&DFA<Vec<u32>>, String> {
        self.dfa.get_or_init(|| build_dfa(self)).as_ref().map_err(Clone::clone)
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// How specific the template is: more literal characters, more specific.
    pub fn specificity(&self) -> usize {
        self.literal_len
    }

    /// The names of the template's variables, in order.
    pub fn variables(&self) -> Vec<&str> {
        self.captures
            .iter()
            .flat_map(|c| match c {
                Capture::Value(name) => vec![name.as_str()],
                Capture::Pairs(names) => names.iter().map(String::as_str).collect(),
            })
            .collect()
    }

    /// The variables of `uri` if it matches, percent-decoded.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let found = self.pattern.captures(uri)?;
        let mut values = BTreeMap::new();
        for (capture, group) in self.captures.iter().zip(found.iter().skip(1)) {
            let Some(group) = group else { continue };
            match capture {
                Capture::Value(name) => {
                    values.insert(name.clone(), decode(group.as_str()));
                }
                Capture::Pairs(names) => {
                    for pair in group.as_str().split(['&', ';']).filter(|p| !p.is_empty()) {
                        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                        if names.iter().any(|n| n == key) {
                            values.insert(key.to_string(), decode(value));
                        }
                    }
                }
            }
        }
        Some(values)
    }
}

fn decode(text: &str) -> String {
    percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// Appends the pattern for one `{…}` expression.
fn expression(body: &str, pattern: &mut String, captures: &mut Vec<Capture>) -> Result<()> {
    let (operator, list) = match body.chars().next() {
        Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(op), &body[1..]),
        Some(op @ ('=' | ',' | '!' | '@' | '|')) => bail!("operator `{op}` is reserved by RFC 6570"),
        _ => (None, body),
    };
    let mut names = Vec::new();
    for spec in list.split(',') {
        let name = spec.trim_end_matches('*');
        let name = name.split_once(':').map_or(name, |(name, _)| name);
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '%')
        {
            bail!("{spec:?} is not a variable name");
        }
        names.push(name.to_string());
    }
    match operator {
        Some(op @ ('?' | '&' | ';')) => {
            // Optional `name=value` pairs; which ones are present is read back
            // from the pairs themselves.
            let lead = regex::escape(&op.to_string());
            let more = if op == ';' { ";" } else { "&" };
            pattern.push_str(&format!("(?:{lead}([^#/]*?(?:{more}[^#/]*?)*))?"));
            captures.push(Capture::Pairs(names));
        }
        _ => {
            // What a value may contain once expanded: simple expansion
            // percent-encodes reserved characters, `+` and `#` keep them.
            let (lead, separator, value) = match operator {
                None => ("", ",", "[^/?#,&;=]*"),
                Some('+') => ("", ",", "[^?#,]*"),
                Some('#') => ("#", ",", "[^,]*"),
                Some('.') => (r"\.", r"\.", "[^/?#.,]*"),
                Some('/') => ("/", "/", "[^/?#]*"),
                Some(other) => unreachable!("operator {other} handled above"),
            };
            let groups: Vec<String> = names.iter().map(|_| format!("({value})")).collect();
            let joined = groups.join(separator);
            if operator.is_some() {
                // A prefixed expression may be absent when its values are undefined.
                pattern.push_str(&format!("(?:{lead}{joined})?"));
            } else {
                pattern.push_str(&joined);
            }
            captures.extend(names.into_iter().map(Capture::Value));
        }
    }
    Ok(())
}

/// Heap one template's DFA may take; templates are at most
/// `declaration_limits::MAX_TEMPLATE_BYTES` long and their DFAs are small.
const DFA_SIZE_LIMIT: usize = 4 << 20;
/// The DFA matching exactly the URIs `template` matches.
fn build_dfa(template: &UriTemplate) -> Result<DFA<Vec<u32>>, String> {
    regex_automata::dfa::dense::Builder::new()
        .configure(
            regex_automata::dfa::dense::Config::new()
                .start_kind(regex_automata::dfa::StartKind::Anchored)
                .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                .determinize_size_limit(Some(DFA_SIZE_LIMIT)),
        )
        .syntax(regex_automata::util::syntax::Config::new())
        .build(template.pattern())
        .map_err(|e| format!("cannot build an automaton for {:?}: {e}", template.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(template: &str, uri: &str) -> Option<Vec<(String, String)>> {
        UriTemplate::parse(template)
            .unwrap()
            .matches(uri)
            .map(|m| m.into_iter().collect())
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn simple_variables_match_one_segment() {
        assert_eq!(
            vars("test://template/{id}/data", "test://template/123/data"),
            Some(pairs(&[("id", "123")]))
        );
        assert_eq!(vars("test://template/{id}/data", "test://template/1/2/data"), None);
        assert_eq!(vars("test://template/{id}/data", "test://template/123/datum"), None);
        assert_eq!(
            vars("notes://{name}", "notes://shopping%20list"),
            Some(pairs(&[("name", "shopping list")]))
        );
        assert_eq!(
            vars("snippets://{language}/{name}", "snippets://rust/read_file"),
            Some(pairs(&[("language", "rust"), ("name", "read_file")]))
        );
    }

    #[test]
    fn operators() {
        assert_eq!(
            vars("file:///{+path}", "file:///etc/hosts"),
            Some(pairs(&[("path", "etc/hosts")]))
        );
        assert_eq!(
            vars("docs://x{/a,b}", "docs://x/one/two"),
            Some(pairs(&[("a", "one"), ("b", "two")]))
        );
        assert_eq!(
            vars("search://items{?q,limit}", "search://items?q=rust&limit=5"),
            Some(pairs(&[("limit", "5"), ("q", "rust")]))
        );
        assert_eq!(vars("search://items{?q,limit}", "search://items"), Some(vec![]));
        assert_eq!(vars("v://a{.ext}", "v://a.json"), Some(pairs(&[("ext", "json")])));
    }

    #[test]
    fn malformed_templates_are_refused() {
        for bad in ["a://{", "a://}", "a://{}", "a://{=x}", "a://{x y}"] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn specificity_counts_literals() {
        let broad = UriTemplate::parse("a://{x}").unwrap();
        let narrow = UriTemplate::parse("a://items/{x}").unwrap();
        assert!(narrow.specificity() > broad.specificity());
        assert_eq!(narrow.variables(), ["x"]);
    }
}
