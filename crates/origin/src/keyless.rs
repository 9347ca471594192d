//! Keyless signatures: a Sigstore bundle (v0.3, as `cosign sign` writes for
//! an OCI artifact since cosign 3) verified offline against a trusted root —
//! the Fulcio certificate chain, its SCT, the transparency-log inclusion
//! proof, checkpoint and signed entry timestamp, the signing time within the
//! certificate's validity — and its certificate's identity (OIDC issuer and
//! subject) held to the trust policy. What it signs must be an in-toto
//! statement of `cosign/sign/v1` whose one subject is the manifest's digest:
//! an SBOM or provenance attestation by the same identity is not a signature.

use std::path::Path;

use anyhow::{Context, Result, bail};
use sigstore_verify::trust_root::{SigstoreInstance, TrustedRoot};
use sigstore_verify::types::{Bundle, MediaType, Sha256Hash, SignatureContent, Statement};
use sigstore_verify::{VerificationPolicy, Verifier};

pub const BUNDLE_MEDIA_TYPE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
pub const COSIGN_SIGN_PREDICATE: &str = "https://sigstore.dev/cosign/sign/v1";
const IN_TOTO_STATEMENT: &str = "https://in-toto.io/Statement/v1";
const IN_TOTO_PAYLOAD: &str = "application/vnd.in-toto+json";
/// A bundle is a few kilobytes; anything much larger is not one.
pub const MAX_BUNDLE_BYTES: u64 = 256 * 1024;

/// Whose keyless signature a policy trusts: the certificate's OIDC issuer,
/// exactly, and its subject (SAN), exactly or as an anchored pattern.
#[derive(Debug, Clone)]
pub struct Identity {
    pub issuer: String,
    /// `*` within a path segment, `**` across (`pattern::matches`).
    pub subject: String,
}

impl Identity {
    pub fn new(issuer: &str, subject: &str) -> Result<Self> {
        if issuer.trim().is_empty() {
            bail!("`issuer` is empty; name the OIDC issuer (e.g. https://token.actions.githubusercontent.com)");
        }
        if subject.trim().is_empty() || subject.chars().all(|c| c == '*') {
            bail!("`subject` must name the signer's identity; a subject that matches anyone is never accepted");
        }
        Ok(Identity {
            issuer: issuer.to_string(),
            subject: subject.to_string(),
        })
    }
}

/// Sigstore's trusted root (Fulcio CAs, CT logs, Rekor keys, TSAs) and the
/// verifier built from it once.
pub struct Root {
    verifier: Verifier,
    /// Where it came from, for messages.
    pub source: String,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Root({})", self.source)
    }
}

impl Root {
    /// The public-good instance's root as shipped with sigstore-verify 0.15.1.
    pub fn public_good() -> Result<Self> {
        crate::crypto_provider::install();
        let root = TrustedRoot::from_embedded(SigstoreInstance::PublicGood)
            .map_err(|e| anyhow::anyhow!("the shipped Sigstore trusted root: {e}"))?;
        Self::new(&root, "Sigstore public-good (shipped)".into())
    }

    /// A `trusted_root.json` of the operator's.
    pub fn load(path: &Path) -> Result<Self> {
        crate::crypto_provider::install();
        let text = crate::bounded_file::read_text(path, 4 * 1024 * 1024, "the trusted root")?;
        let root = TrustedRoot::from_json(&text)
            .map_err(|e| anyhow::anyhow!("{} is not a Sigstore trusted root: {e}", path.display()))?;
        Self::new(&root, path.display().to_string())
    }

    fn new(root: &TrustedRoot, source: String) -> Result<Self> {
        let verifier = Verifier::new(root).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
        Ok(Root { verifier, source })
    }

