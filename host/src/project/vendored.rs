//! The SDKs, built into the binary: `warden new` copies one into the new
//! project's `vendor/` folder, so the project builds from the registries
//! alone until the SDKs are published (then the copy gives way to a
//! registry dependency). A test checks each list against `sdk/`.
//!
//! Paths are relative to `vendor/`; contents are the repository's files.

/// The Rust SDK: the crates `warden-plugin` and `warden-plugin-macros`.
pub const RUST: &[(&str, &str)] = &[
    (
        "warden-plugin/Cargo.toml",
        include_str!("../../../sdk/rust/warden-plugin/Cargo.toml"),
    ),
    (
        "warden-plugin/README.md",
        include_str!("../../../sdk/rust/warden-plugin/README.md"),
    ),
    (
        "warden-plugin/src/input.rs",
        include_str!("../../../sdk/rust/warden-plugin/src/input.rs"),
    ),
    (
        "warden-plugin/src/lib.rs",
        include_str!("../../../sdk/rust/warden-plugin/src/lib.rs"),
    ),
    (
        "warden-plugin/src/schema.rs",
        include_str!("../../../sdk/rust/warden-plugin/src/schema.rs"),
    ),
    (
        "warden-plugin/src/template.rs",
        include_str!("../../../sdk/rust/warden-plugin/src/template.rs"),
    ),
    (
        "warden-plugin/wit/plugin.wit",
        include_str!("../../../sdk/rust/warden-plugin/wit/plugin.wit"),
    ),
    (
        "warden-plugin-macros/Cargo.toml",
        include_str!("../../../sdk/rust/warden-plugin-macros/Cargo.toml"),
    ),
    (
        "warden-plugin-macros/src/lib.rs",
        include_str!("../../../sdk/rust/warden-plugin-macros/src/lib.rs"),
    ),
];

/// The Python SDK: the package `warden_plugin`.
pub const PYTHON: &[(&str, &str)] = &[
    (
        "warden_plugin/__init__.py",
        include_str!("../../../sdk/python/warden_plugin/__init__.py"),
    ),
    (
        "warden_plugin/__main__.py",
        include_str!("../../../sdk/python/warden_plugin/__main__.py"),
    ),
    (
        "warden_plugin/_bindings.py",
        include_str!("../../../sdk/python/warden_plugin/_bindings.py"),
    ),
    (
        "warden_plugin/content.py",
        include_str!("../../../sdk/python/warden_plugin/content.py"),
    ),
    (
        "warden_plugin/host.py",
        include_str!("../../../sdk/python/warden_plugin/host.py"),
    ),
    (
        "warden_plugin/input.py",
        include_str!("../../../sdk/python/warden_plugin/input.py"),
    ),
    (
        "warden_plugin/plugin.py",
        include_str!("../../../sdk/python/warden_plugin/plugin.py"),
    ),
    (
        "warden_plugin/py.typed",
        include_str!("../../../sdk/python/warden_plugin/py.typed"),
    ),
    (
        "warden_plugin/schema.py",
        include_str!("../../../sdk/python/warden_plugin/schema.py"),
    ),
    (
        "warden_plugin/wit/plugin.wit",
        include_str!("../../../sdk/python/warden_plugin/wit/plugin.wit"),
    ),
];

/// The JavaScript SDK: the npm package `warden-plugin`.
pub const JS: &[(&str, &str)] = &[
    (
        "warden-plugin/package.json",
        include_str!("../../../sdk/js/package.json"),
    ),
    ("warden-plugin/README.md", include_str!("../../../sdk/js/README.md")),
    (
        "warden-plugin/bin/warden-plugin.js",
        include_str!("../../../sdk/js/bin/warden-plugin.js"),
    ),
    (
        "warden-plugin/dev/loader.js",
        include_str!("../../../sdk/js/dev/loader.js"),
    ),
    (
        "warden-plugin/dev/wit/dev.wit",
        include_str!("../../../sdk/js/dev/wit/dev.wit"),
    ),
    (
        "warden-plugin/dev/wit/deps/clocks.wit",
        include_str!("../../../sdk/js/dev/wit/deps/clocks.wit"),
    ),
    (
        "warden-plugin/dev/wit/deps/filesystem.wit",
        include_str!("../../../sdk/js/dev/wit/deps/filesystem.wit"),
    ),
    (
        "warden-plugin/dev/wit/deps/io.wit",
        include_str!("../../../sdk/js/dev/wit/deps/io.wit"),
    ),
    (
        "warden-plugin/src/component.js",
        include_str!("../../../sdk/js/src/component.js"),
    ),
    (
        "warden-plugin/src/index.js",
        include_str!("../../../sdk/js/src/index.js"),
    ),
    (
        "warden-plugin/src/input.js",
        include_str!("../../../sdk/js/src/input.js"),
    ),
    (
        "warden-plugin/src/schema.js",
        include_str!("../../../sdk/js/src/schema.js"),
    ),
    ("warden-plugin/src/warm.js", include_str!("../../../sdk/js/src/warm.js")),
    (
        "warden-plugin/wit/plugin.wit",
        include_str!("../../../sdk/js/wit/plugin.wit"),
    ),
];

/// The lock file of the Rust SDK's workspace: a new Rust project starts
/// from the dependency versions the SDK is tested with.
pub const RUST_LOCK: &str = include_str!("../../../sdk/rust/Cargo.lock");

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    /// Every file under `dir` (relative), but tests, caches and lock files.
    fn files(dir: &Path, prefix: &str) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(next) = pending.pop() {
            for entry in std::fs::read_dir(&next).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                if ["tests", "__pycache__", "node_modules", "target", "Cargo.lock"].contains(&name.as_str()) {
                    continue;
                }
                if path.is_dir() {
                    pending.push(path);
                } else {
                    let relative = path.strip_prefix(dir).unwrap().to_string_lossy().replace('\\', "/");
                    found.insert(format!("{prefix}{relative}"));
                }
            }
        }
        found
    }

    fn listed(list: &[(&str, &str)]) -> BTreeSet<String> {
        list.iter().map(|(path, _)| path.to_string()).collect()
    }

    /// A file added to an SDK must be added to its list, or new projects would miss it.
    #[test]
    fn each_list_holds_every_file_of_its_sdk() {
        let sdk = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
        let mut rust = files(&sdk.join("rust/warden-plugin"), "warden-plugin/");
        rust.extend(files(&sdk.join("rust/warden-plugin-macros"), "warden-plugin-macros/"));
        assert_eq!(listed(super::RUST), rust);
        assert_eq!(
            listed(super::PYTHON),
            files(&sdk.join("python/warden_plugin"), "warden_plugin/")
        );
        assert_eq!(listed(super::JS), files(&sdk.join("js"), "warden-plugin/"));
    }
}
