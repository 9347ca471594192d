//! The operator's trust policy (`--trust FILE`): which signers are trusted
//! for which repositories. A repository entry without a signer, or a signer
//! without a key, is an error — never "any signer".
//!
//! ```toml
//! [[repository]]
//! match = "ghcr.io/acme/tools/*"      # `*`: within one path segment; `**`: any depth
//! [[repository.signer]]
//! name = "acme release key"
//! key = "keys/acme.pub"               # cosign.pub (PEM), relative to this file
//!
//! # Components placed in the folder by hand that `--require-signature` still serves.
//! local = ["notes"]
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use p256::ecdsa::VerifyingKey;
use serde::Deserialize;

/// A policy and its keys are small; a larger file is a mistake or an attack.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

#[derive(Debug)]
pub struct TrustPolicy {
    pub path: PathBuf,
    pub repositories: Vec<RepositoryRule>,
    /// Plugin names served without an origin under `--require-signature`.
    pub local: Vec<String>,
}

#[derive(Debug)]
pub struct RepositoryRule {
    /// The pattern as written, for messages.
    pub pattern: String,
    pub signers: Vec<Signer>,
}

#[derive(Debug)]
pub struct Signer {
    pub name: String,
    pub key: VerifyingKey,
    /// The key file, for messages.
    pub key_path: PathBuf,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    repository: Vec<RepositoryFile>,
    #[serde(default)]
    local: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RepositoryFile {
    #[serde(rename = "match")]
    pattern: String,
    #[serde(default)]
    signer: Vec<SignerFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignerFile {
    name: String,
    key: Option<PathBuf>,
    issuer: Option<String>,
    subject: Option<String>,
}

impl TrustPolicy {
    pub fn load(path: &Path) -> Result<Self> {
        let text = read_bounded(path)?;
        let file: File =
            toml::from_str(&text).with_context(|| format!("{} is not a valid trust policy", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let at = |what: String| format!("{}: {what}", path.display());
        let mut repositories = Vec::new();
        for (index, entry) in file.repository.into_iter().enumerate() {
            let key = format!("repository[{index}]");
            check_pattern(&entry.pattern).with_context(|| at(format!("`{key}.match`")))?;
            if entry.signer.is_empty() {
                bail!(
                    "{}",
                    at(format!(
                        "`{key}` (`{}`) names no signer; add a `[[repository.signer]]` with a `key` \
                         (an empty list would mean any signer, which Warden never accepts)",
                        entry.pattern
                    ))
                );
            }
            let mut signers = Vec::new();
            for (s, signer) in entry.signer.into_iter().enumerate() {
                let skey = format!("{key}.signer[{s}]");
                if signer.name.trim().is_empty() {
                    bail!("{}", at(format!("`{skey}.name` is empty; name the signer")));
                }
                let has_identity = signer.issuer.is_some() || signer.subject.is_some();
                match (signer.key, signer.issuer, signer.subject) {
                    (Some(key_file), None, None) => {
                        let key_path = base.join(&key_file);
                        let pem = read_bounded(&key_path).with_context(|| at(format!("`{skey}.key`")))?;
                        let key = crate::cosign::public_key(&pem)
                            .with_context(|| at(format!("`{skey}.key` ({})", key_path.display())))?;
                        signers.push(Signer {
                            name: signer.name,
                            key,
                            key_path,
                        });
                    }
                    (None, _, _) if has_identity => bail!(
                        "{}",
                        at(format!(
                            "`{skey}` is a keyless identity (issuer/subject); this Warden verifies keyed \
                             signatures only (cosign's `sha256-….sig`): give the signer's `key` instead"
                        ))
                    ),
                    (Some(_), _, _) => bail!(
                        "{}",
                        at(format!(
                            "`{skey}` has both a `key` and an `issuer`/`subject`; a signer is one or the other"
                        ))
                    ),
                    (None, _, _) => bail!(
                        "{}",
                        at(format!(
                            "`{skey}` has no `key`; a signer without a key would accept anyone"
                        ))
                    ),
                }
            }
            repositories.push(RepositoryRule {
                pattern: entry.pattern,
                signers,
            });
        }
        Ok(TrustPolicy {
            path: path.to_path_buf(),
            repositories,
            local: file.local,
        })
    }

    /// The first entry, in file order, whose pattern matches `repository`
    /// (`REGISTRY/REPO`).
    pub fn rule_for(&self, repository: &str) -> Option<&RepositoryRule> {
        self.repositories.iter().find(|rule| matches(&rule.pattern, repository))
    }
}

impl RepositoryRule {
    pub fn signer_names(&self) -> String {
        self.signers
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn read_bounded(path: &Path) -> Result<String> {
    let size = std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len();
    if size > MAX_FILE_BYTES {
        bail!("{} is {size} bytes; at most {MAX_FILE_BYTES} are read", path.display());
    }
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn check_pattern(pattern: &str) -> Result<()> {
    if pattern.is_empty() || pattern.starts_with('*') || !pattern.contains('/') {
        bail!(
            "`{pattern}` must name a registry and a repository path (`REGISTRY/REPO`, `REGISTRY/ORG/*`); \
             a pattern that matches every registry would trust its signers for anyone's components"
        );
    }
    Ok(())
}

/// Anchored glob: `*` matches within one path segment, `**` across them.
pub fn matches(pattern: &str, text: &str) -> bool {
    fn go(p: &[u8], t: &[u8]) -> bool {
        match p {
            [] => t.is_empty(),
            [b'*', b'*', rest @ ..] => (0..=t.len()).any(|i| go(rest, &t[i..])),
            [b'*', rest @ ..] => {
                let segment = t.iter().position(|&b| b == b'/').unwrap_or(t.len());
                (0..=segment).any(|i| go(rest, &t[i..]))
            }
            [c, rest @ ..] => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(pattern.as_bytes(), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_anchored_and_segment_aware() {
        assert!(matches("ghcr.io/acme/*", "ghcr.io/acme/hello"));
        assert!(!matches("ghcr.io/acme/*", "ghcr.io/acme/x/y"));
        assert!(matches("ghcr.io/acme/**", "ghcr.io/acme/x/y"));
        assert!(!matches("ghcr.io/acme/*", "ghcr.io/acme-evil/hello"));
        assert!(!matches("ghcr.io/acme/hello", "ghcr.io/acme/hello2"));
        assert!(!matches("ghcr.io/acme/hello", "evil.io/ghcr.io/acme/hello"));
        assert!(matches("127.0.0.1:5000/tools/*", "127.0.0.1:5000/tools/hello"));
    }

    fn policy(dir: &Path, text: &str) -> Result<TrustPolicy> {
        let path = dir.join("trust.toml");
        std::fs::write(&path, text).unwrap();
        TrustPolicy::load(&path)
    }

    #[test]
    fn a_policy_never_means_any_signer() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("k.pub"),
            crate::cosign::tests::pem(&crate::cosign::tests::key(3)),
        )
        .unwrap();
        let ok = policy(
            dir.path(),
            "[[repository]]\nmatch = \"r.io/a/*\"\n[[repository.signer]]\nname = \"k\"\nkey = \"k.pub\"\n",
        )
        .unwrap();
        assert_eq!(ok.rule_for("r.io/a/b").unwrap().signers[0].name, "k");
        assert!(ok.rule_for("r.io/b/b").is_none());

        for (text, expect) in [
            ("[[repository]]\nmatch = \"r.io/a/*\"\n", "names no signer"),
            (
                "[[repository]]\nmatch = \"r.io/a/*\"\n[[repository.signer]]\nname = \"k\"\n",
                "would accept anyone",
            ),
            (
                "[[repository]]\nmatch = \"**\"\n[[repository.signer]]\nname = \"k\"\nkey = \"k.pub\"\n",
                "every registry",
            ),
            (
                "[[repository]]\nmatch = \"r.io/a\"\n[[repository.signer]]\nname = \"\"\nkey = \"k.pub\"\n",
                "`repository[0].signer[0].name` is empty",
            ),
            (
                "[[repository]]\nmatch = \"r.io/a\"\n[[repository.signer]]\nname = \"x\"\nkey = \"missing.pub\"\n",
                "cannot read",
            ),
            (
                "[[repository]]\nmatch = \"r.io/a\"\n[[repository.signer]]\nname = \"x\"\nissuer = \"https://i\"\nsubject = \"s\"\n",
                "keyless",
            ),
            ("[[repository]]\nmatch = \"r.io/a\"\nsigners = []\n", "unknown field"),
        ] {
            let error = format!("{:#}", policy(dir.path(), text).unwrap_err());
            assert!(error.contains(expect), "{text}: {error}");
            assert!(error.contains("trust.toml"), "{error}");
        }
    }
}
