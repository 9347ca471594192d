//! The load budget of one plain component: everything Warden writes while
//! turning its types into tools — schemas, descriptions, signatures, names —
//! is counted as it is written, before it is allocated, against bounds per
//! text and one budget shared by all of the component's functions.
//!
//! A component's types form a graph: a type defined once can be used a
//! thousand times, and each use is written out in full (an enum's case names
//! at every field that has it), so what a few kilobytes of component
//! describe can be gigabytes of text. Counting types visited is not enough:
//! one enum type is one visit, yet writes all its names. So the unit here is
//! what is written, in bytes, and the JSON values (or types rendered) those
//! bytes hold.
//!
//! - Each text (an input schema, an output schema, the schema of an error
//!   type, a description) may take at most `schema_budget::MAX_SCHEMA_BYTES`
//!   bytes and `schema_budget::MAX_SCHEMA_NODES` values: the bounds a
//!   declared schema is held to. A function whose text would pass either is
//!   skipped, naming the text and the bound; the component's other functions
//!   still load.
//! - All texts of the component together, kept or not (a skipped function's
//!   work counts too), may take `LoadBudget::for_component(size)` bytes:
//!   max(`MIN_LOAD_BYTES`, `LOAD_BYTES_PER_COMPONENT_BYTE` × the component's
//!   size), at most `MAX_LOAD_BYTES`; and `MAX_LOAD_NODES` values. A
//!   component that needs more is refused whole, naming the function that
//!   crossed the bound: which of its functions would load would otherwise
//!   depend on their order.

use std::cell::Cell;
use std::fmt;

use crate::schema_budget::{MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES};

/// Bytes any component may have derived from its types, however small it is.
pub const MIN_LOAD_BYTES: usize = 1 << 20;
/// Bytes a component may have derived per byte of its own size.
pub const LOAD_BYTES_PER_COMPONENT_BYTE: usize = 16;
/// The most bytes any component may have derived: what a plugin may declare
/// in all (`declaration_limits::MAX_DECLARED_BYTES`), since more would be
/// refused anyway.
pub const MAX_LOAD_BYTES: usize = crate::declaration_limits::MAX_DECLARED_BYTES;
/// The most JSON values (and types rendered in signatures) all of a
/// component's texts may hold: what all of a plugin's schemas may cost
/// (`declarations::MAX_PLUGIN_SCHEMA_UNITS`).
pub const MAX_LOAD_NODES: usize = crate::declarations::MAX_PLUGIN_SCHEMA_UNITS as usize;

/// What one component may have written for it, and what it has.
#[derive(Debug)]
pub struct LoadBudget {
    max_bytes: usize,
    component_bytes: usize,
    bytes: Cell<usize>,
    nodes: Cell<usize>,
}

impl LoadBudget {
    /// The budget of a component of `component_bytes` bytes.
    pub fn for_component(component_bytes: usize) -> Self {
        let max_bytes = component_bytes
            .saturating_mul(LOAD_BYTES_PER_COMPONENT_BYTE)
            .clamp(MIN_LOAD_BYTES, MAX_LOAD_BYTES);
        Self {
            max_bytes,
            component_bytes,
            bytes: Cell::new(0),
            nodes: Cell::new(0),
        }
    }

    /// The most bytes this component may have derived.
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// Bytes written so far, kept or not.
    pub fn bytes(&self) -> usize {
        self.bytes.get()
    }

    /// JSON values and types written so far.
    pub fn nodes(&self) -> usize {
        self.nodes.get()
    }

    /// Counts `bytes` and `nodes` about to be written, or refuses them.
    pub fn spend(&self, bytes: usize, nodes: usize) -> Result<(), OverBudget> {
        let total_bytes = self.bytes.get().saturating_add(bytes);
        if total_bytes > self.max_bytes {
            return Err(OverBudget::ComponentBytes {
                max: self.max_bytes,
                component: self.component_bytes,
            });
        }
        let total_nodes = self.nodes.get().saturating_add(nodes);
        if total_nodes > MAX_LOAD_NODES {
            return Err(OverBudget::ComponentNodes);
        }
        self.bytes.set(total_bytes);
        self.nodes.set(total_nodes);
        Ok(())
    }
}

/// Which bound a text would have passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OverBudget {
    /// One text's bytes (`MAX_SCHEMA_BYTES`).
    TextBytes(&'static str),
    /// One text's values (`MAX_SCHEMA_NODES`).
    TextNodes(&'static str),
    /// All the component's texts' bytes.
    ComponentBytes { max: usize, component: usize },
    /// All the component's texts' values.
    ComponentNodes,
}

impl OverBudget {
    /// Whether the bound is the component's, so that no further function can load.
    pub fn is_component_wide(&self) -> bool {
        matches!(self, Self::ComponentBytes { .. } | Self::ComponentNodes)
    }
}

impl fmt::Display for OverBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TextBytes(what) => write!(
                f,
                "its {what} would take more than {} KiB, the most one derived text may (`MAX_SCHEMA_BYTES`)",
                MAX_SCHEMA_BYTES >> 10
            ),
            Self::TextNodes(what) => write!(
                f,
                "its {what} would hold more than {MAX_SCHEMA_NODES} JSON values or types, the most one derived \
                 text may (`MAX_SCHEMA_NODES`)"
            ),
            Self::ComponentBytes { max, component } => write!(
                f,
                "deriving the component's tools would write more than {max} bytes, its load budget \
                 (max({} MiB, {LOAD_BYTES_PER_COMPONENT_BYTE} × its {component} bytes), at most {} MiB); \
                 its types describe far more than the component holds",
                MIN_LOAD_BYTES >> 20,
                MAX_LOAD_BYTES >> 20
            ),
            Self::ComponentNodes => write!(
                f,
                "deriving the component's tools would write more than {MAX_LOAD_NODES} JSON values or types, \
                 the most one component may (`MAX_LOAD_NODES`)"
            ),
        }
    }
}

