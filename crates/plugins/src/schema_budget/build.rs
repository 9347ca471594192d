//! Reading a schema document into a `Graph`: which keywords apply in place,
//! which descend to members or items, which are data, which are refused,
//! and where a local `$ref` points.

use std::collections::HashMap;

use anyhow::{Result, bail};
use serde_json::Value;

use super::cost::SCAN_UNITS;
use super::document::document_size;
use super::graph::{Edge, Graph, Group, Member, Node, Place, escape, pointer_of};

/// Keywords whose schemas apply to the same value as the schema holding them.
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_MANY: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_MAP: [&str; 2] = ["dependentSchemas", "dependencies"];
/// Keywords whose schema applies to members or items (`items` when it is one schema).
const DESCEND_ONE: [&str; 5] = [
    "additionalProperties",
    "propertyNames",
    "additionalItems",
    "contains",
    "items",
];
/// Keywords holding a list of schemas, one of which applies to each item.
const DESCEND_ONE_OF_LIST: [&str; 2] = ["prefixItems", "items"];
/// Keywords holding schemas by name or pattern: `properties` applies one to
/// a member, `patternProperties` all that match.
const DESCEND_MAP: [&str; 2] = ["properties", "patternProperties"];
/// Keywords whose data is compared against values: they cost their size.
const DATA: [&str; 5] = ["enum", "const", "required", "dependentRequired", "type"];
/// Keywords refused outright, with why.
const REFUSED: [(&str, &str); 4] = [
    (
        "$dynamicRef",
        "dynamic references are not supported; use `$ref` to a `#/$defs/…` pointer",
    ),
    (
        "$recursiveRef",
        "recursive references are not supported; use `$ref` to a `#/$defs/…` pointer",
    ),
    (
        "unevaluatedProperties",
        "is not supported: its evaluation cost cannot be bounded; use `additionalProperties`",
    ),
    (
        "unevaluatedItems",
        "is not supported: its evaluation cost cannot be bounded; use `items`",
    ),
];

/// Builds a `Graph`: each schema gets an index the first time it is reached.
struct Builder<'a> {
    root: &'a Value,
    nodes: Vec<Node<'a>>,
    index: HashMap<*const Value, usize>,
    pending: Vec<(&'a Value, usize)>,
}

impl<'a> Builder<'a> {
    /// The index of the schema at `value`, which is inside `root`, reached
    /// at `place`; and the bytes that place adds to the location.
    fn intern(&mut self, value: &'a Value, place: Place<'a>) -> Edge {
        let segment = place.segment_len();
        let key = value as *const Value;
        if let Some(&i) = self.index.get(&key) {
            return (i, segment);
        }
        let i = self.nodes.len();
        self.index.insert(key, i);
        self.nodes.push(Node {
            place,
            own: 1,
            patterns: 0,
            in_place: Vec::new(),
            descend: Vec::new(),
        });
        self.pending.push((value, i));
        (i, segment)
    }

    /// Reads one schema's keywords into its node.
    fn visit(&mut self, value: &'a Value, i: usize) -> Result<()> {
        let Value::Object(schema) = value else { return Ok(()) };
        let at = |nodes: &[Node], keyword: &str| format!("{}/{}", pointer_of(nodes, i), escape(keyword));
        let under = |keyword: &'a str, member: Option<Member<'a>>| Place::Under {
            parent: i,
            keyword,
            member,
        };
        let mut own = 1u64;
        let mut patterns = 0u64;
        let mut in_place = Vec::new();
        let mut descend = Vec::new();
        for (keyword, child) in schema {
            let k = keyword.as_str();
            if let Some((_, why)) = REFUSED.iter().find(|(refused, _)| *refused == k) {
                bail!("`{k}` at `#{}`: {why}", at(&self.nodes, k));
            }
            own += 1;
            match (k, child) {
                ("$id", _) if !matches!(self.nodes[i].place, Place::Root) => bail!(
                    "`$id` at `#{}`: embedded schema resources are not supported; \
                     keep one document and reference `#/$defs/…`",
                    at(&self.nodes, k)
                ),
                ("$ref", Value::String(reference)) => {
                    let target = resolve(self.root, reference)
                        .map_err(|why| anyhow::anyhow!("`$ref` {reference:?} at `#{}`: {why}", at(&self.nodes, k)))?;
                    in_place.push(self.intern(target, Place::Ref(reference)));
                }
                ("pattern", _) => {
                    patterns += 1;
                    own += SCAN_UNITS;
                }
                ("format" | "uniqueItems" | "contentEncoding" | "contentMediaType", _) => own += SCAN_UNITS,
                _ if DATA.contains(&k) => own += document_size(child).0 as u64,
                _ if IN_PLACE_ONE.contains(&k) => in_place.push(self.intern(child, under(k, None))),
                (_, Value::Array(items)) if IN_PLACE_MANY.contains(&k) => {
                    for (n, item) in items.iter().enumerate() {
                        in_place.push(self.intern(item, under(k, Some(Member::Index(n)))));
                    }
                }
                (_, Value::Object(map)) if IN_PLACE_MAP.contains(&k) => {
                    for (name, item) in map {
                        // `dependencies` also holds arrays of names, which are data.
                        if item.is_object() || item.is_boolean() {
                            in_place.push(self.intern(item, under(k, Some(Member::Key(name)))));
                        } else {
                            own += document_size(item).0 as u64;
                        }
                    }
                }
                (_, Value::Object(_) | Value::Bool(_)) if DESCEND_ONE.contains(&k) => {
                    descend.push(Group::OneOf(vec![self.intern(child, under(k, None))]));
                }
                (_, Value::Array(items)) if DESCEND_ONE_OF_LIST.contains(&k) => {
                    let members = items
                        .iter()
                        .enumerate()
                        .map(|(n, item)| self.intern(item, under(k, Some(Member::Index(n)))))
                        .collect();
                    descend.push(Group::OneOf(members));
                }
                (_, Value::Object(map)) if DESCEND_MAP.contains(&k) => {
                    let members = map
                        .iter()
                        .map(|(name, item)| self.intern(item, under(k, Some(Member::Key(name)))))
                        .collect();
                    // Looking a member up costs one unit per entry.
                    own += map.len() as u64;
                    if k == "patternProperties" {
                        patterns += map.len() as u64;
                        descend.push(Group::All(members));
                    } else {
                        descend.push(Group::OneOf(members));
                    }
                }
                _ => {}
            }
        }
        let node = &mut self.nodes[i];
        node.own = own;
        node.patterns = patterns;
        node.in_place = in_place;
        node.descend = descend;
        Ok(())
    }
}

