//! The signature checks sigstore-verify asks of its crypto provider, done by
//! the RustCrypto crates Warden already builds (p256, p384, ed25519-dalek,
//! sha2): verification only, so no key ever lives here. Its built-in
//! provider is aws-lc-rs, a second C crypto library beside ring; this keeps
//! the build to Rust and adds no C.
//!
//! RSA and ML-DSA are refused (fail closed): Sigstore's public-good, staging
//! and GitHub roots sign with ECDSA and Ed25519 (one RSA CT key was retired
//! in 2022).

use sha2_11::Digest as _;
use sigstore_verify::crypto::{CryptoProvider, Error, HashContext, Result, SigningScheme};
use sigstore_verify::types::HashAlgorithm;

#[derive(Debug)]
pub struct RustCrypto;

pub static PROVIDER: RustCrypto = RustCrypto;

/// Installs the provider once per process; later calls are no-ops.
pub fn install() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = sigstore_verify::crypto::install_default_provider(&PROVIDER);
    });
}

struct Hashing<D: sha2_11::Digest + Send>(D);

impl<D: sha2_11::Digest + Send> HashContext for Hashing<D> {
    fn update(&mut self, data: &[u8]) {
        sha2_11::Digest::update(&mut self.0, data);
    }
    fn finalize(self: Box<Self>) -> Vec<u8> {
        self.0.finalize().to_vec()
    }
}

fn invalid(scheme: SigningScheme) -> Error {
    Error::Verification(format!("{} signature invalid", scheme.name()))
}

fn unsupported(scheme: SigningScheme) -> Error {
    Error::UnsupportedAlgorithm(format!("{} is not verified by Warden", scheme.name()))
}

fn digest(algorithm: HashAlgorithm, data: &[u8]) -> Result<Vec<u8>> {
    Ok(match algorithm {
        HashAlgorithm::Sha2256 => sha2_11::Sha256::digest(data).to_vec(),
        HashAlgorithm::Sha2384 => sha2_11::Sha384::digest(data).to_vec(),
        HashAlgorithm::Sha2512 => sha2_11::Sha512::digest(data).to_vec(),
        other => return Err(Error::UnsupportedAlgorithm(format!("cannot compute {other} digests"))),
    })
}

/// ECDSA over a digest of the length the scheme names (checked by callers).
fn verify_digest(scheme: SigningScheme, key: &[u8], digest: &[u8], signature: &[u8]) -> Result<()> {
    use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
    match scheme {
        SigningScheme::EcdsaP256Sha256 | SigningScheme::EcdsaP256Sha384 => {
            let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(key)
                .map_err(|e| Error::InvalidKey(format!("P-256 key: {e}")))?;
            let signature = p256::ecdsa::DerSignature::from_bytes(signature).map_err(|_| invalid(scheme))?;
            key.verify_prehash(digest, &signature).map_err(|_| invalid(scheme))
        }
        SigningScheme::EcdsaP384Sha256 | SigningScheme::EcdsaP384Sha384 => {
            let key = p384::ecdsa::VerifyingKey::from_sec1_bytes(key)
                .map_err(|e| Error::InvalidKey(format!("P-384 key: {e}")))?;
            let signature = p384::ecdsa::DerSignature::from_bytes(signature).map_err(|_| invalid(scheme))?;
            key.verify_prehash(digest, &signature).map_err(|_| invalid(scheme))
        }
        other => Err(unsupported(other)),
    }
}

impl CryptoProvider for RustCrypto {
    fn hash(&self, algorithm: HashAlgorithm) -> Result<Box<dyn HashContext>> {
        Ok(match algorithm {
            HashAlgorithm::Sha2256 => Box::new(Hashing(sha2_11::Sha256::new())),
            HashAlgorithm::Sha2384 => Box::new(Hashing(sha2_11::Sha384::new())),
            HashAlgorithm::Sha2512 => Box::new(Hashing(sha2_11::Sha512::new())),
            other => return Err(Error::UnsupportedAlgorithm(format!("cannot compute {other} digests"))),
        })
    }

    fn verify_raw(&self, scheme: SigningScheme, key: &[u8], data: &[u8], signature: &[u8]) -> Result<()> {
        match scheme {
            SigningScheme::Ed25519 => {
                let key: &[u8; 32] = key
                    .try_into()
                    .map_err(|_| Error::InvalidKey("an Ed25519 key is 32 bytes".into()))?;
                let key = ed25519_dalek::VerifyingKey::from_bytes(key)
                    .map_err(|e| Error::InvalidKey(format!("Ed25519 key: {e}")))?;
                let signature = ed25519_dalek::Signature::from_slice(signature).map_err(|_| invalid(scheme))?;
                key.verify_strict(data, &signature).map_err(|_| invalid(scheme))
            }
            SigningScheme::EcdsaP256Sha256
            | SigningScheme::EcdsaP256Sha384
            | SigningScheme::EcdsaP384Sha256
            | SigningScheme::EcdsaP384Sha384 => {
                let algorithm = scheme.hash_algorithm().ok_or_else(|| unsupported(scheme))?;
                verify_digest(scheme, key, &digest(algorithm, data)?, signature)
            }
            other => Err(unsupported(other)),
        }
    }

    fn verify_prehashed(&self, scheme: SigningScheme, key: &[u8], digest: &[u8], signature: &[u8]) -> Result<()> {
        match scheme.hash_algorithm() {
            Some(algorithm) if digest.len() == algorithm.digest_size() => verify_digest(scheme, key, digest, signature),
            Some(_) => Err(Error::Verification(
                "the digest's length does not match the scheme".into(),
            )),
            None => Err(unsupported(scheme)),
        }
    }
}
