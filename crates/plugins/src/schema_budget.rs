//! A tool's JSON Schemas come from its plugin, which is untrusted, yet
//! jsonschema compiles and evaluates them on the host. This module bounds
//! what that can cost before jsonschema sees a schema, and compiles it with
//! options that keep evaluation linear.
//!
//! jsonschema 0.33 compiles a `$ref` by compiling its target again at every
//! use (no sharing), and a recursive `$ref` as a lazy node that compiles a
//! fresh copy of its target the first time an instance reaches it — copies
//! that stay in the shared validator. So the cost of a schema is the size of
//! its tree with every `$ref` expanded, and that is what is measured here:
//!
//! - the document: text size, JSON node count and nesting depth;
//! - references: only `#` and `#/json/pointer` within the document; no
//!   `$dynamicRef`, `$recursiveRef` or embedded `$id` (so no file or network
//!   fetch, and a reference always means what this analysis thinks);
//! - no reference cycle at all. A cycle through keywords that apply to the
//!   same value (`allOf`, `$ref`, …) never terminates and overflows the
//!   stack; one that descends (`properties`, `items`, …) makes the shared
//!   validator grow by a copy of the schema for every new path an argument
//!   takes, across calls, without bound. Recursive schemas are refused: a
//!   plugin that takes recursive data can declare that part as `{}` and check
//!   it itself;
//! - with references expanded: the compiled size, the nesting depth (the
//!   host stack evaluation needs), the `pattern`s compiled, and the work one
//!   value of an instance can receive — so that evaluation costs at most
//!   `MAX_WORK_PER_VALUE` units for each value in the instance (plus the
//!   length of strings matched by patterns), never more;
//! - the schema locations jsonschema keeps: every compiled keyword holds
//!   its full JSON pointer as a string of its own (`jsonschema::paths::Location`),
//!   so long property names nested deep under many siblings cost the
//!   product of the two — bounded by `MAX_LOCATION_BYTES`, summed over the
//!   expansion. The analysis itself keeps each schema's place as its parent
//!   and one segment, never the whole pointer;
//! - `unevaluatedProperties` / `unevaluatedItems` are refused: jsonschema
//!   evaluates them by re-validating every applicator for every property, a
//!   cost that grows with nesting and is not bounded by the measures above.
//!
//! Patterns run on the `regex` crate's engine (linear time, no
//! backtracking; look-around and back-references are refused when the
//! schema compiles), with bounded compiled and cache sizes.

use std::collections::HashMap;

use anyhow::{Result, bail};
use serde_json::Value;

/// The longest schema text accepted (input and output schema each).
pub const MAX_SCHEMA_BYTES: usize = 256 << 10;
/// JSON values in one schema document.
pub const MAX_SCHEMA_NODES: usize = 20_000;
/// Nesting of the schema document (objects and arrays).
pub const MAX_SCHEMA_DEPTH: usize = 48;
/// Cost units of the schema with every `$ref` expanded: what jsonschema
/// compiles and keeps in memory.
pub const MAX_EXPANDED_UNITS: u64 = 50_000;
/// Schemas nested in one another with every `$ref` expanded: evaluation
/// recurses once per level on a 2 MiB async worker stack.
pub const MAX_EXPANDED_DEPTH: u64 = 64;
/// Cost units one value of an instance can receive from the whole schema.
pub const MAX_WORK_PER_VALUE: u64 = 2_000;
/// `pattern`s and `patternProperties` keys compiled, references expanded.
pub const MAX_PATTERNS: u64 = 100;
/// Bytes of schema locations (JSON pointers) jsonschema keeps, one per cost
/// unit, references expanded.
pub const MAX_LOCATION_BYTES: u64 = 16 << 20;
/// Heap one compiled pattern may take, and its lazy DFA cache.
pub const PATTERN_SIZE_LIMIT: usize = 256 << 10;

/// Cost units of a keyword that reads the whole value — a pattern match, a
/// format check, hashing items for `uniqueItems` — beyond its size, which
/// `schema_validation::weight` counts.
const SCAN_UNITS: u64 = 16;

/// What a schema that passed costs, for the plugin-wide totals.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchemaCost {
    /// Cost units with references expanded (compiled size).
    pub expanded: u64,
    /// Nesting depth with references expanded.
    pub depth: u64,
    /// Cost units the top-level value (the arguments object) can receive.
    pub root_work: u64,
    /// Most cost units any other value of an instance can receive.
    pub value_work: u64,
    /// Patterns compiled.
    pub patterns: u64,
    /// Bytes of the locations compiled keywords hold.
    pub locations: u64,
}