impl<'a> Graph<'a> {
    pub(super) fn build(root: &'a Value) -> Result<Self> {
        let mut builder = Builder {
            root,
            nodes: Vec::new(),
            index: HashMap::new(),
            pending: Vec::new(),
        };
        builder.intern(root, Place::Root);
        while let Some((value, i)) = builder.pending.pop() {
            builder.visit(value, i)?;
        }
        Ok(Self { nodes: builder.nodes })
    }
}

/// The schema a local reference points at.
fn resolve<'a>(root: &'a Value, reference: &str) -> Result<&'a Value, String> {
    let Some(fragment) = reference.strip_prefix('#') else {
        return Err("only references within the schema (`#/…`) are allowed".into());
    };
    if !fragment.is_empty() && !fragment.starts_with('/') {
        return Err("only JSON pointer references (`#/…`) are supported, not anchors".into());
    }
    let pointer = percent_encoding::percent_decode_str(fragment)
        .decode_utf8()
        .map_err(|_| "the pointer is not valid UTF-8 once percent-decoded".to_string())?;
    root.pointer(&pointer)
        .ok_or_else(|| "points at nothing in the schema".to_string())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::measure;
    use super::super::test_schemas::refused;

    #[test]
    fn only_local_pointer_references_are_followed() {
        for (reference, expected) in [
            ("https://example.com/s.json", "only references within the schema"),
            ("file:///etc/passwd", "only references within the schema"),
            ("other.json#/a", "only references within the schema"),
            ("#anchor", "not anchors"),
            ("#/$defs/missing", "points at nothing"),
        ] {
            let error = refused(json!({"type": "object", "properties": {"a": {"$ref": reference}}}));
            assert!(
                error.contains(expected) && error.contains("/properties/a/$ref"),
                "{reference}: {error}"
            );
        }
        // Percent-encoded and escaped pointers resolve.
        assert!(measure(&json!({"type": "object", "$defs": {"a b": {}, "c/d": {}}, "allOf": [{"$ref": "#/$defs/a%20b"}, {"$ref": "#/$defs/c~1d"}]})).is_ok());
    }

    #[test]
    fn unboundable_keywords_are_refused() {
        for (keyword, value) in [
            ("$dynamicRef", json!("#meta")),
            ("$recursiveRef", json!("#")),
            ("unevaluatedProperties", json!(false)),
            ("unevaluatedItems", json!(false)),
        ] {
            let error = refused(json!({"type": "object", "properties": {"a": {keyword: value}}}));
            assert!(error.contains(keyword) && error.contains("#/properties/a/"), "{error}");
        }
        let error = refused(json!({"type": "object", "properties": {"a": {"$id": "https://x/y"}}}));
        assert!(error.contains("embedded schema resources"), "{error}");
        // At the root `$id` only names the document; properties named like keywords are fine.
        assert!(
            measure(&json!({"$id": "https://x/y", "type": "object", "properties": {"$id": {}, "$dynamicRef": {}}}))
                .is_ok()
        );
    }
}
