//! `cargo xtask layers`: the layering the README's Layout section states,
//! checked. Warden is a stack of crates, each allowed to depend only on the
//! ones below it; inside a crate no module imports one that imports it back;
//! and no source file grows past [`MAX_LINES`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Warden's crates, lowest first: each may depend only on those before it.
pub const LAYERS: [&str; 7] = [
    "warden-origin",
    "warden-runtime",
    "warden-plugins",
    "warden-mcp",
    "warden-transport",
    "warden-registry",
    "warden",
];

/// Past this many lines a file holds more than one concept.
pub const MAX_LINES: usize = 600;

/// What is wrong with the layering, one line per fault (empty: it holds).
pub fn check(root: &Path) -> Result<Vec<String>> {
    let mut faults = Vec::new();
    for (package, dir, deps) in packages(root)? {
        let Some(level) = LAYERS.iter().position(|l| *l == package) else {
            continue;
        };
        for dep in deps.iter().filter(|d| d.starts_with("warden")) {
            match LAYERS.iter().position(|l| l == dep) {
                Some(at) if at < level => {}
                _ => faults.push(format!(
                    "{package} depends on {dep}, which is not below it in {LAYERS:?}"
                )),
            }
        }
        let src = dir.join("src");
        let modules = module_imports(&src)?;
        for cycle in cycles(&modules) {
            faults.push(format!("{package}: modules import each other: {}", cycle.join(" → ")));
        }
        for (file, lines) in long_files(&src)? {
            faults.push(format!("{}: {lines} lines (at most {MAX_LINES})", file.display()));
        }
    }
    Ok(faults)
}

/// Each workspace package: its name, folder and the packages it names as
/// dependencies (normal, dev or build).
fn packages(root: &Path) -> Result<Vec<(String, PathBuf, BTreeSet<String>)>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let metadata: Value = serde_json::from_slice(&output.stdout).context("reading cargo metadata")?;
    let mut found = Vec::new();
    for package in metadata["packages"].as_array().into_iter().flatten() {
        let name = package["name"].as_str().unwrap_or_default().to_string();
        let manifest = PathBuf::from(package["manifest_path"].as_str().unwrap_or_default());
        let deps = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|d| d["name"].as_str().map(str::to_string))
            .collect();
        found.push((name, manifest.parent().unwrap_or(root).to_path_buf(), deps));
    }
    Ok(found)
}

/// For each top-level module of the crate in `src`, the other top-level
/// modules its non-test code names through `crate::`.
fn module_imports(src: &Path) -> Result<BTreeMap<String, BTreeSet<String>>> {
    let mut imports: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in rust_files(src)? {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        let first = relative
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned());
        let module = first.unwrap_or_default().trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        // The repository's own sources, not an operator's files.
        #[allow(clippy::disallowed_methods)]
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let code = text.split("\n#[cfg(test)]").next().unwrap_or_default();
        let named = imports.entry(module.clone()).or_default();
        for name in crate_paths(code) {
            if name != module {
                named.insert(name);
            }
        }
    }
    Ok(imports)
}

/// The first segment of every `crate::` path in `code`, including each
/// name of a `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue; // `warden_crate::`, not `crate::`
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut level = 0;
            let mut start = true;
            for c_at in group[..end].char_indices() {
                match c_at.1 {
                    '{' => level += 1,
                    '}' => level -= 1,
                    ',' if level == 0 => start = true,
                    c if start && level == 0 && !c.is_whitespace() => {
                        names.push(ident(&group[c_at.0..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty() && n != "self");
    names
}

/// The strongly connected groups of more than one module (Tarjan).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        found: Vec<Vec<String>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.graph.contains_key(w) {
                    continue;
                }
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().rposition(|&x| x == v).unwrap_or(0);
                let group: Vec<String> = self.stack.drain(at..).map(str::to_string).collect();
                if group.len() > 1 {
                    self.found.push(group);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
}

fn long_files(src: &Path) -> Result<Vec<(PathBuf, usize)>> {
    let mut long = Vec::new();
    for file in rust_files(src)? {
        // The repository's own sources, not an operator's files.
        #[allow(clippy::disallowed_methods)]
        let lines = std::fs::read_to_string(&file)?.lines().count();
        if lines > MAX_LINES {
            long.push((file, lines));
        }
    }
    Ok(long)
}

fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
            let path = entry?.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The repository itself: what `cargo xtask layers` checks, in `cargo test`.
    #[test]
    fn the_repository_keeps_its_layers() {
        let faults = check(&crate::repo_root()).unwrap();
        assert!(faults.is_empty(), "the layering does not hold:\n{}", faults.join("\n"));
    }

    #[test]
    fn crate_paths_reads_single_and_grouped_imports() {
        let code = "use crate::a::B;\nuse crate::{b, c::{D, E}, self};\nlet x = crate::d::f();\nwarden_crate::z;";
        assert_eq!(crate_paths(code), ["a", "b", "c", "d"]);
    }

    #[test]
    fn cycles_finds_a_loop_and_nothing_in_a_chain() {
        let graph = |edges: &[(&str, &str)]| {
            let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (a, b) in edges {
                g.entry(a.to_string()).or_default().insert(b.to_string());
                g.entry(b.to_string()).or_default();
            }
            g
        };
        assert!(cycles(&graph(&[("a", "b"), ("b", "c")])).is_empty());
        let found = cycles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), 3);
    }
}
