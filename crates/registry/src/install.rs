//! `warden pull` into a plugins folder: fetch into a hidden staging folder,
//! check the result as every later load will (`Trust::check`), and only then
//! move `NAME.wasm` and `NAME.origin.json` into place. A refusal at any step
//! leaves the plugins folder as it was.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

use crate::client::Registry;
use crate::pull;
use warden_origin::manifest::ImageManifest;
use warden_origin::{OriginRecord, Reference, Trust, Verified};

/// What one pull did.
#[derive(Debug)]
pub struct Installed {
    pub name: String,
    pub path: PathBuf,
    pub verified: Verified,
    /// The folder already held exactly this component.
    pub unchanged: bool,
}

/// Whether a pull of a tag may replace a component pulled from the same tag
/// at another digest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagMoves {
    Refuse,
    Accept,
}

pub async fn install(
    registry: &Registry,
    reference: &Reference,
    plugins: &Path,
    name: Option<&str>,
    trust: &Trust,
    tag_moves: TagMoves,
) -> Result<Installed> {
    let name = name.unwrap_or(reference.default_name()).to_string();
    warden_runtime::naming::check_plugin_name(&name).context("choose another name with --name")?;
    if !plugins.is_dir() {
        bail!("the plugins folder {} does not exist", plugins.display());
    }
    let target = plugins.join(format!("{name}.wasm"));
    let existing = if target.exists() {
        match OriginRecord::read_beside(&target)? {
            Some(record) => Some(record),
            None => bail!(
                "{} exists and was not pulled from a registry; move it away or pull under another --name",
                target.display()
            ),
        }
    } else {
        None
    };
    let Some((manifest_bytes, digest)) = pull::manifest(registry, reference).await? else {
        bail!("{reference} does not exist in {} (HTTP 404)", registry.host());
    };
    if let Some(existing) = &existing {
        if existing.manifest_digest == digest && existing.repository == reference.repository_path() {
            let sha256 = sha256_of_file(&target)?;
            if let Ok(Some(verified)) = trust.check(&name, &target, &sha256) {
                return Ok(Installed {
                    name,
                    path: target,
                    verified,
                    unchanged: true,
                });
            }
        } else if reference.digest.is_none()
            && existing.reference == reference.to_string()
            && tag_moves == TagMoves::Refuse
        {
            bail!(
                "the tag of {reference} moved: it was {} when {} was pulled, and is {digest} now; nothing \
                 was changed — pull with --update to take the new digest, or pin the old one with `@{}`",
                existing.manifest_digest,
                target.display(),
                existing.manifest_digest
            );
        } else if existing.repository != reference.repository_path() && tag_moves == TagMoves::Refuse {
            bail!(
                "{} was pulled from {}; replacing it with {reference} needs --update (or pull it under another --name)",
                target.display(),
                existing.repository
            );
        }
    }
    let manifest = ImageManifest::parse(&manifest_bytes).with_context(|| format!("{reference}"))?;
    let layer = manifest.wasm_layer().with_context(|| format!("{reference}"))?.clone();
    let mut signatures = pull::signatures(registry, reference, &digest).await?;
    signatures.extend(pull::bundles(registry, reference, &digest).await?);

    let staging = Staging::new(plugins, &name)?;
    let staged = staging.dir.join(format!("{name}.wasm"));
    pull::component(registry, reference, &layer, &staged).await?;
    let pulled_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut record = OriginRecord::new(
        reference.to_string(),
        reference.repository_path(),
        &manifest_bytes,
        signatures,
        pulled_at,
    );
    let record_path = OriginRecord::path_for(&staged);
    std::fs::write(&record_path, record.to_json()).context("cannot write the origin record")?;
    let sha256 = layer.digest.trim_start_matches("sha256:").to_string();
    let verified = trust
        .check_as(&name, &staged, &target, &sha256)?
        .context("a pulled component has an origin")?;
    if verified.signer.is_some() {
        record.signer = verified.signer.clone();
        std::fs::write(&record_path, record.to_json()).context("cannot write the origin record")?;
    }
    // The record first: a server that reloads between the two renames sees
    // the old component with the new record, refuses it once, and reloads
    // again when the component lands.
    std::fs::rename(OriginRecord::path_for(&staged), OriginRecord::path_for(&target))
        .context("cannot move the origin record into the plugins folder")?;
    std::fs::rename(&staged, &target).context("cannot move the component into the plugins folder")?;
    Ok(Installed {
        name,
        path: target,
        verified,
        unchanged: false,
    })
}

pub fn sha256_of_file(path: &Path) -> Result<String> {
    use sha2::{Digest, Sha256};
    let (mut file, _) =
        warden_origin::bounded_file::open(path).map_err(|error| anyhow::anyhow!(error.describe("the file", path)))?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

/// A hidden folder inside the plugins folder (the watcher ignores dot-names;
/// the same filesystem makes the final renames atomic), removed when done.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(plugins: &Path, name: &str) -> Result<Self> {
        let dir = plugins.join(format!(".{name}.pull-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Staging { dir })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
