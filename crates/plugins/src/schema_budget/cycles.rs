//! Reference cycles, refused: one through keywords that apply to the same
//! value never terminates; one that descends grows the validator without
//! bound.

use anyhow::{Result, bail};

use super::graph::{Graph, pointer_of};

impl Graph<'_> {
    /// Refuses any reference cycle, naming the schemas on it.
    pub(super) fn refuse_cycles(&self) -> Result<()> {
        if let Some(cycle) = self.cycle(false) {
            bail!(
                "its `$ref`s form a cycle that applies to the same value forever ({}); \
                 a schema's checks must end",
                self.describe(&cycle)
            );
        }
        if let Some(cycle) = self.cycle(true) {
            bail!(
                "is recursive ({}): recursive schemas are not supported, because Warden bounds what \
                 checking an argument costs by following every path through the schema; declare the \
                 recursive part as `{{}}` and check it in the plugin",
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
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::test_schemas::refused;

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
}
