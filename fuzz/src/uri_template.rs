//! The URI template matcher (`UriTemplate::parse` and `matches`).
//!
//! Input: a template, then a newline and a URI. Parsing and matching must
//! never panic; a match may only name the template's variables; and every
//! template that parses must match its own expansion (RFC 6570, with plain
//! alphanumeric values), since that is the URI a client reads back after
//! listing the template.

use warden_plugins::uri_template::UriTemplate;

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (text, uri) = text.split_once('\n').unwrap_or((text, ""));
    let Ok(template) = UriTemplate::parse(text) else {
        return;
    };
    assert_eq!(template.as_str(), text);
    let variables = template.variables();
    if let Some(found) = template.matches(uri) {
        for name in found.keys() {
            assert!(
                variables.contains(&name.as_str()),
                "{name:?} is not a variable of {text:?}"
            );
        }
    }
    let Some(expanded) = expand(text) else {
        return;
    };
    assert!(
        template.matches(&expanded).is_some(),
        "{text:?} does not match its own expansion {expanded:?}"
    );
}

/// `template` expanded with the values `v0`, `v1`, … in order, or `None`
/// when it is not a template this expander reads.
fn expand(template: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = template;
    let mut next = 0;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}')?;
        let body = &after[..close];
        let (operator, list) = match body.chars().next() {
            Some(op @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(op), &body[1..]),
            _ => (None, body),
        };
        let (first, separator, named) = match operator {
            None | Some('+') => ("", ",", false),
            Some('#') => ("#", ",", false),
            Some('.') => (".", ".", false),
            Some('/') => ("/", "/", false),
            Some(';') => (";", ";", true),
            Some('?') => ("?", "&", true),
            Some('&') => ("&", "&", true),
            Some(_) => return None,
        };
        let mut items = Vec::new();
        for spec in list.split(',') {
            let spec = spec.trim_end_matches('*');
            let (name, prefix) = match spec.split_once(':') {
                Some((name, length)) => (name, length.parse::<usize>().ok()),
                None => (spec, None),
            };
            let mut value = format!("v{next}");
            next += 1;
            if let Some(length) = prefix {
                value.truncate(length.max(1));
            }
            items.push(if named { format!("{name}={value}") } else { value });
        }
        out.push_str(first);
        out.push_str(&items.join(separator));
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Some(out)
}
