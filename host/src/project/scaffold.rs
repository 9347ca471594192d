//! `warden new NAME --lang rust|python|js`: a plugin project that builds on
//! a fresh machine from the registries alone. The SDK is copied into its
//! `vendor/` folder (see `vendored.rs`); the template is a working plugin
//! with one tool, `hello`, a unit test, a manifest and a README.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{Language, vendored};

/// `warden new`: creates `DIR/NAME` (`./NAME` without a `dir`) and prints
/// what to run next.
pub fn run(name: &str, lang: Language, dir: Option<&Path>) -> Result<()> {
    check_name(name)?;
    let project = dir.unwrap_or(Path::new(".")).join(name);
    create(&project, name, lang)?;
    let shown = project.display();
    println!("created {shown}: a {} plugin with one tool, `hello`", lang.label());
    println!();
    println!("  cd {shown}");
    for line in next_steps(lang, name) {
        println!("  {line}");
    }
    println!();
    println!("{shown}/README.md says more.");
    Ok(())
}

/// Lower-case letters, digits, `-` and `_`, starting with a letter: valid
/// as a plugin name, a crate, a Python project and an npm package alike.
fn check_name(name: &str) -> Result<()> {
    let valid = name.len() <= warden_runtime::naming::MAX_NAME_LEN
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
    if !valid {
        bail!(
            "{name:?} cannot name a plugin project: use 1 to {} lower-case letters, digits, `-` and `_`, \
             starting with a letter (e.g. `my-tools`)",
            warden_runtime::naming::MAX_NAME_LEN
        );
    }
    Ok(())
}

/// Writes the project into `dir`, which must not exist yet (or be empty).
pub fn create(dir: &Path, name: &str, language: Language) -> Result<()> {
    if dir.exists()
        && std::fs::read_dir(dir)
            .with_context(|| format!("{} exists and is not a folder", dir.display()))?
            .next()
            .is_some()
    {
        bail!(
            "{} already exists and is not empty; choose another NAME or --dir",
            dir.display()
        );
    }
    let (files, sdk) = match language {
        Language::Rust => (rust(name), vendored::RUST),
        Language::Python => (python(name), vendored::PYTHON),
        Language::Js => (js(name), vendored::JS),
    };
    for (path, contents) in &files {
        write(&dir.join(path), contents)?;
    }
    for (path, contents) in sdk {
        write(&dir.join("vendor").join(path), contents)?;
    }
    Ok(())
}

fn write(path: &Path, contents: &str) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    std::fs::write(path, contents).with_context(|| format!("writing {}", path.display()))
}

fn next_steps(language: Language, name: &str) -> Vec<String> {
    let mut steps = match language {
        Language::Rust => vec!["cargo test                       # the unit tests".to_string()],
        Language::Python => vec![
            "python3 -m venv .venv && .venv/bin/pip install -r requirements.txt   # componentize-py".to_string(),
            "python3 -m unittest             # the unit tests".to_string(),
        ],
        Language::Js => vec![
            "npm install                      # esbuild and componentize-js".to_string(),
            "npm test                         # the unit tests".to_string(),
        ],
    };
    steps.push(format!("warden build                     # → build/{name}.wasm"));
    steps.push(format!("warden call build/{name}.wasm hello '{{\"name\": \"Ada\"}}'"));
    steps.push("warden dev .                     # serve it; every save rebuilds and reloads".to_string());
    steps
}

