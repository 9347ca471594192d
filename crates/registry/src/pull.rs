//! Reading a component from a registry: its manifest (digest checked), its
//! cosign signatures and its one layer, streamed to a file and hashed on
//! the way, never longer than its descriptor says or `max_component` allows.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use http::{Method, StatusCode, header};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use crate::client::{MAX_MANIFEST_BYTES, MAX_SIGNATURE_MANIFEST_BYTES, MAX_SMALL_BYTES, Registry};
use warden_origin::cosign::{self, SIGNATURE_ANNOTATION, SIMPLE_SIGNING};
use warden_origin::keyless::{BUNDLE_MEDIA_TYPE, MAX_BUNDLE_BYTES};
use warden_origin::manifest::{Descriptor, IMAGE_INDEX, IMAGE_MANIFEST, ImageIndex, ImageManifest, IndexEntry};
use warden_origin::{Reference, SignatureRecord};

/// A signature manifest with more layers than this is not read.
const MAX_SIGNATURES: usize = 16;

/// The manifest `reference` names: its exact bytes and their digest. A
/// pinned digest must match the bytes; a registry's `Docker-Content-Digest`
/// must too.
pub async fn manifest(registry: &Registry, reference: &Reference) -> Result<Option<(Vec<u8>, String)>> {
    manifest_as(registry, reference, IMAGE_MANIFEST, MAX_MANIFEST_BYTES).await
}

/// `manifest`, asking for the media type `accept` (an index, say), reading
/// at most `max` bytes whatever the registry claims.
async fn manifest_as(
    registry: &Registry,
    reference: &Reference,
    accept: &str,
    max: usize,
) -> Result<Option<(Vec<u8>, String)>> {
    let accept = [(header::ACCEPT, accept)];
    let answer = registry
        .request(
            Method::GET,
            &reference.repository,
            &format!("manifests/{}", reference.manifest_ref()),
            &accept,
            Bytes::new(),
        )
        .await?;
    if answer.status == StatusCode::NOT_FOUND {
        let _ = answer.text().await;
        return Ok(None);
    }
    if !answer.status.is_success() {
        let status = answer.status;
        let text = answer.text().await;
        bail!(
            "{} answered HTTP {status} for the manifest of {reference}: {text}",
            registry.host()
        );
    }
    let claimed = answer
        .headers
        .get("docker-content-digest")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = answer.read(max, registry.limits.request_timeout).await?.to_vec();
    let digest = warden_origin::digest_of(&bytes);
    if let Some(pinned) = &reference.digest
        && *pinned != digest
    {
        bail!(
            "{} served a manifest whose digest is {digest}, not the {pinned} asked for; refused",
            registry.host()
        );
    }
    if let Some(claimed) = claimed
        && claimed.starts_with("sha256:")
        && claimed != digest
    {
        bail!(
            "{} says the manifest of {reference} is {claimed}, but its bytes hash to {digest}; refused",
            registry.host()
        );
    }
    Ok(Some((bytes, digest)))
}

/// cosign's signatures for `manifest_digest` (the `sha256-<hex>.sig` tag);
/// none when the tag does not exist.
pub async fn signatures(
    registry: &Registry,
    reference: &Reference,
    manifest_digest: &str,
) -> Result<Vec<SignatureRecord>> {
    let tag = reference.at_tag(&cosign::signature_tag(manifest_digest));
    let Some((bytes, _)) = manifest_as(registry, &tag, IMAGE_MANIFEST, MAX_SIGNATURE_MANIFEST_BYTES).await? else {
        return Ok(Vec::new());
    };
    let manifest = ImageManifest::parse(&bytes).context("the signature manifest")?;
    let mut found = Vec::new();
    let mut skipped = Skipped::new(reference, "signature layer");
    for layer in manifest
        .layers
        .iter()
        .filter(|l| l.media_type == SIMPLE_SIGNING)
        .take(MAX_SIGNATURES)
    {
        let Some(signature) = layer.annotations.get(SIGNATURE_ANNOTATION) else {
            continue;
        };
        // Anyone who can push adds layers: one that cannot be read is
        // skipped, not allowed to fail the pull of a signed component.
        if layer.size > cosign::MAX_PAYLOAD_BYTES {
            skipped.add(format!("a payload of {} bytes", layer.size));
            continue;
        }
        let payload = match small_blob(registry, reference, layer, MAX_SMALL_BYTES).await {
            Ok(payload) => payload,
            Err(error) => {
                skipped.add(format!("{error:#}"));
                continue;
            }
        };
        let annotation = |key: &str| layer.annotations.get(key).cloned();
        found.push(SignatureRecord::CosignSimpleSigning {
            payload: BASE64.encode(&payload),
            signature: signature.clone(),
            certificate: annotation(cosign::CERTIFICATE_ANNOTATION),
            rekor_bundle: annotation(cosign::REKOR_BUNDLE_ANNOTATION),
        });
    }
    skipped.say();
    Ok(found)
}