/// Refuses a schema text too long to parse.
pub fn check_text(text: &str) -> Result<()> {
    if text.len() > MAX_SCHEMA_BYTES {
        bail!(
            "is {} bytes, more than the {} KiB a schema may have",
            text.len(),
            MAX_SCHEMA_BYTES >> 10
        );
    }
    Ok(())
}

/// Checks a parsed schema against every bound, then compiles it.
pub fn compile(schema: &Value) -> Result<(jsonschema::Validator, SchemaCost)> {
    let cost = measure(schema)?;
    let validator = options()
        .build(schema)
        .map_err(|e| anyhow::anyhow!("is not a valid JSON Schema: {e}"))?;
    Ok((validator, cost))
}

/// jsonschema's options for plugin schemas: nothing fetched, linear patterns.
fn options() -> jsonschema::ValidationOptions {
    jsonschema::options().with_retriever(NoRetrieval).with_pattern_options(
        jsonschema::PatternOptions::regex()
            .size_limit(PATTERN_SIZE_LIMIT)
            .dfa_size_limit(PATTERN_SIZE_LIMIT),
    )
}

/// References never leave the document (`measure` refuses them first); a
/// `$schema` naming an unknown meta-schema ends up here and is refused.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(&self, uri: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("`{uri}` is outside the schema; Warden never fetches schemas").into())
    }
}

/// Refuses a JSON document with more values, or deeper nesting, than a
/// schema may have (for JSON a plugin hands over that is not compiled).
pub fn check_document(value: &Value) -> Result<()> {
    let (nodes, depth) = document_size(value);
    if nodes > MAX_SCHEMA_NODES {
        bail!("has {nodes} JSON values, more than the {MAX_SCHEMA_NODES} a schema may have");
    }
    if depth > MAX_SCHEMA_DEPTH {
        bail!("nests {depth} levels deep, more than the {MAX_SCHEMA_DEPTH} a schema may");
    }
    Ok(())
}

/// Measures `schema` and refuses it when a bound is exceeded.
pub fn measure(schema: &Value) -> Result<SchemaCost> {
    check_document(schema)?;
    let graph = Graph::build(schema)?;
    graph.refuse_cycles()?;
    let cost = graph.cost();
    if cost.expanded > MAX_EXPANDED_UNITS {
        bail!(
            "expands to {} cost units with its `$ref`s followed, more than {MAX_EXPANDED_UNITS}; \
             reference shared definitions less often",
            cost.expanded
        );
    }
    if cost.depth > MAX_EXPANDED_DEPTH {
        bail!(
            "nests {} schemas deep with its `$ref`s followed, more than {MAX_EXPANDED_DEPTH}",
            cost.depth
        );
    }
    let work_per_value = cost.root_work.max(cost.value_work);
    if work_per_value > MAX_WORK_PER_VALUE {
        bail!(
            "could apply {work_per_value} cost units of checks to a single value, more than {MAX_WORK_PER_VALUE}; \
             nested `allOf`/`anyOf`/`oneOf` of `$ref`s multiply the work"
        );
    }
    if cost.locations > MAX_LOCATION_BYTES {
        bail!(
            "would make jsonschema keep {} bytes of schema locations (each compiled keyword holds its \
             whole JSON pointer) with its `$ref`s followed, more than {} MiB; use shorter property \
             names or nest them less deeply",
            cost.locations,
            MAX_LOCATION_BYTES >> 20
        );
    }
    if cost.patterns > MAX_PATTERNS {
        bail!(
            "compiles {} patterns with its `$ref`s followed, more than {MAX_PATTERNS}",
            cost.patterns
        );
    }
    Ok(cost)
}

/// JSON values in `value` and how deeply they nest.
fn document_size(value: &Value) -> (usize, usize) {
    match value {
        Value::Array(items) => items
            .iter()
            .map(document_size)
            .fold((1, 1), |(n, d), (cn, cd)| (n + cn, d.max(cd + 1))),
        Value::Object(map) => map
            .values()
            .map(document_size)
            .fold((1, 1), |(n, d), (cn, cd)| (n + cn, d.max(cd + 1))),
        _ => (1, 1),
    }
}

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

