//! What a schema costs with every `$ref` expanded, counted over the acyclic
//! graph without expanding it.

use super::SchemaCost;
use super::graph::{Graph, Group};

/// Cost units of a keyword that reads the whole value — a pattern match, a
/// format check, hashing items for `uniqueItems` — beyond its size, which
/// `schema_validation::weight` counts.
pub(super) const SCAN_UNITS: u64 = 16;

impl Graph<'_> {
    /// Costs of the acyclic graph, with every path counted (as jsonschema
    /// compiles and evaluates them), saturating.
    pub(super) fn cost(&self) -> SchemaCost {
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
