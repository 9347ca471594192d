//! The operator's trust policy (`--trust FILE`): which signers are trusted
//! for which repositories. A repository entry without a signer, or a signer
//! without a key, is an error — never "any signer".
//!
//! ```toml
//! # Components placed in the folder by hand that `--require-signature` still serves.
//! local = ["notes"]
//! trusted_root = "trusted_root.json"  # for keyless signers; default: Sigstore's public-good root
//!
//! [[repository]]
//! match = "ghcr.io/acme/tools/*"      # `*`: within one path segment; `**`: any depth
//! [[repository.signer]]
//! name = "acme release key"
//! key = "keys/acme.pub"               # cosign.pub (PEM), relative to this file
//! [[repository.signer]]
//! name = "acme CI"                    # keyless: a Sigstore certificate's identity
//! issuer = "https://token.actions.githubusercontent.com"
//! subject = "https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*"
//!
//! [[repository]]
//! match = "mirror.example/acme/*"     # a mirror: its signatures name the original
//! signed_reference = "ghcr.io/acme/*"
//! [[repository.signer]]
//! name = "acme release key"
//! key = "keys/acme.pub"
//! ```

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use p256::ecdsa::VerifyingKey;
use serde::Deserialize;

use crate::keyless::{Identity, Root};
use crate::pattern::matches;

/// A policy and its keys are small; a larger file is a mistake or an attack.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

#[derive(Debug)]
pub struct TrustPolicy {
    pub path: PathBuf,
    pub repositories: Vec<RepositoryRule>,
    /// Plugin names served without an origin under `--require-signature`.
    pub local: Vec<String>,
    /// Sigstore's trusted root, when a signer is keyless.
    pub root: Option<Root>,
}

#[derive(Debug)]
pub struct RepositoryRule {
    /// The pattern as written, for messages.
    pub pattern: String,
    pub signers: Vec<Signer>,
    /// What a cosign payload's `docker-reference` may name: `None` means the
    /// repository pulled from itself, as cosign checks by default; a mirror
    /// names the original's repositories here.
    pub signed_reference: Option<String>,
}

#[derive(Debug)]
pub struct Signer {
    pub name: String,
    pub kind: SignerKind,
}

#[derive(Debug)]
pub enum SignerKind {
    /// cosign's keyed signatures by this key (the key file, for messages).
    Key { key: VerifyingKey, path: PathBuf },
    /// Keyless: a Sigstore bundle whose certificate names this identity.
    Keyless(Identity),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    repository: Vec<RepositoryFile>,
    #[serde(default)]
    local: Vec<String>,
    trusted_root: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RepositoryFile {
    #[serde(rename = "match")]
    pattern: String,
    #[serde(default)]
    signer: Vec<SignerFile>,
    signed_reference: Option<String>,
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
            if let Some(signed) = &entry.signed_reference {
                check_pattern(signed).with_context(|| at(format!("`{key}.signed_reference`")))?;
            }
            let mut signers = Vec::new();
            for (s, signer) in entry.signer.into_iter().enumerate() {
                let skey = format!("{key}.signer[{s}]");
                if signer.name.trim().is_empty() {
                    bail!("{}", at(format!("`{skey}.name` is empty; name the signer")));
                }
                let kind = match (signer.key, signer.issuer, signer.subject) {
                    (Some(key_file), None, None) => {
                        let path = base.join(&key_file);
                        let pem = read_bounded(&path).with_context(|| at(format!("`{skey}.key`")))?;
                        let key = crate::cosign::public_key(&pem)
                            .with_context(|| at(format!("`{skey}.key` ({})", path.display())))?;
                        SignerKind::Key { key, path }
                    }
                    (Some(_), _, _) => bail!(
                        "{}",
                        at(format!(
                            "`{skey}` has both a `key` and an `issuer`/`subject`; a signer is one or the other"
                        ))
                    ),
                    (None, Some(issuer), Some(subject)) => {
                        SignerKind::Keyless(Identity::new(&issuer, &subject).with_context(|| at(format!("`{skey}`")))?)
                    }
                    (None, Some(_), None) | (None, None, Some(_)) => bail!(
                        "{}",
                        at(format!("`{skey}` is keyless: it needs both `issuer` and `subject`"))
                    ),
                    (None, None, None) => bail!(
                        "{}",
                        at(format!(
                            "`{skey}` has no `key` (or keyless `issuer` and `subject`); a signer without \
                             either would accept anyone"
                        ))
                    ),
                };
                signers.push(Signer {
                    name: signer.name,
                    kind,
                });
            }
            repositories.push(RepositoryRule {
                pattern: entry.pattern,
                signers,
                signed_reference: entry.signed_reference,
            });
        }
        let keyless = repositories
            .iter()
            .flat_map(|r| &r.signers)
            .any(|s| matches!(s.kind, SignerKind::Keyless(_)));
        let root = match (&file.trusted_root, keyless) {
            (Some(root), _) => Some(Root::load(&base.join(root)).with_context(|| at("`trusted_root`".into()))?),
            (None, true) => Some(Root::public_good()?),
            (None, false) => None,
        };
        Ok(TrustPolicy {
            path: path.to_path_buf(),
            repositories,
            local: file.local,
            root,
        })
    }

    /// The first entry, in file order, whose pattern matches `repository`
    /// (`REGISTRY/REPO`).
    pub fn rule_for(&self, repository: &str) -> Option<&RepositoryRule> {
        // Docker Hub's two spellings, and any case of a host, are one.
        let repository = crate::reference::normalized_repository(&repository.to_ascii_lowercase());
        self.repositories
            .iter()
            .find(|rule| matches(&rule.pattern, &repository))
    }
}