    /// Checks that `bundle` is a keyless signature by `identity` of the
    /// artifact whose SHA-256 is `digest` (`sha256:…`), with every check on;
    /// returns the certificate's subject.
    pub fn verify(&self, bundle: &Bundle, digest: &str, identity: &Identity) -> Result<String> {
        let hash = sha256(digest)?;
        // The library matches a subject exactly only: ask it for the issuer,
        // then hold the subject to the pattern here.
        let policy = VerificationPolicy::any_identity().require_issuer(identity.issuer.as_str());
        let result = self
            .verifier
            .verify(hash, bundle, &policy)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if !(result.certificate_verified() && result.sct_verified() && result.tlog_verified()) {
            bail!("the bundle was not verified in full (certificate, SCT and transparency log)");
        }
        if result.issuer() != Some(identity.issuer.as_str()) {
            bail!(
                "signed through the issuer {:?}, not `{}`",
                result.issuer(),
                identity.issuer
            );
        }
        let subject = result.identity().map(|s| s.as_str().to_string());
        match subject {
            Some(subject) if crate::pattern::matches(&identity.subject, &subject) => Ok(subject),
            Some(subject) => bail!("signed by `{subject}`, not `{}`", identity.subject),
            None => bail!("the certificate names no subject (email or URI)"),
        }
    }
}

fn sha256(digest: &str) -> Result<Sha256Hash> {
    crate::check_digest(digest)?;
    Sha256Hash::from_hex(&digest["sha256:".len()..]).map_err(|e| anyhow::anyhow!("{digest}: {e}"))
}

/// Parses a bundle, refusing anything but v0.3.
pub fn parse(json: &str) -> Result<Bundle> {
    if json.len() as u64 > MAX_BUNDLE_BYTES {
        bail!(
            "the bundle is {} bytes; at most {MAX_BUNDLE_BYTES} are read",
            json.len()
        );
    }
    let bundle = Bundle::from_json(json).map_err(|e| anyhow::anyhow!("not a Sigstore bundle: {e}"))?;
    if bundle.media_type() != MediaType::Bundle0_3 {
        bail!(
            "the bundle is {}, not {BUNDLE_MEDIA_TYPE}",
            bundle.media_type().as_str()
        );
    }
    Ok(bundle)
}

/// cosign 2's keyless `.sig` as a Sigstore bundle (v0.1: a message
/// signature over the payload, the Fulcio certificate, the Rekor entry with
/// its signed entry timestamp), so the one verifier checks it like any
/// bundle. `certificate` is PEM; `rekor` is cosign's annotation JSON,
/// `{"SignedEntryTimestamp", "Payload": {"body", "integratedTime", "logIndex", "logID"}}`.
pub fn legacy_bundle(signature: &str, certificate: &str, rekor: &str, payload: &[u8]) -> Result<Bundle> {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Rekor {
        signed_entry_timestamp: String,
        payload: Entry,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Entry {
        body: String,
        integrated_time: i64,
        log_index: i64,
        #[serde(rename = "logID")]
        log_id: String,
    }
    if certificate.len() + rekor.len() > MAX_BUNDLE_BYTES as usize {
        bail!("the keyless signature's certificate and Rekor entry are larger than {MAX_BUNDLE_BYTES} bytes");
    }
    let rekor: Rekor = serde_json::from_str(rekor).context("the `.sig`'s Rekor entry is not cosign's JSON")?;
    let der = pem_body(certificate).context("the `.sig`'s certificate is not PEM")?;
    let log_id = hex::decode(&rekor.payload.log_id).context("the Rekor entry's logID is not hex")?;
    let json = serde_json::json!({
        "mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.1",
        "verificationMaterial": {
            "x509CertificateChain": { "certificates": [{ "rawBytes": BASE64.encode(der) }] },
            "tlogEntries": [{
                "logIndex": rekor.payload.log_index.to_string(),
                "logId": { "keyId": BASE64.encode(log_id) },
                "kindVersion": { "kind": "hashedrekord", "version": "0.0.1" },
                "integratedTime": rekor.payload.integrated_time.to_string(),
                "inclusionPromise": { "signedEntryTimestamp": rekor.signed_entry_timestamp },
                "canonicalizedBody": rekor.payload.body,
            }],
        },
        "messageSignature": {
            "messageDigest": {
                "algorithm": "SHA2_256",
                "digest": BASE64.encode(<sha2::Sha256 as sha2::Digest>::digest(payload)),
            },
            "signature": signature.trim(),
        },
    });
    Bundle::from_json(&json.to_string())
        .map_err(|e| anyhow::anyhow!("the keyless `.sig` is not a valid signature: {e}"))
}

/// The DER inside one PEM block.
fn pem_body(pem: &str) -> Result<Vec<u8>> {
    use base64::Engine as _;
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|line| !line.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|line| !line.starts_with("-----END"))
        .collect();
    if body.is_empty() {
        bail!("no PEM block");
    }
    Ok(base64::engine::general_purpose::STANDARD.decode(body)?)
}

