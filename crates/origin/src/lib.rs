//! Where a component came from and who vouches for it, checked offline.
//!
//! `warden pull` writes a component together with its [`OriginRecord`]
//! (`NAME.origin.json`): the reference it was pulled by, the registry's
//! manifest (whose digest is what signers sign) and the signatures found for
//! it. Every load — the first and every hot reload — checks the record
//! again with [`Trust::check`]: that the component's bytes are the layer the
//! manifest names, and that a signer the operator's [`TrustPolicy`] trusts
//! for that repository signed that manifest. Nothing in this crate talks to
//! a network.

pub mod bounded_file;
pub mod cosign;
mod crypto_provider;
pub mod keyless;
pub mod manifest;
pub mod pattern;
pub mod policy;
pub mod record;
pub mod reference;
mod trust;

pub use policy::{Signer, TrustPolicy};
pub use record::{OriginRecord, SignatureRecord};
pub use reference::Reference;
pub use trust::{Trust, Verified};

/// `sha256:` and 64 lowercase hex digits: the only digest Warden accepts.
pub fn check_digest(digest: &str) -> anyhow::Result<()> {
    match digest.strip_prefix("sha256:") {
        Some(hex) if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) => Ok(()),
        _ => anyhow::bail!("`{digest}` is not a sha256 digest (`sha256:` and 64 lowercase hex digits)"),
    }
}

/// The digest of `bytes`, as registries write it.
pub fn digest_of(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// A small file of the operator's (a trust policy, a signer's key, a
/// trusted root), read the one way: a regular file only, never waited on,
/// at most `max` bytes of UTF-8.
pub(crate) fn read_bounded(path: &std::path::Path, max: u64) -> anyhow::Result<String> {
    bounded_file::read_text(path, max, "the file")
}
