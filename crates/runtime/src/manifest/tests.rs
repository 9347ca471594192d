//! The manifest's parsing and validation, key by key.

use super::*;

#[test]
fn an_empty_manifest_has_the_defaults() {
    assert_eq!(Manifest::parse("").unwrap(), Manifest::default());
}

#[test]
fn reads_plugin_and_limits() {
    let m = Manifest::parse(
        r#"
        [plugin]
        name = "notes"
        sha256 = "AB00000000000000000000000000000000000000000000000000000000000000"
        [limits]
        memory = "32 MiB"
        timeout = "1500ms"
        concurrency = 2
        output = "10KiB"
        handles = 32
        "#,
    )
    .unwrap();
    assert_eq!(m.name.as_deref(), Some("notes"));
    assert_eq!(m.sha256.as_deref().unwrap()[..2], *"ab");
    assert_eq!(m.limits.memory, 32 << 20);
    assert_eq!(m.limits.timeout, Duration::from_millis(1500));
    assert_eq!(m.limits.concurrency, 2);
    assert_eq!(m.limits.output, 10 << 10);
    assert_eq!(m.limits.handles, 32);
    let err = format!("{:#}", Manifest::parse("[limits]\nhandles = 100000").unwrap_err());
    assert!(err.contains("`limits.handles` = 100000 must be between"), "{err}");
}

#[test]
fn unknown_keys_are_errors_that_name_the_key() {
    let err = format!("{:#}", Manifest::parse("[limits]\nmemroy = \"1 MiB\"").unwrap_err());
    assert!(err.starts_with("line 2: unknown field `memroy`"), "{err}");
    assert!(!err.contains('\n'), "{err}");
    let err = format!("{:#}", Manifest::parse("[network]\nallowed = []").unwrap_err());
    assert!(err.contains("allowed"), "{err}");
    let err = format!("{:#}", Manifest::parse("[interaction]\nurl-hosts = []").unwrap_err());
    assert!(
        err.contains("unknown field `url-hosts`") && err.contains("`url-allow`"),
        "{err}"
    );
    let err = format!(
        "{:#}",
        Manifest::parse("[filesystem]\n\"/tmp\" = { mount = \"/t\", mode = \"rw\" }").unwrap_err()
    );
    assert!(err.contains("mode"), "{err}");
}

#[test]
fn malformed_values_name_the_key() {
    let err = format!("{:#}", Manifest::parse("[limits]\nmemory = \"lots\"").unwrap_err());
    assert!(err.contains("limits.memory"), "{err}");
    let err = format!("{:#}", Manifest::parse("[limits]\ntimeout = \"soon\"").unwrap_err());
    assert!(err.contains("limits.timeout"), "{err}");
    let err = format!("{:#}", Manifest::parse("[plugin]\nsha256 = \"abc\"").unwrap_err());
    assert!(err.contains("plugin.sha256"), "{err}");
    assert!(Manifest::parse("[limits]\nconcurrency = 0").is_err());
}

#[test]
fn reads_grants() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().display();
    // SAFETY: tests in this module do not read this variable concurrently.
    unsafe { std::env::set_var("WARDEN_MANIFEST_TEST_TOKEN", "s3cret") };
    let m = Manifest::parse(&format!(
        r#"
        [filesystem]
        "{host}" = {{ mount = "/data", access = "read-write" }}
        [network]
        allow = ["api.example.com", "127.0.0.1:8080"]
        max-response = "1 MiB"
        tcp = ["127.0.0.1:5432"]
        [environment]
        pass = ["WARDEN_MANIFEST_TEST_TOKEN", "WARDEN_SURELY_UNSET_VARIABLE"]
        set = {{ LANG = "C.UTF-8" }}
        "#
    ))
    .unwrap();
    let g = &m.grants;
    assert_eq!(g.mounts.len(), 1);
    assert_eq!(
        (g.mounts[0].guest.as_str(), g.mounts[0].access),
        ("/data", MountAccess::ReadWrite)
    );
    assert_eq!(g.http.rules.len(), 2);
    assert_eq!(g.http.max_response, 1 << 20);
    assert_eq!(g.sockets.tcp, vec!["127.0.0.1:5432".parse().unwrap()]);
    assert_eq!(
        g.env,
        vec![
            (
                "WARDEN_MANIFEST_TEST_TOKEN".to_string(),
                Setting::Secret {
                    value: Secret::new("s3cret"),
                    from: Source::Env("WARDEN_MANIFEST_TEST_TOKEN".into())
                }
            ),
            ("LANG".to_string(), Setting::Plain("C.UTF-8".to_string()))
        ]
    );
}