/// How a group of child schemas reaches one member or item.
enum Group {
    /// At most one of them applies.
    OneOf(Vec<Edge>),
    /// All of them may apply (`patternProperties`: each is a pattern tried
    /// on every member's name).
    All(Vec<Edge>),
}

/// Where a schema is: its parent and the keyword (and member) below it, or
/// the target of a `$ref`. Kept as references into the document, so that a
/// deep schema with long keys costs no more than its text; the JSON pointer
/// is written out only for a message.
#[derive(Clone, Copy)]
enum Place<'a> {
    Root,
    Under {
        parent: usize,
        keyword: &'a str,
        member: Option<Member<'a>>,
    },
    Ref(&'a str),
}

#[derive(Clone, Copy)]
enum Member<'a> {
    Key(&'a str),
    Index(usize),
}

impl Place<'_> {
    /// The bytes this place adds to its parent's location, as jsonschema writes it.
    fn segment_len(&self) -> u64 {
        let escaped = |key: &str| 1 + key.len() + key.matches(['~', '/']).count();
        match self {
            Place::Root => 0,
            // jsonschema compiles a reference's target at `…/$ref`.
            Place::Ref(_) => "/$ref".len() as u64,
            Place::Under { keyword, member, .. } => {
                let member = match member {
                    None => 0,
                    Some(Member::Key(key)) => escaped(key),
                    Some(Member::Index(n)) => 1 + n.to_string().len(),
                };
                (escaped(keyword) + member) as u64
            }
        }
    }
}

/// A child schema and the bytes its place adds to the location.
type Edge = (usize, u64);

/// One schema (a document location reached by keywords or `$ref`).
struct Node<'a> {
    /// Where it was first reached, for messages.
    place: Place<'a>,
    /// Cost units of the schema's own keywords.
    own: u64,
    patterns: u64,
    in_place: Vec<Edge>,
    descend: Vec<Group>,
}

/// Every schema reachable from the root, each once, linked by keywords.
struct Graph<'a> {
    nodes: Vec<Node<'a>>,
}

