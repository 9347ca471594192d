//! Reading a manifest value: a string written in clear, `{ env = "VAR" }`
//! from Warden's environment, or `{ file = "/path" }` from a file, each
//! read when the plugin loads (and again at every reload).

use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};

use super::{MIN_REDACTED_BYTES, Secret, Setting, Source};
use crate::bounded_file::{self, ReadError};

/// The largest file a secret is read from. A key, a token or a PEM
/// certificate is far smaller; anything larger is a mistake in the path
/// (a log, a binary), refused rather than handed to every call.
pub const MAX_FILE_BYTES: u64 = 64 << 10;

/// The forms a value may take, for error messages.
const FORMS: &str = "a string, `{ env = \"VAR\" }` or `{ file = \"/absolute/path\" }`";

/// The value at `key` (`config.api-key`, `environment.set.API_KEY`), as the
/// plugin will get it. A variable that is not set or a file that cannot be
/// read is an error naming the key and the variable or file — never the
/// value.
pub fn setting(key: &str, value: toml::Value) -> Result<Setting> {
    let table = match value {
        toml::Value::String(text) => return Ok(Setting::Plain(text)),
        toml::Value::Table(table) => table,
        other => bail!("`{key}` must be {FORMS} (a plugin gets text); write it as \"{other}\""),
    };
    let mut env = None;
    let mut file = None;
    for (name, value) in table {
        let slot = match name.as_str() {
            "env" => &mut env,
            "file" => &mut file,
            _ => bail!("`{key}` has an unknown key `{name}`; write {FORMS}"),
        };
        match value {
            toml::Value::String(text) => *slot = Some(text),
            _ => bail!("`{key}.{name}` must be a string: {name} = \"…\""),
        }
    }
    let (value, from) = match (env, file) {
        (Some(name), None) => {
            let value = from_env(&name).with_context(|| format!("`{key}` = {{ env = {name:?} }}"))?;
            (value, Source::Env(name))
        }
        (None, Some(path)) => {
            let value = from_file(Path::new(&path)).with_context(|| format!("`{key}` = {{ file = {path:?} }}"))?;
            (value, Source::File(path.into()))
        }
        (Some(_), Some(_)) => bail!("`{key}` names both `env` and `file`; keep the one the value comes from"),
        (None, None) => bail!("`{key}` is an empty table; write {FORMS}"),
    };
    if value.expose().len() < MIN_REDACTED_BYTES {
        tracing::warn!(
            "`{key}` (from {from}) is shorter than {MIN_REDACTED_BYTES} bytes: the plugin gets it, \
             but Warden does not redact a value that short from its logs"
        );
    }
    Ok(Setting::Secret { value, from })
}

/// The variable `name` of Warden's own environment.
fn from_env(name: &str) -> Result<Secret> {
    // `std::env::var` may panic on such names.
    if name.is_empty() || name.contains(['=', '\0']) {
        bail!("{name:?} is not a variable name");
    }
    match std::env::var(name) {
        Ok(value) => Ok(Secret::new(value)),
        Err(std::env::VarError::NotPresent) => Err(anyhow!(
            "{name} is not set in Warden's environment; set it where Warden is started, \
             or write the value in the manifest"
        )),
        Err(std::env::VarError::NotUnicode(_)) => Err(anyhow!(
            "{name} is not valid UTF-8 in Warden's environment (a plugin gets text)"
        )),
    }
}

