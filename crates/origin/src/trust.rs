//! The one place that decides whether a component may be served, given its
//! origin record and the operator's trust policy. Called at every load, so
//! a component replaced on disk or a signature that no longer verifies is
//! refused at the next hot reload, not only at pull time.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

use crate::keyless;
use crate::policy::{RepositoryRule, Signer, SignerKind, TrustPolicy};
use crate::record::{OriginRecord, SignatureRecord};

/// The operator's policy and whether unsigned components are refused.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    policy: Option<Arc<TrustPolicy>>,
    require_signature: bool,
}

/// What a check of an origin record established, and which of its
/// signatures did (its index in the record's list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub verified: Verified,
    pub signature: Option<usize>,
}

/// What a load established about a pulled component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub reference: String,
    pub manifest_digest: String,
    /// The trusted signer whose signature verified, if any did.
    pub signer: Option<String>,
}

impl Trust {
    /// Whether `signature` is `signer`'s signature of `manifest_digest`;
    /// `None` when they are of different kinds (a key, a keyless identity).
    fn verify_one(
        &self,
        signature: &SignatureRecord,
        signer: &Signer,
        rule: &RepositoryRule,
        record: &OriginRecord,
    ) -> Option<Result<()>> {
        let manifest_digest = record.manifest_digest.as_str();
        let reference = |named: &str| rule.accepts_reference(named, &record.repository);
        match (signature, &signer.kind) {
            (
                SignatureRecord::CosignSimpleSigning {
                    payload,
                    signature,
                    certificate: None,
                    ..
                },
                SignerKind::Key { key, .. },
            ) => Some(match BASE64.decode(payload) {
                Ok(payload) => crate::cosign::verify(key, &payload, signature, manifest_digest, &reference),
                Err(_) => Err(anyhow::anyhow!("a recorded payload is not base64")),
            }),
            (
                SignatureRecord::CosignSimpleSigning {
                    payload,
                    signature,
                    certificate: Some(certificate),
                    rekor_bundle,
                },
                SignerKind::Keyless(identity),
            ) => {
                let root = self.policy.as_ref().and_then(|p| p.root.as_ref())?;
                Some((|| {
                    let payload = BASE64.decode(payload).context("a recorded payload is not base64")?;
                    let rekor = rekor_bundle
                        .as_deref()
                        .context("a keyless `.sig` without its Rekor entry (`dev.sigstore.cosign/bundle`)")?;
                    let bundle = keyless::legacy_bundle(signature, certificate, rekor, &payload)?;
                    root.verify(&bundle, &crate::digest_of(&payload), identity)?;
                    // Only an authenticated payload is read.
                    crate::cosign::check_payload(&payload, manifest_digest, &reference)
                })())
            }
            (SignatureRecord::SigstoreBundle { bundle }, SignerKind::Keyless(identity)) => {
                let root = self.policy.as_ref().and_then(|p| p.root.as_ref())?;
                Some((|| {
                    let bundle = keyless::parse(bundle)?;
                    keyless::check_image_statement(&bundle, manifest_digest)?;
                    root.verify(&bundle, manifest_digest, identity).map(|_| ())
                })())
            }
            _ => None,
        }
    }

    pub fn new(policy: Option<TrustPolicy>, require_signature: bool) -> Result<Self> {
        if require_signature && policy.is_none() {
            bail!("--require-signature needs a trust policy: add `--trust FILE` naming the signers you trust");
        }
        Ok(Trust {
            policy: policy.map(Arc::new),
            require_signature,
        })
    }

    pub fn policy(&self) -> Option<&TrustPolicy> {
        self.policy.as_deref()
    }

    /// Whether plugin `name`, whose file `component` has `sha256` (hex),
    /// may be served; `Some` for a pulled component, with what was verified.
    pub fn check(&self, name: &str, component: &Path, sha256: &str) -> Result<Option<Verified>> {
        self.check_as(name, component, component, sha256)
    }

    /// `check`, for a component not yet where it will be served from:
    /// messages name `shown`, the file the operator will see.
    pub fn check_as(&self, name: &str, component: &Path, shown: &Path, sha256: &str) -> Result<Option<Verified>> {
        let record = OriginRecord::read_beside(component)?;
        Ok(self
            .check_record(name, record.as_ref(), shown, sha256)?
            .map(|checked| checked.verified))
    }