impl RepositoryRule {
    /// Whether a cosign payload naming `docker_reference` may vouch for a
    /// component pulled from `repository` under this rule.
    pub fn accepts_reference(&self, docker_reference: &str, repository: &str) -> Result<()> {
        let named = crate::reference::normalized_repository(docker_reference);
        let ok = match &self.signed_reference {
            None => named == crate::reference::normalized_repository(repository),
            Some(pattern) => matches(pattern, &named),
        };
        if ok {
            return Ok(());
        }
        match &self.signed_reference {
            None => bail!(
                "the signature is for `{docker_reference}`, not for {repository}; a mirror's rule may \
                 accept the original's signatures with `signed_reference`"
            ),
            Some(pattern) => bail!(
                "the signature is for `{docker_reference}`, which `signed_reference = \"{pattern}\"` does not cover"
            ),
        }
    }

    pub fn signer_names(&self) -> String {
        self.signers
            .iter()
            .map(|s| format!("`{}`", s.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn read_bounded(path: &Path) -> Result<String> {
    crate::read_bounded(path, MAX_FILE_BYTES)
}

fn check_pattern(pattern: &str) -> Result<()> {
    if pattern.chars().any(|c| c.is_ascii_uppercase()) || pattern.starts_with("index.docker.io/") {
        bail!(
            "`{pattern}` is matched against repositories as Warden spells them: lowercase, Docker Hub as \
             `docker.io/…`; write it that way"
        );
    }
    if pattern.is_empty() || pattern.starts_with('*') || !pattern.contains('/') {
        bail!(
            "`{pattern}` must name a registry and a repository path (`REGISTRY/REPO`, `REGISTRY/ORG/*`); \
             a pattern that matches every registry would trust its signers for anyone's components"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
                "[[repository]]\nmatch = \"r.io/a\"\n[[repository.signer]]\nname = \"x\"\nissuer = \"https://i\"\n",
                "needs both `issuer` and `subject`",
            ),
            (
                "[[repository]]\nmatch = \"r.io/a\"\n[[repository.signer]]\nname = \"x\"\nissuer = \"https://i\"\nsubject = \"**\"\n",
                "matches anyone",
            ),
            (
                "[[repository]]\nmatch = \"r.io/a\"\n[[repository.signer]]\nname = \"x\"\nissuer = \"\"\nsubject = \"a@b.c\"\n",
                "`issuer` is empty",
            ),
            ("[[repository]]\nmatch = \"r.io/a\"\nsigners = []\n", "unknown field"),
            (
                "[[repository]]\nmatch = \"R.io/a/*\"\n[[repository.signer]]\nname = \"k\"\nkey = \"k.pub\"\n",
                "lowercase",
            ),
        ] {
            let error = format!("{:#}", policy(dir.path(), text).unwrap_err());
            assert!(error.contains(expect), "{text}: {error}");
            assert!(error.contains("trust.toml"), "{error}");
        }
    }
}