#[test]
fn config_and_set_values_come_from_the_manifest_the_environment_or_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("api-key");
    std::fs::write(&key_file, "file-secret-91d2\n").unwrap();
    // SAFETY: no other test reads or writes this variable.
    unsafe { std::env::set_var("WARDEN_MANIFEST_TEST_API_KEY", "env-secret-7c3e") };
    let manifest = dir.path().join("notes.toml");
    std::fs::write(
        &manifest,
        format!(
            "[config]\napi-base = \"https://api.example.com\"\napi-key = {{ env = \"WARDEN_MANIFEST_TEST_API_KEY\" }}\n\
             [environment]\nset = {{ LANG = \"C.UTF-8\", TOKEN = {{ file = \"{}\" }} }}\n",
            key_file.display()
        ),
    )
    .unwrap();
    let m = Manifest::load(&manifest).unwrap();
    assert_eq!(
        m.grants.config,
        vec![
            ("api-base".to_string(), Setting::Plain("https://api.example.com".into())),
            (
                "api-key".to_string(),
                Setting::Secret {
                    value: Secret::new("env-secret-7c3e"),
                    from: Source::Env("WARDEN_MANIFEST_TEST_API_KEY".into())
                }
            ),
        ]
    );
    assert_eq!(
        m.grants.env,
        vec![
            ("LANG".to_string(), Setting::Plain("C.UTF-8".into())),
            (
                "TOKEN".to_string(),
                Setting::Secret {
                    value: Secret::new("file-secret-91d2"),
                    from: Source::File(key_file.clone())
                }
            ),
        ]
    );
    let secrets: Vec<&str> = m.grants.secrets().map(Secret::expose).collect();
    assert_eq!(secrets, ["file-secret-91d2", "env-secret-7c3e"]);
    let debug = format!("{m:?}");
    assert!(
        !debug.contains("env-secret") && !debug.contains("file-secret"),
        "{debug}"
    );
    assert_eq!(
        m.grants
            .redactor()
            .unwrap()
            .redact("env-secret-7c3e and file-secret-91d2 and C.UTF-8"),
        "[redacted] and [redacted] and C.UTF-8"
    );

    // A missing variable or file refuses the manifest, naming it, the key and the source.
    std::fs::write(
        &manifest,
        "[config]\napi-key = { env = \"WARDEN_MANIFEST_TEST_SURELY_UNSET\" }\n",
    )
    .unwrap();
    let error = format!("{:#}", Manifest::load(&manifest).unwrap_err());
    assert!(
        error.starts_with(&format!(
            "invalid manifest {}: `config.api-key` = {{ env = \"WARDEN_MANIFEST_TEST_SURELY_UNSET\" }}: \
             WARDEN_MANIFEST_TEST_SURELY_UNSET is not set in Warden's environment",
            manifest.display()
        )),
        "{error}"
    );
    std::fs::remove_file(&key_file).unwrap();
    std::fs::write(
        &manifest,
        format!(
            "[environment]\nset = {{ TOKEN = {{ file = \"{}\" }} }}\n",
            key_file.display()
        ),
    )
    .unwrap();
    let error = format!("{:#}", Manifest::load(&manifest).unwrap_err());
    assert!(
        error.starts_with(&format!(
            "invalid manifest {}: `environment.set.TOKEN` = {{ file = \"{1}\" }}: cannot read {1}: ",
            manifest.display(),
            key_file.display()
        )),
        "{error}"
    );
    let error = format!(
        "{:#}",
        Manifest::parse("[environment]\nset = { PORT = 8080 }").unwrap_err()
    );
    assert!(error.starts_with("`environment.set.PORT` must be a string"), "{error}");
}

#[test]
fn bad_grants_are_load_errors_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().display();
    let cases = [
        (
            r#"[filesystem]
"relative/dir" = { mount = "/x" }"#
                .to_string(),
            "must be absolute",
        ),
        (
            r#"[filesystem]
"/surely/not/here/warden" = { mount = "/x" }"#
                .to_string(),
            "never creates it",
        ),
        (
            format!("[filesystem]\n\"{host}\" = {{ mount = \"x\" }}"),
            "absolute guest path",
        ),
        (
            format!("[filesystem]\n\"{host}\" = {{ mount = \"/a/../b\" }}"),
            "without `..`",
        ),
        (
            format!("[filesystem]\n\"{host}\" = {{ mount = \"/a\", access = \"all\" }}"),
            "read-only",
        ),
        (
            "[network]\nallow = [\"https://x.example/path\"]".to_string(),
            "network.allow",
        ),
        ("[network]\ntcp = [\"nohost\"]".to_string(), "network.tcp"),
        (
            "[interaction]\nurl-allow = [\"https://x.example/login\"]".to_string(),
            "interaction.url-allow",
        ),
        (
            "[interaction]\nurl-allow = [\"http://x.example\"]".to_string(),
            "http only to loopback",
        ),
        ("[environment]\npass = [\"A=B\"]".to_string(), "environment.pass"),
    ];
    for (text, expected) in cases {
        let err = format!("{:#}", Manifest::parse(&text).unwrap_err());
        assert!(err.contains(expected), "{text}: {err}");
    }
}

#[test]
fn sizes() {
    assert_eq!(parse_size("64 MiB").unwrap(), 64 << 20);
    assert_eq!(parse_size("100").unwrap(), 100);
    assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
    assert!(parse_size("12 parsecs").is_err());
    assert_eq!(format_size(64 << 20), "64 MiB");
    assert_eq!(format_size(1500), "1500 B");
}

#[test]
fn a_timeout_past_a_day_is_refused_not_a_deadline_that_overflows() {
    let err = format!(
        "{:#}",
        Manifest::parse("[limits]\ntimeout = \"400000000000y\"").unwrap_err()
    );
    assert!(
        err.contains("`limits.timeout` = \"400000000000y\" must be longer than zero and at most 1day"),
        "{err}"
    );
    assert!(Manifest::parse("[limits]\ntimeout = \"24h\"").is_ok());
}