/// The README every template shares: the commands, deploying, the manifest,
/// and what `vendor/` is.
fn readme(name: &str, language: Language, intro: &str, setup: &str, sdk: &str) -> String {
    let steps = next_steps(language, name)
        .into_iter()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        r#"# {name}

A Warden plugin in {language}. {intro}

## Commands

{setup}

{steps}

- `warden build` writes `build/{name}.wasm` (the component) and `build/{name}.toml` (the
  manifest, copied from `warden.toml`) and prints the component's size.
- `warden call` runs one tool under the manifest, without a client, and prints the MCP
  result as JSON (exit 0; 1 for an `isError` result; 2 when nothing ran).
- `warden dev .` serves the plugin over stdio to the MCP client that starts it (e.g.
  `"command": "warden", "args": ["dev", "/path/to/{name}"]`). Every save rebuilds; a
  good build is hot-reloaded, a failed one leaves the last good build serving. Warden
  sends `notifications/tools/list_changed` when the list of tools changes (a tool added,
  removed or renamed, or its description or schema changed); a change to what a tool
  returns only needs the next call.
- `warden inspect build/{name}.wasm` shows what the component exports and imports, next
  to what `warden.toml` grants it.

## Deploying

Copy `build/{name}.wasm` and `build/{name}.toml` into the folder `warden serve --plugins
DIR` serves; Warden loads them without a restart.

## What it may do

`warden.toml` is the plugin's capability manifest. It grants nothing: no files, no
network, no environment variables, within the default limits. Ask the operator for
exactly what a tool needs; the operator's copy of the manifest is what counts.

## vendor/

{sdk} `warden new` copied it here so that this project builds from the public registries
alone; once the SDK is published, replace the copy with the registry dependency.
"#,
        language = language.label(),
    )
}

const MANIFEST: &str = r#"# What this plugin may do when Warden serves it. Nothing is granted by default:
# no files, no network, no environment variables. See Warden's README
# ("The manifest") for [filesystem], [network], [environment] and [config].

[limits]
memory = "64 MiB"     # linear memory and tables
timeout = "30s"       # wall-clock time per call
"#;

fn rust(name: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "Cargo.toml",
            format!(
                r#"[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
rust-version = "1.95"
publish = false

[lib]
crate-type = ["cdylib"]

[dependencies]
# Warden's Rust SDK, in vendor/ until it is on crates.io.
warden-plugin = {{ path = "vendor/warden-plugin" }}
schemars = "1"
serde = {{ version = "1", features = ["derive"] }}

[profile.release]
opt-level = "s"
strip = true
codegen-units = 1

# Its own workspace, wherever the folder is.
[workspace]
"#
            ),
        ),
        ("Cargo.lock", vendored::RUST_LOCK.to_string()),
        (
            "src/lib.rs",
            format!(
                r#"//! {name}: a Warden plugin. Each `#[tool]` function is a tool: its doc comment is the
//! description, its argument type (serde + schemars) the input schema.

use schemars::JsonSchema;
use serde::Deserialize;
use warden_plugin::tool;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HelloArgs {{
    /// Who to greet.
    name: String,
}}

/// Greets someone by name.
#[tool(read_only, destructive = false, idempotent, open_world = false)]
fn hello(args: HelloArgs) -> String {{
    format!("Hello, {{}}!", args.name)
}}

warden_plugin::export! {{ tools: [hello] }}

#[cfg(test)]
mod tests {{
    use super::*;

    #[test]
    fn greets_by_name() {{
        assert_eq!(hello(HelloArgs {{ name: "Ada".into() }}), "Hello, Ada!");
    }}
}}
"#
            ),
        ),
        ("warden.toml", MANIFEST.to_string()),
        (
            "README.md",
            readme(
                name,
                Language::Rust,
                "Its tools are the `#[tool]` functions in `src/lib.rs`.",
                "Needs the Rust toolchain ([rustup](https://rustup.rs)); `warden build` adds the \
             `wasm32-wasip2` target if it is missing.",
                "`vendor/warden-plugin` and `vendor/warden-plugin-macros` are Warden's Rust SDK (0.3.0).",
            ),
        ),
        (".gitignore", "/target\n/build\n".to_string()),
    ]
}

fn python(name: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "app.py",
            format!(
                r#""""{name}: a Warden plugin. Each `@app.tool()` function is a tool: its type hints
become the input schema, its docstring the description."""

from warden_plugin import Plugin

app = Plugin("{name}")


@app.tool(read_only_hint=True)
def hello(name: str) -> str:
    """Greets someone by name.

    Args:
        name: Who to greet.
    """
    return f"Hello, {{name}}!"
"#
            ),
        ),
        (
            "test_app.py",
            r#""""Unit tests of the plugin's tools, in plain CPython: `python3 -m unittest`."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "vendor"))

from app import app  # noqa: E402


class HelloTest(unittest.TestCase):
    def test_greets_by_name(self):
        result = app.call_tool("hello", {"name": "Ada"})
        self.assertFalse(result["isError"])
        self.assertEqual(result["content"], [{"type": "text", "text": "Hello, Ada!"}])


