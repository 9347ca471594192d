//! cosign's keyed signatures as registries hold them: a manifest tagged
//! `sha256-<hex>.sig` whose layers are simple-signing payloads, each with a
//! base64 DER ECDSA P-256 signature over the payload's exact bytes in the
//! layer annotation `dev.cosignproject.cosign/signature`.

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::signature::Verifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use serde::Deserialize;

pub const SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const SIGNATURE_ANNOTATION: &str = "dev.cosignproject.cosign/signature";
/// cosign 2's keyless `.sig`: the Fulcio certificate, its chain and the
/// Rekor entry (with its signed entry timestamp) beside the signature.
pub const CERTIFICATE_ANNOTATION: &str = "dev.sigstore.cosign/certificate";
pub const CHAIN_ANNOTATION: &str = "dev.sigstore.cosign/chain";
pub const REKOR_BUNDLE_ANNOTATION: &str = "dev.sigstore.cosign/bundle";
const PAYLOAD_TYPE: &str = "cosign container image signature";
/// A payload is a few hundred bytes; anything much larger is not one.
pub const MAX_PAYLOAD_BYTES: u64 = 64 * 1024;

/// The tag cosign stores the signatures of `manifest_digest` under.
pub fn signature_tag(manifest_digest: &str) -> String {
    format!("{}.sig", manifest_digest.replacen(':', "-", 1))
}

/// The payload cosign signs for `repository` (`REGISTRY/REPO`) at `manifest_digest`.
pub fn payload(repository: &str, manifest_digest: &str) -> Vec<u8> {
    serde_json::json!({
        "critical": {
            "identity": { "docker-reference": repository },
            "image": { "docker-manifest-digest": manifest_digest },
            "type": PAYLOAD_TYPE,
        },
        "optional": null,
    })
    .to_string()
    .into_bytes()
}

#[derive(Deserialize)]
struct Payload {
    critical: Critical,
}

#[derive(Deserialize)]
struct Critical {
    identity: Identity,
    image: Image,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Identity {
    #[serde(rename = "docker-reference")]
    docker_reference: String,
}

#[derive(Deserialize)]
struct Image {
    #[serde(rename = "docker-manifest-digest")]
    digest: String,
}

/// A public key as cosign writes it (`cosign.pub`: PEM SubjectPublicKeyInfo).
pub fn public_key(pem: &str) -> Result<VerifyingKey> {
    use p256::pkcs8::DecodePublicKey as _;
    VerifyingKey::from_public_key_pem(pem.trim())
        .map_err(|e| anyhow::anyhow!("not an ECDSA P-256 public key in PEM (`-----BEGIN PUBLIC KEY-----`): {e}"))
}

/// Checks that `key` signed `payload` and that the payload vouches for
/// `manifest_digest` in a repository `reference` accepts. The signature is
/// checked over the exact bytes first; only an authentic payload is parsed.
pub fn verify(
    key: &VerifyingKey,
    payload: &[u8],
    signature_b64: &str,
    manifest_digest: &str,
    reference: &dyn Fn(&str) -> Result<()>,
) -> Result<()> {
    let signature = BASE64
        .decode(signature_b64.trim())
        .context("the signature is not base64")?;
    let signature = Signature::from_der(&signature).context("the signature is not a DER ECDSA signature")?;
    key.verify(payload, &signature)
        .map_err(|_| anyhow::anyhow!("the signature does not verify with this key"))?;
    check_payload(payload, manifest_digest, reference)
}

/// That an authenticated payload vouches for `manifest_digest`, and names
/// (`docker-reference`) a repository `reference` accepts: a signature one
/// key made for another repository is not this one's.
pub fn check_payload(payload: &[u8], manifest_digest: &str, reference: &dyn Fn(&str) -> Result<()>) -> Result<()> {
    let payload: Payload = serde_json::from_slice(payload).context("the signed payload is not a cosign payload")?;
    if payload.critical.kind != PAYLOAD_TYPE {
        bail!(
            "the signed payload's type is `{}`, not `{PAYLOAD_TYPE}`",
            payload.critical.kind
        );
    }
    if payload.critical.image.digest != manifest_digest {
        bail!(
            "the signature is for {}, not for this component's manifest {manifest_digest}",
            payload.critical.image.digest
        );
    }
    reference(&payload.critical.identity.docker_reference)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use p256::ecdsa::SigningKey;
    use p256::ecdsa::signature::Signer as _;
    use p256::pkcs8::EncodePublicKey as _;

    pub fn key(seed: u8) -> SigningKey {
        SigningKey::from_slice(&[seed; 32]).unwrap()
    }

    pub fn pem(key: &SigningKey) -> String {
        key.verifying_key().to_public_key_pem(Default::default()).unwrap()
    }

    pub fn sign(key: &SigningKey, payload: &[u8]) -> String {
        let signature: Signature = key.sign(payload);
        BASE64.encode(signature.to_der().as_bytes())
    }

    const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const OTHER: &str = "sha256:2222222222222222222222222222222222222222222222222222222222222222";

    #[test]
    fn a_signature_verifies_only_with_its_key_and_for_its_digest() {
        let signer = key(7);
        let verifying = public_key(&pem(&signer)).unwrap();
        let payload = payload("127.0.0.1:5000/tools/hello", DIGEST);
        let signature = sign(&signer, &payload);
        let any = |_: &str| Ok(());
        verify(&verifying, &payload, &signature, DIGEST, &any).unwrap();
        let elsewhere = |named: &str| -> Result<()> { bail!("`{named}` is another repository") };
        let error = verify(&verifying, &payload, &signature, DIGEST, &elsewhere)
            .unwrap_err()
            .to_string();
        assert!(error.contains("`127.0.0.1:5000/tools/hello` is another"), "{error}");

        let wrong_key = public_key(&pem(&key(8))).unwrap();
        let error = verify(&wrong_key, &payload, &signature, DIGEST, &any)
            .unwrap_err()
            .to_string();
        assert!(error.contains("does not verify with this key"), "{error}");

        let error = verify(&verifying, &payload, &signature, OTHER, &any)
            .unwrap_err()
            .to_string();
        assert!(error.contains("not for this component's manifest"), "{error}");

        let mut tampered = payload.clone();
        tampered[10] ^= 1;
        assert!(verify(&verifying, &tampered, &signature, DIGEST, &any).is_err());
        assert!(verify(&verifying, &payload, "not base64!", DIGEST, &any).is_err());
        assert!(public_key("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----").is_err());
    }

    #[test]
    fn cosign_tags_signatures_by_digest() {
        assert_eq!(signature_tag(DIGEST), format!("sha256-{}.sig", &DIGEST[7..]));
    }
}
