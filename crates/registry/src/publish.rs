//! Pushing a component in the CNCF Wasm OCI layout, as wkg does: a config
//! `application/vnd.wasm.config.v0+json` naming the component's world (its
//! imports and exports), one `application/wasm` layer, an image manifest.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Method, StatusCode, header};
use serde_json::json;

use crate::client::Registry;
use warden_origin::Reference;
use warden_origin::manifest::{Descriptor, IMAGE_MANIFEST, ImageManifest, SUGGESTED_MANIFEST, WASM_CONFIG, WASM_LAYER};

/// A component's top-level import and export names, read without compiling.
pub fn world(bytes: &[u8]) -> Result<(Vec<String>, Vec<String>)> {
    use wasmparser::{Encoding, Parser, Payload};
    let mut imports = Vec::new();
    let mut exports = Vec::new();
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.context("the file is not a WebAssembly component")? {
            Payload::Version { encoding, .. } if depth == 0 && encoding != Encoding::Component => {
                bail!("the file is a core WebAssembly module, not a component; build it as a component")
            }
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(section) if depth == 0 => {
                for import in section {
                    imports.push(import?.name.name.to_string());
                }
            }
            Payload::ComponentExportSection(section) if depth == 0 => {
                for export in section {
                    exports.push(export?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    Ok((imports, exports))
}

/// Pushes `component` to `reference` (which must have a tag); returns the
/// manifest's digest.
pub async fn publish(
    registry: &Registry,
    reference: &Reference,
    component: &[u8],
    suggested_manifest: Option<&str>,
) -> Result<String> {
    let Some(tag) = &reference.tag else {
        bail!("publish needs a tag to push to: `oci://REGISTRY/REPOSITORY:TAG`");
    };
    if reference.digest.is_some() {
        bail!("publish takes a tag, not a digest: the digest is what the push produces");
    }
    let (imports, exports) = world(component)?;
    let layer_digest = warden_origin::digest_of(component);
    let config = serde_json::to_vec(&json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
        "component": { "exports": exports, "imports": imports, "target": null },
    }))?;
    let config_descriptor = Descriptor {
        media_type: WASM_CONFIG.into(),
        digest: warden_origin::digest_of(&config),
        size: config.len() as u64,
        annotations: BTreeMap::new(),
    };
    let layer = Descriptor {
        media_type: WASM_LAYER.into(),
        digest: layer_digest,
        size: component.len() as u64,
        annotations: BTreeMap::new(),
    };
    push_blob(registry, reference, Bytes::from(config), &config_descriptor.digest).await?;
    push_blob(registry, reference, Bytes::copy_from_slice(component), &layer.digest).await?;
    let mut annotations = BTreeMap::new();
    if let Some(suggested) = suggested_manifest {
        annotations.insert(SUGGESTED_MANIFEST.to_string(), suggested.to_string());
    }
    let manifest = ImageManifest {
        schema_version: 2,
        media_type: Some(IMAGE_MANIFEST.into()),
        artifact_type: None,
        config: config_descriptor,
        layers: vec![layer],
        subject: None,
        annotations,
    };
    let bytes = serde_json::to_vec(&manifest)?;
    let digest = warden_origin::digest_of(&bytes);
    let answer = registry
        .request(
            Method::PUT,
            &reference.repository,
            &format!("manifests/{tag}"),
            &[(header::CONTENT_TYPE, IMAGE_MANIFEST)],
            Bytes::from(bytes),
        )
        .await?;
    if !answer.status.is_success() {
        let status = answer.status;
        let text = answer.text().await;
        bail!(
            "{} refused the manifest for {reference} (HTTP {status}): {text}",
            registry.host()
        );
    }
    Ok(digest)
}

/// Uploads one blob unless the repository has it already (monolithic
/// upload: `POST` for a location, `PUT` with the digest).
pub async fn push_blob(registry: &Registry, reference: &Reference, blob: Bytes, digest: &str) -> Result<()> {
    let repository = &reference.repository;
    let head = registry
        .request(Method::HEAD, repository, &format!("blobs/{digest}"), &[], Bytes::new())
        .await?;
    if head.status.is_success() {
        return Ok(());
    }
    let started = registry
        .request(Method::POST, repository, "blobs/uploads/", &[], Bytes::new())
        .await?;
    if started.status != StatusCode::ACCEPTED {
        let status = started.status;
        let text = started.text().await;
        bail!(
            "{} did not start an upload to {repository} (HTTP {status}): {text}",
            registry.host()
        );
    }
    let location = started
        .headers
        .get(header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .context("the registry started an upload without a `Location`")?
        .to_string();
    let _ = started.text().await;
    let location = upload_url(registry, &location)?;
    let separator = if location.contains('?') { '&' } else { '?' };
    let url = format!("{location}{separator}digest={}", digest.replace(':', "%3A"));
    let answer = registry
        .request(
            Method::PUT,
            repository,
            &url,
            &[(header::CONTENT_TYPE, "application/octet-stream")],
            blob,
        )
        .await?;
    if answer.status != StatusCode::CREATED {
        let status = answer.status;
        let text = answer.text().await;
        bail!("{} refused blob {digest} (HTTP {status}): {text}", registry.host());
    }
    Ok(())
}

/// An upload `Location`: a path on the registry, or a URL on the registry's
/// own host (credentials are not sent anywhere else).
fn upload_url(registry: &Registry, location: &str) -> Result<String> {
    if location.starts_with('/') && !location.starts_with("//") {
        return Ok(format!("{}://{}{location}", registry_scheme(registry), registry.host()));
    }
    let uri: http::Uri = location.parse().context("the upload `Location` is not a URL")?;
    if uri.authority().map(|a| a.as_str()) != Some(registry.host()) {
        bail!(
            "{} asked for the upload to go to another host (`{location}`); refused",
            registry.host()
        );
    }
    Ok(location.to_string())
}

fn registry_scheme(registry: &Registry) -> &'static str {
    if registry.is_insecure() { "http" } else { "https" }
}
