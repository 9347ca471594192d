//! `NAME.origin.json`, written by `warden pull` beside `NAME.wasm`: where the
//! component came from and the evidence for it — the exact manifest bytes
//! (whose digest signers sign) and the signatures found — so that every
//! later load can check it again without a network.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use crate::manifest::ImageManifest;

/// A record is written by Warden, but it sits in a folder others can write
/// to: it is read with a bound like any input.
pub const MAX_RECORD_BYTES: u64 = 1024 * 1024;
const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OriginRecord {
    pub format: u32,
    /// The reference as given to `warden pull` (a tag, a digest or both).
    pub reference: String,
    /// `REGISTRY/REPOSITORY`.
    pub repository: String,
    /// The digest of `manifest`, which the tag resolved to when pulled.
    pub manifest_digest: String,
    /// The manifest's exact bytes, base64.
    pub manifest: String,
    /// Seconds since the Unix epoch.
    pub pulled_at: u64,
    #[serde(default)]
    pub signatures: Vec<SignatureRecord>,
    /// The trusted signer whose signature verified when pulled (for people
    /// reading the file; every load verifies again and trusts only that).
    #[serde(default)]
    pub signer: Option<String>,
}

/// One signature found for the manifest, kept as the registry served it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "format", rename_all = "kebab-case")]
pub enum SignatureRecord {
    /// cosign's `sha256-<hex>.sig` tag: a simple-signing payload and a DER
    /// ECDSA signature over its exact bytes, both base64. Keyless (cosign 2)
    /// adds the Fulcio certificate (PEM) and the Rekor entry (cosign's JSON).
    CosignSimpleSigning {
        payload: String,
        signature: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        certificate: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rekor_bundle: Option<String>,
    },
    /// A Sigstore bundle (v0.3) attached to the manifest (OCI referrers, or
    /// the `sha256-<hex>` tag), as its JSON text.
    SigstoreBundle { bundle: String },
}

impl SignatureRecord {
    /// Only what a check reads: a keyed signature is its payload and
    /// signature, so a Rekor entry a registry attached to it (never
    /// verified) is not kept.
    pub fn as_checked(self) -> Self {
        match self {
            SignatureRecord::CosignSimpleSigning {
                payload,
                signature,
                certificate: None,
                ..
            } => SignatureRecord::CosignSimpleSigning {
                payload,
                signature,
                certificate: None,
                rekor_bundle: None,
            },
            other => other,
        }
    }
}

impl OriginRecord {
    pub fn new(
        reference: String,
        repository: String,
        manifest_bytes: &[u8],
        signatures: Vec<SignatureRecord>,
        pulled_at: u64,
    ) -> Self {
        OriginRecord {
            format: FORMAT,
            reference,
            repository,
            manifest_digest: crate::digest_of(manifest_bytes),
            manifest: BASE64.encode(manifest_bytes),
            pulled_at,
            signatures,
            signer: None,
        }
    }

    /// Where the record of `component` is: `NAME.origin.json` beside `NAME.wasm`.
    pub fn path_for(component: &Path) -> PathBuf {
        component.with_extension("origin.json")
    }

    /// The record beside `component`, if there is one.
    pub fn read_beside(component: &Path) -> Result<Option<Self>> {
        let path = Self::path_for(component);
        // Regular files only, never waiting on a FIFO, at most 1 MiB.
        let bytes = match crate::bounded_file::read(&path, MAX_RECORD_BYTES) {
            Ok(bytes) => bytes,
            Err(crate::bounded_file::ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(error) => bail!(
                "{}; pull the component again",
                error.describe("the origin record", &path)
            ),
        };
        let record: OriginRecord = serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not an origin record; pull the component again", path.display()))?;
        if record.format != FORMAT {
            bail!(
                "{} has format {}, this Warden reads {FORMAT}",
                path.display(),
                record.format
            );
        }
        Ok(Some(record))
    }

    /// The manifest's bytes, checked against the recorded digest.
    pub fn manifest_bytes(&self) -> Result<Vec<u8>> {
        crate::check_digest(&self.manifest_digest)?;
        let bytes = BASE64
            .decode(&self.manifest)
            .context("the recorded manifest is not base64")?;
        let digest = crate::digest_of(&bytes);
        if digest != self.manifest_digest {
            bail!(
                "the recorded manifest's digest is {digest}, not the recorded {}",
                self.manifest_digest
            );
        }
        Ok(bytes)
    }

    pub fn manifest(&self) -> Result<ImageManifest> {
        ImageManifest::parse(&self.manifest_bytes()?)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a record is plain data") + "\n"
    }
}
