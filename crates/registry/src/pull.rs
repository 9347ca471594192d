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

use crate::client::{MAX_MANIFEST_BYTES, MAX_SMALL_BYTES, Registry};
use warden_origin::cosign::{self, SIGNATURE_ANNOTATION, SIMPLE_SIGNING};
use warden_origin::manifest::{Descriptor, IMAGE_MANIFEST, ImageManifest};
use warden_origin::{Reference, SignatureRecord};

/// A signature manifest with more layers than this is not read.
const MAX_SIGNATURES: usize = 16;

/// The manifest `reference` names: its exact bytes and their digest. A
/// pinned digest must match the bytes; a registry's `Docker-Content-Digest`
/// must too.
pub async fn manifest(registry: &Registry, reference: &Reference) -> Result<Option<(Vec<u8>, String)>> {
    let accept = [(header::ACCEPT, IMAGE_MANIFEST)];
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
    let bytes = answer
        .read(MAX_MANIFEST_BYTES, registry.limits.request_timeout)
        .await?
        .to_vec();
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
    let Some((bytes, _)) = manifest(registry, &tag).await? else {
        return Ok(Vec::new());
    };
    let manifest = ImageManifest::parse(&bytes).context("the signature manifest")?;
    let mut found = Vec::new();
    for layer in manifest
        .layers
        .iter()
        .filter(|l| l.media_type == SIMPLE_SIGNING)
        .take(MAX_SIGNATURES)
    {
        let Some(signature) = layer.annotations.get(SIGNATURE_ANNOTATION) else {
            continue;
        };
        if layer.size > cosign::MAX_PAYLOAD_BYTES {
            bail!("a signature payload of {reference} is {} bytes; refused", layer.size);
        }
        let payload = small_blob(registry, reference, layer).await?;
        found.push(SignatureRecord::CosignSimpleSigning {
            payload: BASE64.encode(&payload),
            signature: signature.clone(),
        });
    }
    Ok(found)
}

/// A small blob (payload, config), read whole and checked against `descriptor`.
pub async fn small_blob(registry: &Registry, reference: &Reference, descriptor: &Descriptor) -> Result<Vec<u8>> {
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
    let bytes = answer.read(MAX_SMALL_BYTES, registry.limits.request_timeout).await?;
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
        file.write_all(&chunk).await?;
    }
    file.flush().await?;
    file.sync_all().await?;
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