/// The JSON pointer of node `i`, for messages.
fn pointer_of(nodes: &[Node], i: usize) -> String {
    let mut segments = Vec::new();
    let mut at = i;
    let base = loop {
        match nodes[at].place {
            Place::Root => break String::new(),
            Place::Ref(reference) => break reference.trim_start_matches('#').to_string(),
            Place::Under {
                parent,
                keyword,
                member,
            } => {
                let member = match member {
                    None => String::new(),
                    Some(Member::Key(key)) => format!("/{}", escape(key)),
                    Some(Member::Index(n)) => format!("/{n}"),
                };
                segments.push(format!("/{}{member}", escape(keyword)));
                at = parent;
            }
        }
    };
    segments.iter().rev().fold(base, |pointer, segment| pointer + segment)
}

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
    fn build(root: &'a Value) -> Result<Self> {
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

    /// Refuses any reference cycle, naming the schemas on it.
    fn refuse_cycles(&self) -> Result<()> {
        if let Some(cycle) = self.cycle(false) {
            bail!(
                "its `$ref`s form a cycle that applies to the same value forever ({}); \
                 evaluating it would overflow the stack",
                self.describe(&cycle)
            );
        }
        if let Some(cycle) = self.cycle(true) {
            bail!(
                "is recursive ({}): recursive schemas are not supported, because jsonschema keeps a \
                 new copy of the schema for every level an argument reaches; declare the recursive \
                 part as `{{}}` and check it in the plugin",
                self.describe(&cycle)
            );
        }
        Ok(())
    }

    fn describe(&self, cycle: &[usize]) -> String {
        let mut names: Vec<String> = cycle
            .iter()
            .map(|&i| format!("`#{}`", pointer_of(&self.nodes, i)))
            .collect();
        names.push(names[0].clone());
        names.join(" → ")
    }

    fn children(&self, i: usize, descending: bool) -> impl Iterator<Item = usize> + '_ {
        let node = &self.nodes[i];
        let descend = node.descend.iter().filter(move |_| descending).flat_map(|g| match g {
            Group::OneOf(m) | Group::All(m) => m.iter().map(|&(c, _)| c),
        });
        node.in_place.iter().map(|&(c, _)| c).chain(descend)
    }

    /// A cycle of schemas, if any; through descending keywords too when asked.
    fn cycle(&self, descending: bool) -> Option<Vec<usize>> {
        #[derive(Clone, Copy, PartialEq)]
        enum Mark {
            New,
            Open,
            Done,
        }
        let mut mark = vec![Mark::New; self.nodes.len()];
        for start in 0..self.nodes.len() {
            if mark[start] != Mark::New {
                continue;
            }
            // Iterative depth-first search: the path is the open schemas.
            let mut path: Vec<(usize, Vec<usize>)> = vec![(start, self.children(start, descending).collect())];
            mark[start] = Mark::Open;
            while let Some((node, next)) = path.last_mut() {
                match next.pop() {
                    Some(child) => match mark[child] {
                        Mark::New => {
                            mark[child] = Mark::Open;
                            let children = self.children(child, descending).collect();
                            path.push((child, children));
                        }
                        Mark::Open => {
                            let from = path.iter().position(|(n, _)| *n == child).unwrap_or(0);
                            return Some(path[from..].iter().map(|(n, _)| *n).collect());
                        }
                        Mark::Done => {}
                    },
                    None => {
                        mark[*node] = Mark::Done;
                        path.pop();
                    }
                }
            }
        }
        None
    }

    /// Costs of the acyclic graph, with every path counted (as jsonschema
    /// compiles and evaluates them), saturating.
    fn cost(&self) -> SchemaCost {
        #[derive(Clone, Copy, Default)]
        struct Measure {
            expanded: u64,
            depth: u64,
            patterns: u64,
            /// Work on the value the schema is applied to.
            here: u64,
            /// Most work on any one value below it.
            below: u64,
            /// Location bytes of everything below it, relative to its own.
            locations: u64,
        }
        let mut memo: Vec<Option<Measure>> = vec![None; self.nodes.len()];
        // Post-order without recursion: children before parents.
        let mut stack = vec![(0usize, false)];
        while let Some((i, expanded)) = stack.pop() {
            if memo[i].is_some() {
                continue;
            }
            if !expanded {
                stack.push((i, true));
                stack.extend(
                    self.children(i, true)
                        .filter(|&c| memo[c].is_none())
                        .map(|c| (c, false)),
                );
                continue;
            }
            let node = &self.nodes[i];
            let get = |c: usize| memo[c].expect("children are measured first");
            let mut m = Measure {
                expanded: node.own,
                depth: 1,
                patterns: node.patterns,
                here: node.own,
                below: 0,
                locations: 0,
            };
            let value_work = |c: Measure| c.here.max(c.below);
            // Each of a child's units holds a location through this node's.
            let located = |c: Measure, segment: u64| segment.saturating_mul(c.expanded).saturating_add(c.locations);
            for &(c, segment) in &node.in_place {
                let c = get(c);
                m.locations = m.locations.saturating_add(located(c, segment));
                m.expanded = m.expanded.saturating_add(c.expanded);
                m.depth = m.depth.max(c.depth.saturating_add(1));
                m.patterns = m.patterns.saturating_add(c.patterns);
                m.here = m.here.saturating_add(c.here);
                m.below = m.below.saturating_add(c.below);
            }
            for group in &node.descend {
                let (Group::OneOf(members) | Group::All(members)) = group;
                // Every member's name is matched against every pattern.
                let mut reach = match group {
                    Group::OneOf(_) => 0,
                    Group::All(_) => SCAN_UNITS.saturating_mul(members.len() as u64),
                };
                for &(c, segment) in members {
                    let c = get(c);
                    m.locations = m.locations.saturating_add(located(c, segment));
                    m.expanded = m.expanded.saturating_add(c.expanded);
                    m.depth = m.depth.max(c.depth.saturating_add(1));
                    m.patterns = m.patterns.saturating_add(c.patterns);
                    reach = match group {
                        Group::OneOf(_) => reach.max(value_work(c)),
                        Group::All(_) => reach.saturating_add(value_work(c)),
                    };
                }
                m.below = m.below.saturating_add(reach);
            }
            memo[i] = Some(m);
        }
        let root = memo[0].unwrap_or_default();
        SchemaCost {
            expanded: root.expanded,
            depth: root.depth,
            root_work: root.here,
            value_work: root.below,
            patterns: root.patterns,
            locations: root.locations,
        }
    }
}