if __name__ == "__main__":
    unittest.main()
"#
            .to_string(),
        ),
        (
            "pyproject.toml",
            format!(
                r#"[project]
name = "{name}"
version = "0.1.0"
requires-python = ">=3.10"

[tool.warden]
# The module componentize-py builds the component from.
module = "app"
"#
            ),
        ),
        (
            "requirements.txt",
            format!("componentize-py=={}\n", super::python::COMPONENTIZE_PY),
        ),
        ("warden.toml", MANIFEST.to_string()),
        (
            "README.md",
            readme(
                name,
                Language::Python,
                "Its tools are the `@app.tool()` functions in `app.py`.",
                "Needs Python 3.10 or later. `warden build` runs componentize-py from `.venv/bin` (or \
             `PATH`); the component holds a Python interpreter, initialised at build time, and is \
             about 18 MB.",
                "`vendor/warden_plugin` is Warden's Python SDK (0.3.0).",
            ),
        ),
        (".gitignore", "/build\n/.venv\n__pycache__/\n".to_string()),
    ]
}

fn js(name: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "index.js",
            format!(
                r#"// {name}: a Warden plugin. Tools are registered as with the MCP TypeScript SDK's
// McpServer; `warden build` bundles this module with the SDK into a component.

import {{ Plugin, schema }} from 'warden-plugin';
import {{ greet }} from './hello.js';

const plugin = new Plugin({{ name: '{name}', version: '0.1.0' }});

plugin.registerTool(
  'hello',
  {{
    description: 'Greets someone by name.',
    inputSchema: {{ name: schema.string({{ description: 'Who to greet.' }}) }},
    annotations: {{ readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }},
  }},
  ({{ name }}) => greet(name),
);
"#
            ),
        ),
        (
            "hello.js",
            "// The tool's logic, apart from the SDK so that Node can unit-test it.\n\n\
             export function greet(name) {\n  return `Hello, ${name}!`;\n}\n"
                .to_string(),
        ),
        (
            "hello.test.js",
            r#"import { test } from 'node:test';
import assert from 'node:assert/strict';
import { greet } from './hello.js';

test('hello greets by name', () => {
  assert.equal(greet('Ada'), 'Hello, Ada!');
});
"#
            .to_string(),
        ),
        (
            "package.json",
            format!(
                r#"{{
  "name": "{name}",
  "version": "0.1.0",
  "private": true,
  "type": "module",
  "main": "index.js",
  "scripts": {{
    "build": "warden-plugin build index.js -o build/{name}.wasm",
    "test": "node --test hello.test.js"
  }},
  "devDependencies": {{
    "@bytecodealliance/componentize-js": "0.23.0",
    "esbuild": "0.28.2",
    "warden-plugin": "file:vendor/warden-plugin"
  }}
}}
"#
            ),
        ),
        ("warden.toml", MANIFEST.to_string()),
        (
            "README.md",
            readme(
                name,
                Language::Js,
                "Its tools are registered in `index.js`.",
                "Needs Node.js 20 or later and npm. The component holds a JavaScript engine \
             (StarlingMonkey), with the module's top level run at build time, and is about 12 MB.",
                "`vendor/warden-plugin` is Warden's JavaScript SDK (0.3.0).",
            ),
        ),
        (".gitignore", "/build\nnode_modules/\n".to_string()),
    ]
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use super::*;

    #[test]
    fn names_are_valid_everywhere_or_refused() {
        for good in ["hello", "my-tools", "a_b2"] {
            check_name(good).unwrap();
        }
        for bad in ["", "Hello", "2fast", "my.tools", "-x", "a b"] {
            let error = check_name(bad).unwrap_err().to_string();
            assert!(error.contains("lower-case letters"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_project_is_never_written_over() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.txt"), "mine").unwrap();
        let error = create(dir.path(), "hello", Language::Rust).unwrap_err().to_string();
        assert!(error.contains("already exists"), "{error}");
        assert_eq!(std::fs::read_to_string(dir.path().join("keep.txt")).unwrap(), "mine");
        assert!(!dir.path().join("Cargo.toml").exists());
    }
}