/// The text of the file at `path`, without one trailing line break (what
/// `echo key > file` and most editors add).
fn from_file(path: &Path) -> Result<Secret> {
    if !path.is_absolute() {
        bail!("the path must be absolute (a Kubernetes Secret is mounted at a path such as /run/secrets/NAME)");
    }
    let bytes = bounded_file::read(path, MAX_FILE_BYTES).map_err(|error| match error {
        ReadError::Io(error) => anyhow!("cannot read {}: {error}", path.display()),
        ReadError::NotRegular => anyhow!("{} is not a regular file", path.display()),
        ReadError::TooLarge { .. } => anyhow!(
            "{} is larger than {} KiB, the most a secret file may hold; check the path",
            path.display(),
            MAX_FILE_BYTES >> 10
        ),
    })?;
    let mut text =
        String::from_utf8(bytes).map_err(|_| anyhow!("{} is not UTF-8 text (a plugin gets text)", path.display()))?;
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    Ok(Secret::new(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Setting> {
        let table: toml::Table = text.parse().unwrap();
        let value = table.get("key").cloned().unwrap();
        setting("config.key", value)
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn a_string_is_plain() {
        assert_eq!(
            parse("key = \"https://example.com\"").unwrap(),
            Setting::Plain("https://example.com".into())
        );
    }

    #[test]
    fn env_is_read_from_wardens_environment() {
        // SAFETY: no other test reads or writes this variable.
        unsafe { std::env::set_var("WARDEN_SECRETS_TEST_API_KEY", "sk-live-4f9a1c") };
        let setting = parse("key = { env = \"WARDEN_SECRETS_TEST_API_KEY\" }").unwrap();
        assert_eq!(
            setting,
            Setting::Secret {
                value: Secret::new("sk-live-4f9a1c"),
                from: Source::Env("WARDEN_SECRETS_TEST_API_KEY".into()),
            }
        );
        assert_eq!(setting.value(), "sk-live-4f9a1c");
    }

    #[test]
    fn a_missing_variable_names_the_key_and_the_variable() {
        let error = error("key = { env = \"WARDEN_SECRETS_TEST_SURELY_UNSET\" }");
        assert_eq!(
            error,
            "`config.key` = { env = \"WARDEN_SECRETS_TEST_SURELY_UNSET\" }: WARDEN_SECRETS_TEST_SURELY_UNSET \
             is not set in Warden's environment; set it where Warden is started, or write the value in the manifest"
        );
        let error = self::error("key = { env = \"A=B\" }");
        assert!(error.ends_with("\"A=B\" is not a variable name"), "{error}");
    }

    #[test]
    fn file_is_read_without_its_trailing_line_break() {
        let dir = tempfile::tempdir().unwrap();
        for (written, read) in [
            ("sk-live-4f9a1c\n", "sk-live-4f9a1c"),
            ("sk-live-4f9a1c\r\n", "sk-live-4f9a1c"),
            ("sk-live-4f9a1c", "sk-live-4f9a1c"),
            ("two\nlines\n\n", "two\nlines\n"),
        ] {
            let path = dir.path().join("key");
            std::fs::write(&path, written).unwrap();
            let setting = parse(&format!("key = {{ file = \"{}\" }}", path.display())).unwrap();
            assert_eq!(
                setting,
                Setting::Secret {
                    value: Secret::new(read),
                    from: Source::File(path.clone()),
                },
                "{written:?}"
            );
        }
    }

    #[test]
    fn an_unreadable_oversized_or_odd_file_names_the_key_and_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let error = error(&format!("key = {{ file = \"{}\" }}", missing.display()));
        assert!(
            error.starts_with(&format!(
                "`config.key` = {{ file = \"{0}\" }}: cannot read {0}: ",
                missing.display()
            )),
            "{error}"
        );
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; MAX_FILE_BYTES as usize + 1]).unwrap();
        let error = self::error(&format!("key = {{ file = \"{}\" }}", big.display()));
        assert!(
            error.ends_with(&format!(
                "{} is larger than 64 KiB, the most a secret file may hold; check the path",
                big.display()
            )),
            "{error}"
        );
        assert!(!error.contains("xxxx"), "{error}");
        let at_limit = dir.path().join("at-limit");
        std::fs::write(&at_limit, vec![b'x'; MAX_FILE_BYTES as usize]).unwrap();
        let setting = parse(&format!("key = {{ file = \"{}\" }}", at_limit.display())).unwrap();
        assert_eq!(setting.value().len(), MAX_FILE_BYTES as usize);
        let error = self::error(&format!("key = {{ file = \"{}\" }}", dir.path().display()));
        assert!(error.ends_with("is not a regular file"), "{error}");
        let binary = dir.path().join("binary");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        let error = self::error(&format!("key = {{ file = \"{}\" }}", binary.display()));
        assert!(error.ends_with("is not UTF-8 text (a plugin gets text)"), "{error}");
        let error = self::error("key = { file = \"secrets/key\" }");
        assert!(error.contains("the path must be absolute"), "{error}");
    }

    #[test]
    fn both_neither_unknown_and_malformed_forms_are_refused() {
        assert_eq!(
            error("key = { env = \"A\", file = \"/b\" }"),
            "`config.key` names both `env` and `file`; keep the one the value comes from"
        );
        assert_eq!(
            error("key = {}"),
            "`config.key` is an empty table; write a string, `{ env = \"VAR\" }` or `{ file = \"/absolute/path\" }`"
        );
        assert_eq!(
            error("key = { environment = \"A\" }"),
            "`config.key` has an unknown key `environment`; write a string, `{ env = \"VAR\" }` or \
             `{ file = \"/absolute/path\" }`"
        );
        assert_eq!(
            error("key = { env = \"A\", default = \"x\" }"),
            "`config.key` has an unknown key `default`; write a string, `{ env = \"VAR\" }` or \
             `{ file = \"/absolute/path\" }`"
        );
        assert_eq!(
            error("key = { env = 3 }"),
            "`config.key.env` must be a string: env = \"…\""
        );
        assert_eq!(
            error("key = 8080"),
            "`config.key` must be a string, `{ env = \"VAR\" }` or `{ file = \"/absolute/path\" }` \
             (a plugin gets text); write it as \"8080\""
        );
    }
}
