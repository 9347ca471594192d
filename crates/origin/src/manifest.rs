//! The registry's image manifest in the CNCF "Wasm OCI artifact" layout:
//! config `application/vnd.wasm.config.v0+json` and exactly one
//! `application/wasm` layer, the component itself.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

pub const IMAGE_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const IMAGE_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const WASM_CONFIG: &str = "application/vnd.wasm.config.v0+json";
pub const WASM_LAYER: &str = "application/wasm";
/// The annotation an author may put a suggested capability manifest in
/// (TOML text). Shown by `warden inspect`, never applied.
pub const SUGGESTED_MANIFEST: &str = "dev.warden.suggested-manifest";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageManifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl ImageManifest {
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let manifest: ImageManifest = serde_json::from_slice(bytes)
            .map_err(|e| anyhow::anyhow!("the manifest is not an OCI image manifest ({e})"))?;
        if manifest.schema_version != 2 {
            bail!("the manifest has schemaVersion {}, not 2", manifest.schema_version);
        }
        for descriptor in manifest.layers.iter().chain([&manifest.config]) {
            crate::check_digest(&descriptor.digest)?;
        }
        Ok(manifest)
    }

    /// The component's descriptor: the layout's one `application/wasm` layer.
    pub fn wasm_layer(&self) -> Result<&Descriptor> {
        if self.config.media_type != WASM_CONFIG {
            bail!(
                "the artifact's config is `{}`, not `{WASM_CONFIG}`: it is not a WebAssembly component \
                 in the CNCF Wasm OCI layout",
                self.config.media_type
            );
        }
        match self.layers.as_slice() {
            [layer] if layer.media_type == WASM_LAYER => Ok(layer),
            [layer] => bail!("the artifact's layer is `{}`, not `{WASM_LAYER}`", layer.media_type),
            layers => bail!(
                "the artifact has {} layers; the Wasm OCI layout has exactly one `{WASM_LAYER}` layer",
                layers.len()
            ),
        }
    }

    /// The author's suggested capability manifest, if the artifact has one.
    pub fn suggested_manifest(&self) -> Option<&str> {
        self.annotations.get(SUGGESTED_MANIFEST).map(String::as_str)
    }
}

/// An image index: what the OCI referrers API answers, and what the
/// referrers tag fallback (`sha256-<hex>`) points to.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageIndex {
    #[serde(default)]
    pub manifests: Vec<IndexEntry>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IndexEntry {
    #[serde(default)]
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default)]
    pub artifact_type: Option<String>,
}

impl ImageIndex {
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        let index: ImageIndex =
            serde_json::from_slice(bytes).map_err(|e| anyhow::anyhow!("not an OCI image index ({e})"))?;
        for entry in &index.manifests {
            crate::check_digest(&entry.digest)?;
        }
        Ok(index)
    }
}