/// Entries a registry listed that could not be read, said once per pull.
struct Skipped<'a> {
    reference: &'a Reference,
    what: &'static str,
    count: usize,
    first: Option<String>,
}

impl<'a> Skipped<'a> {
    fn new(reference: &'a Reference, what: &'static str) -> Self {
        Skipped {
            reference,
            what,
            count: 0,
            first: None,
        }
    }

    fn add(&mut self, why: String) {
        self.count += 1;
        self.first.get_or_insert(why);
    }

    fn say(&self) {
        if let Some(first) = &self.first {
            tracing::warn!(
                "{} {}(s) of {} could not be read and were skipped (the first: {first})",
                self.count,
                self.what,
                self.reference
            );
        }
    }
}

/// Sigstore bundles attached to `manifest_digest` (cosign 3's default):
/// found through the OCI 1.1 referrers API, or its tag fallback
/// (`sha256-<hex>`, an image index) on registries without it. Each must name
/// the manifest as its `subject` and hold exactly one bundle layer.
pub async fn bundles(
    registry: &Registry,
    reference: &Reference,
    manifest_digest: &str,
) -> Result<Vec<SignatureRecord>> {
    let index = match referrers(registry, reference, manifest_digest).await? {
        Some(index) => index,
        None => {
            let tag = reference.at_tag(&manifest_digest.replacen(':', "-", 1));
            match manifest_as(registry, &tag, IMAGE_INDEX, MAX_MANIFEST_BYTES).await? {
                Some((bytes, _)) => ImageIndex::parse(&bytes).context("the referrers tag of the manifest")?,
                None => return Ok(Vec::new()),
            }
        }
    };
    let mut found = Vec::new();
    let mut skipped = Skipped::new(reference, "referrer");
    let candidates = index
        .manifests
        .iter()
        .filter(|entry| entry.artifact_type.as_deref().is_none_or(|t| t == BUNDLE_MEDIA_TYPE))
        .take(MAX_SIGNATURES);
    for entry in candidates {
        match bundle(registry, reference, manifest_digest, entry).await {
            Ok(Some(bundle)) => found.push(SignatureRecord::SigstoreBundle { bundle }),
            Ok(None) => {}
            // Anyone who can push adds referrers: one that cannot be read
            // is skipped, not allowed to fail the pull of a signed component.
            Err(error) => skipped.add(format!("{error:#}")),
        }
    }
    skipped.say();
    Ok(found)
}

/// The Sigstore bundle the referrer `entry` holds; `None` when it holds
/// something else.
async fn bundle(
    registry: &Registry,
    reference: &Reference,
    manifest_digest: &str,
    entry: &IndexEntry,
) -> Result<Option<String>> {
    if entry.size > MAX_SMALL_BYTES as u64 {
        bail!("a referrer of {reference} is {} bytes; refused", entry.size);
    }
    // Read at most what the spec-sized referrer may be, whatever the
    // index claimed its size to be.
    let referrer = reference.at_digest(&entry.digest);
    let Some((bytes, _)) = manifest_as(registry, &referrer, IMAGE_MANIFEST, MAX_SMALL_BYTES).await? else {
        return Ok(None);
    };
    let manifest = ImageManifest::parse(&bytes).context("a referrer's manifest")?;
    let is_bundle =
        manifest.artifact_type.as_deref() == Some(BUNDLE_MEDIA_TYPE) || manifest.config.media_type == BUNDLE_MEDIA_TYPE;
    if !is_bundle {
        return Ok(None);
    }
    if manifest.subject.as_ref().map(|s| s.digest.as_str()) != Some(manifest_digest) {
        bail!("a Sigstore bundle listed for {manifest_digest} names another subject; refused");
    }
    let [layer] = manifest.layers.as_slice() else {
        bail!(
            "a Sigstore bundle manifest of {reference} has {} layers, not one",
            manifest.layers.len()
        );
    };
    if !layer.media_type.starts_with("application/vnd.dev.sigstore.bundle") {
        bail!("a Sigstore bundle manifest of {reference} holds `{}`", layer.media_type);
    }
    let bundle = small_blob(registry, reference, layer, MAX_BUNDLE_BYTES as usize).await?;
    Ok(Some(
        String::from_utf8(bundle).context("a Sigstore bundle is not UTF-8 JSON")?,
    ))
}