/// A key as a JSON pointer segment.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
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

    use super::*;

    fn refused(schema: Value) -> String {
        format!("{:#}", measure(&schema).expect_err("the schema is refused"))
    }

    /// `depth` levels of `allOf: [$ref, $ref]`, each to the level below: the
    /// schema that made jsonschema allocate 24 GB evaluating one argument.
    fn nested_ref_all_of(depth: usize) -> Value {
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "object"}));
        for level in 1..=depth {
            let below = format!("#/$defs/d{}", level - 1);
            defs.insert(
                format!("d{level}"),
                json!({"allOf": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        json!({"type": "object", "$defs": defs, "$ref": format!("#/$defs/d{depth}")})
    }

    #[test]
    fn ordinary_schemas_are_cheap() {
        let cost = measure(&json!({
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
            "properties": {
                "name": {"type": "string", "pattern": "^[a-z]+$"},
                "home": {"$ref": "#/$defs/address"},
                "work": {"$ref": "#/$defs/address"},
                "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
            },
            "required": ["name"],
            "additionalProperties": false
        }))
        .unwrap();
        assert_eq!(cost.patterns, 1);
        assert_eq!(cost.depth, 4, "root → home → its $ref's target → city");
        assert!(
            cost.root_work < 30 && cost.value_work < 40 && cost.expanded < 100,
            "{cost:?}"
        );
    }

    #[test]
    fn exponential_ref_expansion_is_refused() {
        // Ten levels double to 1024 copies: allowed. Thirty would be 10⁹.
        assert!(measure(&nested_ref_all_of(6)).is_ok());
        let error = refused(nested_ref_all_of(30));
        assert!(error.contains("cost units with its `$ref`s followed"), "{error}");
    }

    #[test]
    fn work_on_one_value_is_bounded_even_when_compiled_size_is_fine() {
        // 40 alternatives each checking a 60-value enum apply to every item.
        let alternatives: Vec<Value> = (0..40)
            .map(|n| json!({"enum": (0..60).map(|i| i * n).collect::<Vec<_>>()}))
            .collect();
        let error = refused(
            json!({"type": "object", "properties": {"x": {"type": "array", "items": {"anyOf": alternatives}}}}),
        );
        assert!(error.contains("cost units of checks to a single value"), "{error}");
    }

    /// Not a test: prints how long the costliest per-value schema allowed
    /// takes on a million worst-case items, bypassing the per-call budget of
    /// `schema_validation` (70 s in a debug build here: ~36 ns a unit).
    /// `cargo test -p warden --lib -- --ignored --nocapture schema_budget::tests::measure`.
    #[test]
    #[ignore]
    fn measure_worst_case_evaluation() {
        let alternatives: Vec<Value> = (0..31)
            .map(|a| json!({"enum": (0..60).map(|i| a * 60 + i).collect::<Vec<_>>()}))
            .collect();
        let schema =
            json!({"type": "object", "properties": {"items": {"type": "array", "items": {"anyOf": alternatives}}}});
        let (validator, cost) = compile(&schema).unwrap();
        let items = vec![json!(31 * 60 - 1); 1 << 20]; // valid only by the last value of the last alternative
        let instance = json!({"items": items});
        let started = std::time::Instant::now();
        let valid = validator.is_valid(&instance);
        println!("{cost:?}: {} items, valid {valid}, {:?}", 1 << 20, started.elapsed());
    }

    /// 8 levels of 10 000-character property names, then 110 × 100 empty properties
    /// (100 per object, within the work one value may get): under 256 KiB of text and
    /// every other bound, yet each of the 11 000 keeps its 80 KB location in jsonschema
    /// (and kept it in this analysis before it kept places).
    fn long_locations() -> Value {
        let group = |g: usize| {
            let leaves: serde_json::Map<String, Value> = (0..100).map(|n| (format!("p{n}"), json!({}))).collect();
            (format!("g{g}"), json!({ "properties": leaves }))
        };
        let groups: serde_json::Map<String, Value> = (0..110).map(group).collect();
        let mut schema = json!({ "properties": groups });
        for level in 0..8 {
            schema = json!({ "properties": { format!("{level}{}", "k".repeat(10_000)): schema } });
        }
        schema["type"] = json!("object");
        schema
    }

    #[test]
    fn long_names_nested_under_many_schemas_are_refused_for_their_locations() {
        let schema = long_locations();
        assert!(schema.to_string().len() < MAX_SCHEMA_BYTES);
        let started = std::time::Instant::now();
        let error = refused(schema);
        assert!(
            error.contains("bytes of schema locations") && error.contains("more than 16 MiB"),
            "{error}"
        );
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "a hang, not a timing check"
        );
        // Shorter names under the same nesting are fine.
        let cost = measure(&nested_ref_all_of(6)).unwrap();
        assert!(cost.locations > 0 && cost.locations < 100_000, "{cost:?}");
    }

    /// Not a test: what compiling `long_locations` costs jsonschema, bypassing the bound
    /// (`cargo test -p warden --lib -- --ignored --nocapture schema_budget::tests::measure_long_locations`).
    #[test]
    #[ignore]
    fn measure_long_locations() {
        let peak = || {
            let status = std::fs::read_to_string("/proc/self/status").unwrap();
            status.lines().find(|l| l.starts_with("VmHWM:")).unwrap().to_string()
        };
        let before = peak();
        let validator = options().build(&long_locations()).unwrap();
        println!("compiled: {before} → {}", peak());
        drop(validator);
    }

    #[test]
    fn reference_cycles_are_refused() {
        let same_value = refused(
            json!({"type": "object", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}),
        );
        assert!(same_value.contains("applies to the same value forever"), "{same_value}");
        assert!(same_value.contains("`#/$defs/a`"), "{same_value}");
        let itself = refused(json!({"type": "object", "allOf": [{"$ref": "#"}]}));
        assert!(itself.contains("same value forever"), "{itself}");
        let tree = refused(json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}
        }));
        assert!(
            tree.contains("is recursive") && tree.contains("declare the recursive part"),
            "{tree}"
        );
    }

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

    #[test]
    fn document_size_and_depth_are_bounded() {
        let mut deep = json!({});
        for _ in 0..60 {
            deep = json!({"not": deep});
        }
        assert!(refused(deep).contains("nests"));
        let wide = json!({"type": "object", "enum": vec![0; MAX_SCHEMA_NODES]});
        assert!(refused(wide).contains("JSON values"));
        let text = format!(
            r#"{{"type":"object","description":"{}"}}"#,
            "x".repeat(MAX_SCHEMA_BYTES)
        );
        let error = check_text(&text).unwrap_err();
        assert!(format!("{error:#}").contains("KiB a schema may have"));
    }

    #[test]
    fn patterns_use_the_linear_engine_and_are_bounded() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}});
        let (validator, _) = compile(&schema).unwrap();
        // Catastrophic for a backtracking engine; linear here.
        let evil = format!("{}!", "a".repeat(100_000));
        let started = std::time::Instant::now();
        assert!(!validator.is_valid(&json!({"a": evil})));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "a hang, not a timing check"
        );
        // Back-references need backtracking: refused at compile.
        let schema = json!({"type": "object", "properties": {"a": {"pattern": "^(a)\\1$"}}});
        assert!(compile(&schema).is_err());
        let many: serde_json::Map<String, Value> = (0..=MAX_PATTERNS).map(|n| (format!("^p{n}"), json!({}))).collect();
        assert!(refused(json!({"type": "object", "patternProperties": many})).contains("patterns"));
    }

    #[test]
    fn nothing_is_fetched() {
        let schema = json!({"$schema": "https://example.com/custom-meta", "type": "object"});
        let error = format!("{:#}", compile(&schema).unwrap_err());
        assert!(error.contains("not a valid JSON Schema"), "{error}");
    }

    #[test]
    fn the_deepest_schema_allowed_evaluates_on_a_small_stack() {
        // Depth is what evaluation recursion follows: check it fits in the
        // 2 MiB a tokio worker thread has.
        // Each level is an array whose items are the level below (2 schemas).
        let levels = (MAX_EXPANDED_DEPTH as usize - 3) / 2;
        let mut defs = serde_json::Map::new();
        defs.insert("d0".into(), json!({"type": "integer"}));
        let mut instance = json!(1);
        for level in 1..=levels {
            let below = format!("#/$defs/d{}", level - 1);
            defs.insert(format!("d{level}"), json!({"type": "array", "items": {"$ref": below}}));
            instance = json!([instance]);
        }
        let schema =
            json!({"type": "object", "$defs": defs, "properties": {"a": {"$ref": format!("#/$defs/d{levels}")}}});
        let instance = json!({"a": instance});
        let cost = measure(&schema).unwrap();
        assert!(cost.depth >= MAX_EXPANDED_DEPTH - 3, "{cost:?}");
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let (validator, _) = compile(&schema).unwrap();
                // `iter_errors` is what calls use (`declarations::violations`).
                assert_eq!(validator.iter_errors(&instance).count(), 0);
                assert_eq!(validator.iter_errors(&json!({"a": [[["x"]]]})).count(), 1);
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