/// What `cosign sign` signs for an OCI artifact: a DSSE in-toto statement of
/// `cosign/sign/v1` whose one subject is `manifest_digest`.
pub fn check_image_statement(bundle: &Bundle, manifest_digest: &str) -> Result<()> {
    let expected = sha256(manifest_digest)?;
    let SignatureContent::DsseEnvelope(envelope) = &bundle.content else {
        bail!("the bundle signs a blob, not an image (cosign signs an in-toto statement for an image)");
    };
    if envelope.payload_type != IN_TOTO_PAYLOAD {
        bail!(
            "the bundle's payload is `{}`, not an in-toto statement",
            envelope.payload_type
        );
    }
    let statement: Statement =
        serde_json::from_slice(envelope.payload.as_bytes()).context("the bundle's statement is not in-toto JSON")?;
    if statement.type_ != IN_TOTO_STATEMENT {
        bail!(
            "the statement's `_type` is `{}`, not `{IN_TOTO_STATEMENT}`",
            statement.type_
        );
    }
    if statement.predicate_type != COSIGN_SIGN_PREDICATE {
        bail!(
            "the bundle attests `{}`, not a signature (`{COSIGN_SIGN_PREDICATE}`)",
            statement.predicate_type
        );
    }
    match statement.subject.as_slice() {
        [one] if one.digest.sha256.as_ref() == Some(&expected) => Ok(()),
        [one] => bail!(
            "the bundle signs sha256:{}, not this component's manifest {manifest_digest}",
            one.digest.sha256.map(|h| h.to_hex()).unwrap_or_default()
        ),
        many => bail!("the statement names {} subjects; cosign signs exactly one", many.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use serde_json::Value;

    const BLOB: &str = include_str!("../testdata/sigstore/cosign-v3-blob.sigstore.json");
    const BLOB_DIGEST: &str = "sha256:e194b99df6639501325c5f44da79fe3a8efae6f239bd79443a19787e06fb1764";
    const CONDA: &str = include_str!("../testdata/sigstore/conda-attestation.sigstore.json");
    const CONDA_DIGEST: &str = "sha256:54303491a8418fbed24344b513546182c29b43bf282ceb433af65e2299f9271f";
    const GITHUB_OAUTH: &str = "https://github.com/login/oauth";
    const ACTIONS: &str = "https://token.actions.githubusercontent.com";
    const WORKFLOW: &str =
        "https://github.com/prefix-dev/sigstore-example/.github/workflows/action.yaml@refs/heads/main";

    fn identity(issuer: &str, subject: &str) -> Identity {
        Identity::new(issuer, subject).unwrap()
    }

    /// `json` with the base64 value at `pointer` changed in one bit.
    fn flipped(json: &str, pointer: &str) -> String {
        let mut value: Value = serde_json::from_str(json).unwrap();
        let field = value.pointer_mut(pointer).unwrap();
        let mut bytes = BASE64.decode(field.as_str().unwrap()).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 1;
        *field = BASE64.encode(bytes).into();
        value.to_string()
    }

    fn refused(root: &Root, json: &str, digest: &str, who: &Identity) -> String {
        let bundle = parse(json).unwrap();
        format!("{:#}", root.verify(&bundle, digest, who).unwrap_err())
    }

    #[test]
    fn real_bundles_verify_offline_for_their_identity_and_nothing_else() {
        let root = Root::public_good().unwrap();
        let signer = identity(GITHUB_OAUTH, "w.vollprecht@gmail.com");
        let bundle = parse(BLOB).unwrap();
        assert_eq!(
            root.verify(&bundle, BLOB_DIGEST, &signer).unwrap(),
            "w.vollprecht@gmail.com"
        );
        // An anchored pattern: the whole subject must match.
        assert!(
            root.verify(&bundle, BLOB_DIGEST, &identity(GITHUB_OAUTH, "*@gmail.com"))
                .is_ok()
        );
        let conda = parse(CONDA).unwrap();
        assert_eq!(
            root.verify(&conda, CONDA_DIGEST, &identity(ACTIONS, WORKFLOW)).unwrap(),
            WORKFLOW
        );
        let pattern = "https://github.com/prefix-dev/*/.github/workflows/action.yaml@refs/heads/main";
        assert!(root.verify(&conda, CONDA_DIGEST, &identity(ACTIONS, pattern)).is_ok());

        for (why, result, expect) in [
            (
                "another subject",
                refused(
                    &root,
                    BLOB,
                    BLOB_DIGEST,
                    &identity(GITHUB_OAUTH, "W.vollprecht@gmail.com"),
                ),
                "signed by `w.vollprecht@gmail.com`, not `W.vollprecht@gmail.com`",
            ),
            (
                "an unanchored pattern",
                refused(
                    &root,
                    BLOB,
                    BLOB_DIGEST,
                    &identity(GITHUB_OAUTH, "vollprecht@gmail.com"),
                ),
                "not `vollprecht@gmail.com`",
            ),
            (
                "another issuer",
                refused(
                    &root,
                    BLOB,
                    BLOB_DIGEST,
                    &identity("https://accounts.google.com", "w.vollprecht@gmail.com"),
                ),
                "issuer",
            ),
            (
                "another artifact",
                refused(&root, BLOB, CONDA_DIGEST, &signer),
                "artifact mismatch",
            ),
            (
                "a broken inclusion proof",
                refused(
                    &root,
                    &flipped(BLOB, "/verificationMaterial/tlogEntries/0/inclusionProof/hashes/0"),
                    BLOB_DIGEST,
                    &signer,
                ),
                "inclusion proof",
            ),
            (
                "a changed signed entry timestamp",
                refused(
                    &root,
                    &flipped(
                        BLOB,
                        "/verificationMaterial/tlogEntries/0/inclusionPromise/signedEntryTimestamp",
                    ),
                    BLOB_DIGEST,
                    &signer,
                ),
                "SET verification failed",
            ),
            (
                "a changed signature",
                refused(
                    &root,
                    &flipped(CONDA, "/dsseEnvelope/signatures/0/sig"),
                    CONDA_DIGEST,
                    &identity(ACTIONS, WORKFLOW),
                ),
                "signature",
            ),
        ] {
            assert!(result.contains(expect), "{why}: {result}");
        }

        // Another instance's root trusts none of it.
        let staging = TrustedRoot::from_embedded(SigstoreInstance::Staging).unwrap();
        let staging = Root::new(&staging, "staging".into()).unwrap();
        assert!(staging.verify(&parse(BLOB).unwrap(), BLOB_DIGEST, &signer).is_err());
    }

    #[test]
    fn only_a_cosign_signature_statement_of_the_manifest_counts() {
        // A blob signature and an attestation of something else are not image signatures.
        let error = check_image_statement(&parse(BLOB).unwrap(), BLOB_DIGEST)
            .unwrap_err()
            .to_string();
        assert!(error.contains("signs a blob"), "{error}");
        let error = check_image_statement(&parse(CONDA).unwrap(), CONDA_DIGEST)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("not a signature (`https://sigstore.dev/cosign/sign/v1`)"),
            "{error}"
        );

        // cosign's statement for an image: accepted for its digest only — and
        // the statement is what the signature covers, so swapping it in
        // breaks the real signature.
        let manifest = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
        let statement = serde_json::json!({
            "_type": IN_TOTO_STATEMENT,
            "subject": [{"digest": {"sha256": &manifest[7..]}}],
            "predicateType": COSIGN_SIGN_PREDICATE,
            "predicate": {},
        });
        let mut swapped: Value = serde_json::from_str(CONDA).unwrap();
        swapped["dsseEnvelope"]["payload"] = BASE64.encode(statement.to_string()).into();
        let swapped = parse(&swapped.to_string()).unwrap();
        check_image_statement(&swapped, manifest).unwrap();
        let other = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
        let error = check_image_statement(&swapped, other).unwrap_err().to_string();
        assert!(error.contains("not this component's manifest"), "{error}");
        let root = Root::public_good().unwrap();
        assert!(root.verify(&swapped, manifest, &identity(ACTIONS, WORKFLOW)).is_err());
    }
}