/// `GET /v2/<repo>/referrers/<digest>`; `None` when the registry has no
/// referrers API (it answers 404, or anything but an index).
async fn referrers(registry: &Registry, reference: &Reference, digest: &str) -> Result<Option<ImageIndex>> {
    let answer = registry
        .request(
            Method::GET,
            &reference.repository,
            &format!("referrers/{digest}"),
            &[(header::ACCEPT, IMAGE_INDEX)],
            Bytes::new(),
        )
        .await?;
    if !answer.status.is_success() {
        let _ = answer.text().await;
        return Ok(None);
    }
    let bytes = answer.read(MAX_MANIFEST_BYTES, registry.limits.request_timeout).await?;
    Ok(ImageIndex::parse(&bytes).ok())
}

/// A small blob (payload, config), read whole and checked against `descriptor`.
pub async fn small_blob(
    registry: &Registry,
    reference: &Reference,
    descriptor: &Descriptor,
    max: usize,
) -> Result<Vec<u8>> {
    if descriptor.size > max as u64 {
        bail!(
            "blob {} of {reference} is {} bytes; at most {max} are read",
            descriptor.digest,
            descriptor.size
        );
    }
    let answer = registry
        .request(
            Method::GET,
            &reference.repository,
            &format!("blobs/{}", descriptor.digest),
            &[],
            Bytes::new(),
        )
        .await?;
    if !answer.status.is_success() {
        let status = answer.status;
        bail!(
            "{} answered HTTP {status} for blob {}",
            registry.host(),
            descriptor.digest
        );
    }
    let bytes = answer.read(max, registry.limits.request_timeout).await?;
    check_blob(&bytes, descriptor)?;
    Ok(bytes.to_vec())
}

fn check_blob(bytes: &[u8], descriptor: &Descriptor) -> Result<()> {
    let digest = warden_origin::digest_of(bytes);
    if digest != descriptor.digest || bytes.len() as u64 != descriptor.size {
        bail!(
            "blob {} arrived as {} bytes hashing to {digest}, not the {} bytes its descriptor names; refused",
            descriptor.digest,
            bytes.len(),
            descriptor.size
        );
    }
    Ok(())
}

/// Streams the component layer into `dest`, refusing it the moment it
/// outgrows its descriptor or `max_component`, and at the end unless it
/// hashes to its digest.
pub async fn component(registry: &Registry, reference: &Reference, layer: &Descriptor, dest: &Path) -> Result<()> {
    let limits = registry.limits;
    if layer.size > limits.max_component {
        bail!(
            "the component of {reference} is {} bytes; the most Warden pulls is {} (--max-size)",
            layer.size,
            limits.max_component
        );
    }
    let started = Instant::now();
    let deadline = limits.download_timeout(layer.size);
    let mut answer = registry
        .request(
            Method::GET,
            &reference.repository,
            &format!("blobs/{}", layer.digest),
            &[],
            Bytes::new(),
        )
        .await?;
    if !answer.status.is_success() {
        let status = answer.status;
        let text = answer.text().await;
        bail!(
            "{} answered HTTP {status} for the component of {reference}: {text}",
            registry.host()
        );
    }
    let mut file = tokio::fs::File::create(dest)
        .await
        .with_context(|| format!("cannot write {}", dest.display()))?;
    let mut hasher = Sha256::new();
    let mut received: u64 = 0;
    loop {
        let remaining = deadline.saturating_sub(started.elapsed());
        let chunk = tokio::time::timeout(remaining, answer.chunk()).await.map_err(|_| {
            anyhow::anyhow!(
                "the component of {reference} did not arrive within {deadline:?} ({received} of {} bytes)",
                layer.size
            )
        })??;
        let Some(chunk) = chunk else { break };
        received += chunk.len() as u64;
        if received > layer.size {
            bail!(
                "the component of {reference} is larger than the {} bytes its descriptor names; refused",
                layer.size
            );
        }
        hasher.update(&chunk);
        file.write_all(&chunk)
            .await
            .with_context(|| format!("cannot write {}", dest.display()))?;
    }
    file.flush().await?;
    file.sync_all()
        .await
        .with_context(|| format!("cannot write {}", dest.display()))?;
    let digest = format!("sha256:{}", hex::encode(hasher.finalize()));
    if received != layer.size || digest != layer.digest {
        bail!(
            "the component of {reference} arrived as {received} bytes hashing to {digest}, not the {} bytes of {} \
             its manifest names; refused",
            layer.size,
            layer.digest
        );
    }
    Ok(())
}
