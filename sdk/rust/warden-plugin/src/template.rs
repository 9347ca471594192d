//! Matching a URI against an RFC 6570 template of simple `{name}` variables (level 1): a
//! variable matches one or more characters other than `/`, `?` and `#`, and its value is
//! percent-decoded.

use serde_json::{Map, Value};

/// The template's variables and their values, when `uri` matches `template`.
pub fn match_uri(template: &str, uri: &str) -> Option<Map<String, Value>> {
    let mut variables = Map::new();
    let mut rest = uri;
    let mut parts = template.split('{');
    let literal = parts.next()?;
    rest = rest.strip_prefix(literal)?;
    for part in parts {
        let (name, literal) = part.split_once('}')?;
        // The value ends where the next literal starts (or at the end of the URI).
        let end = if literal.is_empty() {
            rest.find(['/', '?', '#']).unwrap_or(rest.len())
        } else {
            rest.find(literal)?
        };
        let value = &rest[..end];
        if value.is_empty() || value.contains(['/', '?', '#']) {
            return None;
        }
        variables.insert(name.to_string(), Value::String(decode(value)?));
        rest = &rest[end + literal.len()..];
    }
    rest.is_empty().then_some(variables)
}

fn decode(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_match_one_segment_each() {
        let found = match_uri("snippets://{language}/{name}", "snippets://rust/read%20file").unwrap();
        assert_eq!(Value::Object(found), json!({"language": "rust", "name": "read file"}));
        assert!(match_uri("snippets://{language}/{name}", "snippets://rust").is_none());
        assert!(match_uri("snippets://{language}/{name}", "snippets://rust/a/b").is_none());
        assert!(match_uri("snippets://{language}/{name}", "other://rust/a").is_none());
        assert!(match_uri("notes://{name}.md", "notes://todo.md").is_some());
        assert!(match_uri("notes://{name}.md", "notes://.md").is_none());
        assert!(match_uri("x://fixed", "x://fixed").unwrap().is_empty());
    }
}