    /// The one decision, over a record in memory (`None`: the component has
    /// none): `warden pull` checks what it fetched with this before anything
    /// is written, then keeps only what verified.
    pub fn check_record(
        &self,
        name: &str,
        record: Option<&OriginRecord>,
        shown: &Path,
        sha256: &str,
    ) -> Result<Option<Checked>> {
        let file = shown.display();
        let Some(record) = record else {
            if self.require_signature
                && let Some(policy) = &self.policy
                && !policy.local.iter().any(|local| local == name)
            {
                bail!(
                    "{file} was not pulled from a registry (there is no {}), and --require-signature serves \
                     only signed components: install it with `warden pull`, or list `{name}` under `local` in {}",
                    OriginRecord::path_for(shown).display(),
                    policy.path.display()
                );
            }
            return Ok(None);
        };
        let manifest = record.manifest()?;
        let layer = manifest.wasm_layer()?;
        let actual = format!("sha256:{sha256}");
        if layer.digest != actual {
            bail!(
                "{file} is refused: it is not what was pulled: its digest is {actual}, but {} delivered {}; the file changed \
                 after `warden pull` — pull it again if you trust the new bytes",
                record.reference,
                layer.digest
            );
        }
        let verified = |signer, signature| Checked {
            verified: Verified {
                reference: record.reference.clone(),
                manifest_digest: record.manifest_digest.clone(),
                signer,
            },
            signature,
        };
        let rule = self.policy.as_ref().and_then(|p| p.rule_for(&record.repository));
        let Some(rule) = rule else {
            if self.require_signature {
                let policy = self
                    .policy
                    .as_ref()
                    .map(|p| p.path.display().to_string())
                    .unwrap_or_default();
                bail!(
                    "{file} comes from {}, for which {policy} trusts no signer, and --require-signature is on: \
                     add a `[[repository]]` whose `match` covers it, with the signer you expect",
                    record.repository
                );
            }
            return Ok(Some(verified(None, None)));
        };
        if record.signatures.is_empty() {
            if self.require_signature {
                bail!(
                    "{file} ({}) is unsigned, and --require-signature expects a signature by {} (a pull keeps \
                     only the signature its trust policy verified: if it is signed, pull it again under this policy)",
                    record.reference,
                    rule.signer_names()
                );
            }
            tracing::warn!(
                "{file} ({}) is unsigned; the trust policy expects {} (refused with --require-signature)",
                record.reference,
                rule.signer_names()
            );
            return Ok(Some(verified(None, None)));
        }
        let mut failures = Vec::new();
        for (index, signature) in record.signatures.iter().enumerate() {
            for signer in &rule.signers {
                match self.verify_one(signature, signer, rule, record) {
                    Some(Ok(())) => return Ok(Some(verified(Some(signer.name.clone()), Some(index)))),
                    Some(Err(why)) => failures.push(format!("`{}`: {why:#}", signer.name)),
                    // A keyed signer says nothing about a bundle, and back.
                    None => {}
                }
            }
        }
        if failures.is_empty() {
            failures.push("none of the signatures found is of a kind these signers make".to_string());
        }
        failures.dedup();
        bail!(
            "{file} ({}): no signature by a trusted signer ({}, from `{}` in {}): {}",
            record.reference,
            rule.signer_names(),
            rule.pattern,
            self.policy
                .as_ref()
                .map(|p| p.path.display().to_string())
                .unwrap_or_default(),
            failures.join("; ")
        )
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests read their own fixtures freely
mod tests {
    use super::*;
    use crate::cosign::tests::{key, pem, sign};
    use crate::manifest::{Descriptor, ImageManifest, WASM_CONFIG, WASM_LAYER};

    const REPO: &str = "127.0.0.1:5000/tools/hello";

    struct Folder {
        dir: tempfile::TempDir,
    }

    impl Folder {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("good.pub"), pem(&key(1))).unwrap();
            std::fs::write(dir.path().join("other.pub"), pem(&key(2))).unwrap();
            Folder { dir }
        }

        fn policy(&self, key_file: &str) -> TrustPolicy {
            let path = self.dir.path().join("trust.toml");
            std::fs::write(
                &path,
                format!(
                    "local = [\"handmade\"]\n[[repository]]\nmatch = \"127.0.0.1:5000/tools/*\"\n\
                     [[repository.signer]]\nname = \"release\"\nkey = \"{key_file}\"\n"
                ),
            )
            .unwrap();
            TrustPolicy::load(&path).unwrap()
        }

        /// Writes `name.wasm` and, when `repository` is given, its record,
        /// signed by `signer` (a key seed) over `signed_digest` (default:
        /// the real manifest digest).
        fn pulled(&self, name: &str, repository: &str, signer: Option<u8>, signed_digest: Option<&str>) -> String {
            self.pulled_signed_for(name, repository, signer, signed_digest, repository)
        }

        /// `pulled`, the signature's payload naming `signed_repository`.
        fn pulled_signed_for(
            &self,
            name: &str,
            repository: &str,
            signer: Option<u8>,
            signed_digest: Option<&str>,
            signed_repository: &str,
        ) -> String {
            let wasm = format!("\0asm component {name}").into_bytes();
            let component = self.dir.path().join(format!("{name}.wasm"));
            std::fs::write(&component, &wasm).unwrap();
            let layer = Descriptor {
                media_type: WASM_LAYER.into(),
                digest: crate::digest_of(&wasm),
                size: wasm.len() as u64,
                annotations: Default::default(),
            };
            let manifest = ImageManifest {
                schema_version: 2,
                media_type: Some(crate::manifest::IMAGE_MANIFEST.into()),
                artifact_type: None,
                config: Descriptor {
                    media_type: WASM_CONFIG.into(),
                    digest: crate::digest_of(b"{}"),
                    size: 2,
                    annotations: Default::default(),
                },
                layers: vec![layer],
                subject: None,
                annotations: Default::default(),
            };
            let bytes = serde_json::to_vec(&manifest).unwrap();
            let digest = crate::digest_of(&bytes);
            let signatures = signer
                .map(|seed| {
                    let payload = crate::cosign::payload(signed_repository, signed_digest.unwrap_or(&digest));
                    SignatureRecord::CosignSimpleSigning {
                        signature: sign(&key(seed), &payload),
                        payload: BASE64.encode(payload),
                        certificate: None,
                        rekor_bundle: None,
                    }
                })
                .into_iter()
                .collect();
            let record = OriginRecord::new(
                format!("oci://{repository}:1"),
                repository.into(),
                &bytes,
                signatures,
                0,
            );
            std::fs::write(OriginRecord::path_for(&component), record.to_json()).unwrap();
            hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&wasm))
        }

        fn check(&self, trust: &Trust, name: &str, sha256: &str) -> Result<Option<Verified>> {
            trust.check(name, &self.dir.path().join(format!("{name}.wasm")), sha256)
        }
    }

    fn refused(result: Result<Option<Verified>>) -> String {
        format!("{:#}", result.unwrap_err())
    }

    #[test]
    fn a_trusted_signature_is_named_and_anything_else_is_refused() {
        let folder = Folder::new();
        let trust = Trust::new(Some(folder.policy("good.pub")), true).unwrap();

        let sha = folder.pulled("hello", REPO, Some(1), None);
        let verified = folder.check(&trust, "hello", &sha).unwrap().unwrap();
        assert_eq!(verified.signer.as_deref(), Some("release"));

        let sha = folder.pulled("forged", REPO, Some(2), None);
        let error = refused(folder.check(&trust, "forged", &sha));
        assert!(error.contains("no signature by a trusted signer (`release`"), "{error}");
        assert!(error.contains("does not verify with this key"), "{error}");

        let other = "sha256:3333333333333333333333333333333333333333333333333333333333333333";
        let sha = folder.pulled("replayed", REPO, Some(1), Some(other));
        let error = refused(folder.check(&trust, "replayed", &sha));
        assert!(error.contains("not for this component's manifest"), "{error}");

        let sha = folder.pulled("unsigned", REPO, None, None);
        let error = refused(folder.check(&trust, "unsigned", &sha));
        assert!(
            error.contains("is unsigned, and --require-signature expects a signature by `release`"),
            "{error}"
        );

        let sha = folder.pulled("elsewhere", "ghcr.io/someone/else", Some(1), None);
        let error = refused(folder.check(&trust, "elsewhere", &sha));
        assert!(error.contains("trusts no signer"), "{error}");

        std::fs::write(folder.dir.path().join("stray.wasm"), b"\0asm").unwrap();
        let error = refused(folder.check(&trust, "stray", "00"));
        assert!(error.contains("was not pulled from a registry"), "{error}");
        std::fs::write(folder.dir.path().join("handmade.wasm"), b"\0asm").unwrap();
        assert_eq!(folder.check(&trust, "handmade", "00").unwrap(), None);
    }

    #[test]
    fn a_signature_made_for_another_repository_is_refused_unless_the_rule_is_a_mirrors() {
        let folder = Folder::new();
        let trust = Trust::new(Some(folder.policy("good.pub")), true).unwrap();
        let sha = folder.pulled_signed_for("replayed", REPO, Some(1), None, "127.0.0.1:5000/tools/other");
        let error = refused(folder.check(&trust, "replayed", &sha));
        assert!(
            error.contains("the signature is for `127.0.0.1:5000/tools/other`, not for 127.0.0.1:5000/tools/hello"),
            "{error}"
        );
        // A tag in the signed reference names the same repository.
        let sha = folder.pulled_signed_for("tagged", REPO, Some(1), None, &format!("{REPO}:1.0"));
        assert!(folder.check(&trust, "tagged", &sha).unwrap().is_some());

        let path = folder.dir.path().join("mirror.toml");
        std::fs::write(
            &path,
            "[[repository]]\nmatch = \"127.0.0.1:5000/tools/*\"\nsigned_reference = \"ghcr.io/acme/*\"\n\
             [[repository.signer]]\nname = \"release\"\nkey = \"good.pub\"\n",
        )
        .unwrap();
        let mirror = Trust::new(Some(TrustPolicy::load(&path).unwrap()), true).unwrap();
        let sha = folder.pulled_signed_for("mirrored", REPO, Some(1), None, "ghcr.io/acme/hello");
        assert_eq!(
            folder
                .check(&mirror, "mirrored", &sha)
                .unwrap()
                .unwrap()
                .signer
                .as_deref(),
            Some("release")
        );
        let sha = folder.pulled_signed_for("stranger", REPO, Some(1), None, "ghcr.io/evil/hello");
        let error = refused(folder.check(&mirror, "stranger", &sha));
        assert!(
            error.contains("which `signed_reference = \"ghcr.io/acme/*\"` does not cover"),
            "{error}"
        );
    }

    #[test]
    fn a_component_changed_after_pull_is_refused_whatever_the_policy() {
        let folder = Folder::new();
        let sha = folder.pulled("hello", REPO, Some(1), None);
        let component = folder.dir.path().join("hello.wasm");
        std::fs::write(&component, b"\0asm something else").unwrap();
        let changed = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"\0asm something else"));
        assert_ne!(sha, changed);
        for trust in [
            Trust::default(),
            Trust::new(Some(folder.policy("good.pub")), false).unwrap(),
        ] {
            let error = refused(folder.check(&trust, "hello", &changed));
            assert!(error.contains("is not what was pulled"), "{error}");
            assert!(error.contains("hello.wasm"), "{error}");
        }
        // A record whose manifest was edited no longer matches its digest.
        let path = OriginRecord::path_for(&component);
        let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        record["manifest"] = BASE64.encode(b"{\"schemaVersion\":2}").into();
        std::fs::write(&path, record.to_string()).unwrap();
        let error = refused(folder.check(&Trust::default(), "hello", &sha));
        assert!(error.contains("recorded manifest's digest"), "{error}");
    }

    #[test]
    fn without_require_signature_unsigned_and_uncovered_components_load_but_bad_signatures_do_not() {
        let folder = Folder::new();
        let trust = Trust::new(Some(folder.policy("good.pub")), false).unwrap();
        let sha = folder.pulled("unsigned", REPO, None, None);
        assert_eq!(folder.check(&trust, "unsigned", &sha).unwrap().unwrap().signer, None);
        let sha = folder.pulled("elsewhere", "ghcr.io/someone/else", None, None);
        assert_eq!(folder.check(&trust, "elsewhere", &sha).unwrap().unwrap().signer, None);
        let sha = folder.pulled("forged", REPO, Some(2), None);
        assert!(folder.check(&trust, "forged", &sha).is_err());
        assert!(Trust::new(None, true).is_err());
    }
}