/// One text being written under the budget: its bytes and values are counted
/// against its own bounds and the component's before each piece is appended.
pub struct Text<'b> {
    budget: &'b LoadBudget,
    what: &'static str,
    out: String,
    nodes: usize,
}

impl<'b> Text<'b> {
    /// An empty text; `what` names it in refusals ("input schema").
    pub fn new(budget: &'b LoadBudget, what: &'static str) -> Self {
        Self {
            budget,
            what,
            out: String::new(),
            nodes: 0,
        }
    }

    /// Appends `text` as it is.
    pub fn push(&mut self, text: &str) -> Result<(), OverBudget> {
        self.reserve(text.len(), 0)?;
        self.out.push_str(text);
        Ok(())
    }

    /// Appends `text` as a JSON string, quoted and escaped.
    pub fn json_string(&mut self, text: &str) -> Result<(), OverBudget> {
        self.reserve(json_string_len(text), 0)?;
        self.out.push('"');
        for c in text.chars() {
            match c {
                '"' => self.out.push_str("\\\""),
                '\\' => self.out.push_str("\\\\"),
                '\n' => self.out.push_str("\\n"),
                '\r' => self.out.push_str("\\r"),
                '\t' => self.out.push_str("\\t"),
                '\u{8}' => self.out.push_str("\\b"),
                '\u{c}' => self.out.push_str("\\f"),
                c if (c as u32) < 0x20 => self.out.push_str(&format!("\\u{:04x}", c as u32)),
                c => self.out.push(c),
            }
        }
        self.out.push('"');
        Ok(())
    }

    /// Counts `count` JSON values (or types rendered) about to be written.
    pub fn values(&mut self, count: usize) -> Result<(), OverBudget> {
        self.reserve(0, count)
    }

    fn reserve(&mut self, bytes: usize, nodes: usize) -> Result<(), OverBudget> {
        if self.out.len().saturating_add(bytes) > MAX_SCHEMA_BYTES {
            return Err(OverBudget::TextBytes(self.what));
        }
        if self.nodes.saturating_add(nodes) > MAX_SCHEMA_NODES {
            return Err(OverBudget::TextNodes(self.what));
        }
        self.budget.spend(bytes, nodes)?;
        self.nodes += nodes;
        Ok(())
    }

    /// JSON values (or types) written.
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// The length of `text` as serde_json writes it as a JSON string.
fn json_string_len(text: &str) -> usize {
    2 + text
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_scales_with_the_component_between_its_floor_and_ceiling() {
        assert_eq!(LoadBudget::for_component(1_000).max_bytes(), MIN_LOAD_BYTES);
        assert_eq!(LoadBudget::for_component(100 << 10).max_bytes(), 1600 << 10);
        assert_eq!(LoadBudget::for_component(20 << 20).max_bytes(), MAX_LOAD_BYTES);
    }

    #[test]
    fn strings_are_escaped_as_serde_json_does_and_counted_exactly() {
        let budget = LoadBudget::for_component(0);
        for text in [
            "plain",
            "quote\" back\\slash",
            "line\nbreak\ttab\u{1}\u{7f}",
            "é✓🦀",
            "",
        ] {
            let mut out = Text::new(&budget, "test");
            out.json_string(text).unwrap();
            let written = out.finish();
            assert_eq!(written, serde_json::to_string(text).unwrap());
            assert_eq!(written.len(), json_string_len(text));
        }
    }

    #[test]
    fn each_bound_refuses_before_writing() {
        let budget = LoadBudget::for_component(0);
        let mut out = Text::new(&budget, "input schema");
        out.push(&"x".repeat(MAX_SCHEMA_BYTES)).unwrap();
        assert_eq!(out.push("y"), Err(OverBudget::TextBytes("input schema")));
        assert_eq!(out.len(), MAX_SCHEMA_BYTES);
        let mut out = Text::new(&budget, "description");
        out.values(MAX_SCHEMA_NODES).unwrap();
        assert_eq!(out.values(1), Err(OverBudget::TextNodes("description")));
        // The shared budget counts every text, kept or not.
        assert_eq!(budget.bytes(), MAX_SCHEMA_BYTES);
        let mut spent = MAX_SCHEMA_BYTES;
        let refused = loop {
            let mut out = Text::new(&budget, "input schema");
            match out.push(&"x".repeat(200 << 10)) {
                Ok(()) => spent += 200 << 10,
                Err(refused) => break refused,
            }
        };
        assert!(refused.is_component_wide(), "{refused}");
        assert!(spent <= MIN_LOAD_BYTES && budget.bytes() == spent);
        let message = refused.to_string();
        assert!(
            message.contains("more than 1048576 bytes") && message.contains("its 0 bytes"),
            "{message}"
        );
    }
}
