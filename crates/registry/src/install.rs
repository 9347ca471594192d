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
use warden_origin::record::MAX_RECORD_BYTES;
use warden_origin::{OriginRecord, Reference, SignatureRecord, Trust, Verified};

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
    check_name_is_free(plugins, &name)?;
    let existing = existing_record(&target, tag_moves)?;
    // Everything before the component's bytes — manifest, signatures,
    // referrers, bundles, challenges, redirects — within one budget, however
    // slowly a registry answers each request.
    let budget = registry.limits.metadata_deadline();
    let fetched = tokio::time::timeout(budget, metadata(registry, reference))
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "{} did not finish answering for {reference} within {budget:?} (10 × --timeout, for the manifest \
                 and its signatures); nothing was changed",
                registry.host()
            )
        })??;
    let Some(Metadata {
        manifest_bytes,
        digest,
        signatures,
    }) = fetched
    else {
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
    let sha256 = layer.digest.trim_start_matches("sha256:").to_string();
    let pulled_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut record = OriginRecord::new(
        reference.to_string(),
        reference.repository_path(),
        &manifest_bytes,
        signatures,
        pulled_at,
    );
    // Decided before a byte of the component is fetched, exactly as every
    // load decides (the layer's digest stands for the bytes until they
    // arrive and are hashed against it).
    let checked = trust
        .check_record(&name, Some(&record), &target, &sha256)?
        .context("a pulled component has an origin")?;
    // Keep exactly what was checked: the one signature that verified, or
    // none. Signatures that failed or that no rule asked for are not kept,
    // so whoever can push junk `.sig` layers cannot grow the record.
    record.signatures = checked
        .signature
        .map(|index| record.signatures.swap_remove(index).as_checked())
        .into_iter()
        .collect();
    record.signer = checked.verified.signer.clone();
    let json = record.to_json();
    if json.len() as u64 > MAX_RECORD_BYTES {
        bail!(
            "the origin record of {reference} would be {} bytes, more than the {MAX_RECORD_BYTES} every load reads; \
             its signature is too large to keep; nothing was changed",
            json.len()
        );
    }

    let staging = Staging::new(plugins, &name)?;
    let staged = staging.dir.join(format!("{name}.wasm"));
    let download = registry.limits.download_timeout(layer.size);
    tokio::time::timeout(download, pull::component(registry, reference, &layer, &staged))
        .await
        .map_err(|_| {
            anyhow::anyhow!(
                "the component of {reference} did not arrive within {download:?} (--timeout plus its size at 1 MiB/s)"
            )
        })??;
    let record_path = OriginRecord::path_for(&staged);
    std::fs::write(&record_path, &json).context("cannot write the origin record")?;
    // What was written is what every load will read: check it from the file.
    let verified = trust
        .check_as(&name, &staged, &target, &sha256)?
        .context("a pulled component has an origin")?;
    if verified != checked.verified {
        bail!("the origin record of {reference} read back differently from what was checked; nothing was changed");
    }
    // The record first: a server that reloads between the two renames sees
    // the old component with the new record, refuses it once, and reloads
    // again when the component lands.
    std::fs::rename(&record_path, OriginRecord::path_for(&target))
        .context("cannot move the origin record into the plugins folder")?;
    std::fs::rename(&staged, &target).context("cannot move the component into the plugins folder")?;
    Ok(Installed {
        name,
        path: target,
        verified,
        unchanged: false,
    })
}

/// What a registry says about a reference before its component's bytes.
struct Metadata {
    manifest_bytes: Vec<u8>,
    digest: String,
    signatures: Vec<SignatureRecord>,
}

async fn metadata(registry: &Registry, reference: &Reference) -> Result<Option<Metadata>> {
    let Some((manifest_bytes, digest)) = pull::manifest(registry, reference).await? else {
        return Ok(None);
    };
    let mut signatures = pull::signatures(registry, reference, &digest).await?;
    signatures.extend(pull::bundles(registry, reference, &digest).await?);
    Ok(Some(Metadata {
        manifest_bytes,
        digest,
        signatures,
    }))
}

/// A pull installs `NAME.wasm`; a folder plugin `NAME/`, or another
/// plugin's manifest that names itself `NAME`, already holds that name, and
/// the catalog would refuse one of the two.
fn check_name_is_free(plugins: &Path, name: &str) -> Result<()> {
    let folder = plugins.join(name);
    if folder.is_dir() {
        bail!(
            "{} is a folder plugin named `{name}`; pull under another --name, or move the folder away",
            folder.display()
        );
    }
    let found = warden_plugins::discovery::discover_all(plugins)?;
    let target = plugins.join(format!("{name}.wasm"));
    for source in found.sources.iter().filter(|s| s.component != target) {
        let Some(manifest) = &source.manifest else { continue };
        // A manifest that cannot be read names nobody here; the server
        // reports it when it loads that plugin.
        if let Ok(manifest) = warden_runtime::manifest::Manifest::load(manifest)
            && manifest.name.as_deref() == Some(name)
        {
            bail!(
                "{} names its plugin `{name}`; pull under another --name, or rename that plugin",
                source.manifest.as_deref().unwrap_or(&source.component).display()
            );
        }
    }
    Ok(())
}

/// The record of a component already at `target`: `None` when there is no
/// component. A component without a record was placed by hand and is never
/// replaced; a record that cannot be read is replaced only with `--update`.
fn existing_record(target: &Path, tag_moves: TagMoves) -> Result<Option<OriginRecord>> {
    if std::fs::symlink_metadata(target).is_err() {
        return Ok(None);
    }
    match OriginRecord::read_beside(target) {
        Ok(Some(record)) => Ok(Some(record)),
        Ok(None) => bail!(
            "{} exists and was not pulled from a registry; move it away or pull under another --name",
            target.display()
        ),
        Err(_) if tag_moves == TagMoves::Accept => Ok(None),
        Err(error) => Err(error.context(format!(
            "{} cannot be checked against its record; `warden pull --update` replaces both",
            target.display()
        ))),
    }
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
        remove_abandoned(plugins, name);
        let dir = plugins.join(format!(".{name}.pull-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Staging { dir })
    }
}

/// Staging folders of pulls of `name` whose process is gone (killed mid
/// download, before its `Drop` could run): removed, so interrupted pulls do
/// not pile up partial components in the plugins folder.
fn remove_abandoned(plugins: &Path, name: &str) {
    let prefix = format!(".{name}.pull-");
    let Ok(entries) = std::fs::read_dir(plugins) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let alive = pid
            .parse::<u32>()
            .is_ok_and(|pid| Path::new("/proc").join(pid.to_string()).exists());
        if !alive && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
