//! Finding plugins in a folder and loading them: read, verify, compile,
//! link, ask for declarations, validate.
//!
//! A plugin that fails any step is skipped with one log line naming its file
//! and the reason; the others still load.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, anyhow, bail};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::compilations::Compilations;
use crate::declarations::Declared;
use crate::plain::{self, PlainExports, Skipped};
use crate::plugin::Plugin;
use crate::tiering::{self, Tiering};
use crate::{declaration_limits, declarations};
use warden_origin::Trust;
use warden_runtime::bounded_file;
use warden_runtime::cache::{CodeCache, CodeOrigin};
use warden_runtime::component_shape::{ComponentShape, MAX_COMPONENT_BYTES};
use warden_runtime::contract::{self, Exports};
use warden_runtime::grants::{ProtectedFolders, check_mount_layout};
use warden_runtime::manifest::Manifest;
use warden_runtime::mounts::PinnedMounts;
use warden_runtime::naming;
use warden_runtime::pinned::canonical_as_far_as_exists;
use warden_runtime::secrets::Redactor;
use warden_runtime::wasi_stubs::WasiStubs;
use warden_runtime::{self as runtime, CallContext, Prepared, Runtime, SandboxSettings, Tier};

/// The contract, as messages name it (every served version: see `contract::VERSIONS`).
const CONTRACT: &str = "warden:plugin";

pub use crate::discovery::{Discovered, FilesStamp, PluginSource, discover, discover_all};
pub use crate::load_error::LoadError;

/// Loads plugins: the one place that turns a plugin's files into a `Plugin`.
/// Holds the runtime, when enabled the compiled-code cache, and the folders
/// no plugin may mount.
pub struct Loader {
    runtime: Arc<Runtime>,
    cache: Option<CodeCache>,
    /// Grows when a plugins folder's name comes to name another folder.
    protected: std::sync::RwLock<ProtectedFolders>,
    /// Which pulled components may be served (`--trust`, `--require-signature`);
    /// replaced when the operator reloads the policy (SIGHUP).
    trust: std::sync::RwLock<Arc<Trust>>,
    /// Set by `set_trust`, taken by the reconciler, which then checks the
    /// loaded plugins against the new policy.
    trust_changed: std::sync::atomic::AtomicBool,
    /// Identical components loaded at once are compiled once.
    compilations: Compilations,
    /// Large components are served on baseline code first, once a
    /// reconciler is there to swap their optimised code in.
    tiering: std::sync::OnceLock<Arc<Tiering>>,
}

impl Loader {
    /// A loader for plugins found in `plugins_roots`. Those folders, the
    /// cache's folder and the default cache folder are protected from mounts
    /// (the default one too: a plugin that could plant code there would
    /// have it run by the next `warden` started without `--cache-dir`).
    pub fn new(runtime: Arc<Runtime>, cache: Option<CodeCache>, plugins_roots: &[PathBuf], trust: Trust) -> Arc<Self> {
        let caches = cache
            .as_ref()
            .map(|c| c.dir().to_path_buf())
            .into_iter()
            .chain(CodeCache::default_dir());
        let protected = ProtectedFolders {
            plugins: plugins_roots.iter().map(|r| canonical_as_far_as_exists(r)).collect(),
            caches: caches.map(|c| canonical_as_far_as_exists(&c)).collect(),
        };
        Arc::new(Self {
            runtime,
            cache,
            protected: std::sync::RwLock::new(protected),
            trust: std::sync::RwLock::new(Arc::new(trust)),
            trust_changed: Default::default(),
            compilations: Compilations::default(),
            tiering: std::sync::OnceLock::new(),
        })
    }

    /// Serves large components on baseline code until their optimised code
    /// is ready (`tiering`); what it returns rings at each such moment, and
    /// the caller reloads the plugins on baseline code then. Called by the
    /// reconciler, the one that can swap a plugin's code.
    pub fn enable_tiering(&self) -> Arc<tokio::sync::Notify> {
        self.tiering.get_or_init(Arc::default).signal()
    }

    /// The optimised code compiled in the background for a component.
    pub fn optimised(&self, key: &tiering::Key) -> Option<Component> {
        self.tiering.get()?.ready(key)
    }

    /// Drops background-compiled code no plugin on baseline code needs.
    pub fn retain_optimised(&self, wanted: impl Fn(&tiering::Key) -> bool) {
        if let Some(tiering) = self.tiering.get() {
            tiering.retain(wanted);
        }
    }

    /// The trust policy in force.
    pub fn trust(&self) -> Arc<Trust> {
        self.trust.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Puts `trust` in force for every load from now on; the reconciler's
    /// next pass checks the loaded plugins against it too.
    pub fn set_trust(&self, trust: Trust) {
        *self.trust.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(trust);
        self.trust_changed.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the trust policy changed since this was last asked.
    pub fn take_trust_changed(&self) -> bool {
        self.trust_changed.swap(false, std::sync::atomic::Ordering::SeqCst)
    }

    /// Protects `folder` from mounts too: a plugins folder's name now names
    /// it. Folders it named before stay protected (a plugin mounting the old
    /// release would still reach plugins' files).
    pub fn protect_plugins_folder(&self, folder: &Path) {
        let folder = canonical_as_far_as_exists(folder);
        let mut protected = self.protected.write().unwrap_or_else(|p| p.into_inner());
        if !protected.plugins.contains(&folder) {
            protected.plugins.push(folder);
        }
    }

    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    pub fn cache(&self) -> Option<&CodeCache> {
        self.cache.as_ref()
    }

    /// Loads every plugin in `dir`, in parallel. Results are in the folder's
    /// (sorted) order.
    pub async fn load_dir(self: &Arc<Self>, dir: &Path) -> Result<(Vec<Plugin>, Vec<LoadError>)> {
        let (sources, mut errors) = discover(dir)?;
        let (loaded, failed) = self.load_all(sources, &[]).await?;
        errors.extend(failed.into_iter().map(|(source, error)| LoadError {
            path: source.component,
            error,
        }));
        Ok((loaded.into_iter().map(|(_, plugin)| plugin).collect(), errors))
    }

    /// Loads plugins in parallel; each result is paired with its source, in
    /// the order given. `reusable` plugins lend their compiled code to a
    /// source with the same bytes (see `load`).
    pub async fn load_all(
        self: &Arc<Self>,
        sources: Vec<PluginSource>,
        reusable: &[Arc<Plugin>],
    ) -> Result<(Vec<(PluginSource, Plugin)>, Vec<(PluginSource, anyhow::Error)>)> {
        let _batch = self.compilations.batch();
        let _loading = match self.tiering.get() {
            Some(tiering) => Some(tiering.loading().await),
            None => None,
        };
        let mut tasks = tokio::task::JoinSet::new();
        for (index, source) in sources.into_iter().enumerate() {
            let loader = self.clone();
            let reusable = reusable.to_vec();
            tasks.spawn(async move {
                let loaded = loader.load(&source, &reusable).await;
                (index, source, loaded)
            });
        }
        let mut loaded = Vec::new();
        let mut failed = Vec::new();
        while let Some(joined) = tasks.join_next().await {
            let (index, source, result) = joined.context("a plugin loader task panicked")?;
            match result {
                Ok(plugin) => loaded.push((index, source, plugin)),
                Err(error) => failed.push((index, source, error)),
            }
        }
        loaded.sort_by_key(|(index, ..)| *index);
        failed.sort_by_key(|(index, ..)| *index);
        Ok((
            loaded.into_iter().map(|(_, s, p)| (s, p)).collect(),
            failed.into_iter().map(|(_, s, e)| (s, e)).collect(),
        ))
    }

    /// Loads one plugin, or says precisely why it cannot be loaded.
    ///
    /// When one of `reusable` (typically the version being replaced) has the
    /// same bytes and runs on the same engine, its compiled code is reused:
    /// a manifest-only change re-applies grants and limits without compiling.
    pub async fn load(&self, source: &PluginSource, reusable: &[Arc<Plugin>]) -> Result<Plugin> {
        // Before anything is read: see `FilesStamp`.
        let files = source.stamp();
        let manifest = match &source.manifest {
            Some(path) => Manifest::load(path)?,
            None => Manifest::default(),
        };
        // From here on an error may quote the plugin (its declarations, what
        // it printed as it crashed), which may hold a secret it was given.
        let redactor = Arc::new(manifest.grants.redactor()?);
        self.load_with(source, reusable, manifest, redactor.clone())
            .await
            .map(|plugin| Plugin { files, ..plugin })
            .map_err(|error| redactor.redact_error(error))
    }

    async fn load_with(
        &self,
        source: &PluginSource,
        reusable: &[Arc<Plugin>],
        manifest: Manifest,
        redactor: Arc<Redactor>,
    ) -> Result<Plugin> {
        let runtime = &self.runtime;
        let mounts = self.pin_mounts(&manifest, source)?;
        let name = manifest.name.clone().unwrap_or_else(|| source.stem.clone());
        naming::check_plugin_name(&name).context(
            "the plugin name comes from the file name; rename the file or set `[plugin] name` in its manifest",
        )?;
        let bytes = bounded_file::read_named(&source.component, MAX_COMPONENT_BYTES, "the component")?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        if let Some(pin) = &manifest.sha256
            && *pin != sha256
        {
            bail!(
                "its sha256 is {sha256}, but the manifest pins `plugin.sha256` = {pin}; \
                 the file changed — update the pin only if you trust the new build"
            );
        }
        // Before any compiling or cache lookup: a cached compilation of the
        // same bytes never stands in for checking where they came from.
        let origin = self.trust().check(&name, &source.component, &sha256)?.map(Arc::new);
        check_header(&bytes)?;
        // Before compiling, which takes seconds for a large component. Bytes
        // that do not parse are left for the compiler to refuse, in its words.
        let shape = ComponentShape::of(&bytes).unwrap_or_default();
        shape.check()?;
        let bytes = Arc::new(bytes);
        let metered = manifest.limits.fuel.is_some();
        let engine = runtime.engine_for(metered)?.clone();
        let (component, code) = self
            .code_for(&name, &sha256, &bytes, metered, &engine, reusable)
            .await?;
        check_contract_version(&component)?;
        check_imports(&component)?;
        let pre = runtime.prepare(&component).map_err(|e| {
            anyhow!(
                "it needs an import Warden does not provide ({e:#}); {}",
                runtime::PROVIDED_IMPORTS_HELP
            )
        })?;
        let (exports, plain) = if let Some(version) = contract_version(&component) {
            let exports = Exports::resolve(version, &pre);
            if exports.names().is_empty() {
                bail!("{}", describe_foreign_exports(&component));
            }
            (exports, None)
        } else {
            let plain = plain_functions(component.engine(), &component, &bytes, &name)?;
            (Exports::default(), Some(plain))
        };
        let manifest_name = crate::plugin::manifest_name(&source.component, source.manifest.as_deref());
        let prepared = Prepared::new(
            pre,
            SandboxSettings {
                limits: manifest.limits.clone(),
                grants: Arc::new(manifest.grants.clone()),
                config: Arc::new(manifest.grants.config.iter().cloned().collect()),
                mounts,
                manifest: manifest_name.clone().into(),
                tasks: manifest.tasks.clone(),
                redactor,
            },
        )
        .with_wasi_stubs(WasiStubs::of(&bytes));
        let plugin_name: Arc<str> = name.into();
        let declared = match &plain {
            // A plain component's tools follow from its types: nothing to ask.
            Some(plain) => Declared {
                tools: plain.functions.iter().map(|f| f.declared.clone()).collect(),
                ..Declared::default()
            },
            None => Plugin::declared(runtime, &prepared, &exports, CallContext::detached(plugin_name.clone()))
                .await
                .map_err(|(failure, step)| anyhow!("{}", failure.describe(&plugin_name, &manifest_name, step)))?,
        };
        declaration_limits::check(&declared)?;
        let tools = declarations::tools(declared.tools, declared.executions)
            .context("its `list-tools` or `list-tool-execution` answer is malformed")?;
        let mut tools = crate::annotations::serve(&plugin_name, &manifest.grants, tools);
        crate::manifest_tools::apply(&manifest, &manifest_name, &mut tools)?;
        let resources =
            declarations::resources(declared.resources).context("its `list-resources` answer is malformed")?;
        let templates =
            declarations::templates(declared.templates).context("its `list-resource-templates` answer is malformed")?;
        let prompts = declarations::prompts(declared.prompts).context("its `list-prompts` answer is malformed")?;
        Ok(Plugin {
            name: plugin_name,
            component_path: source.component.clone(),
            manifest_path: source.manifest.clone(),
            files: Default::default(),
            sha256,
            origin,
            component,
            code,
            shape,
            prepared,
            exports,
            plain,
            tools,
            resources,
            templates,
            prompts,
        })
    }

    /// The compiled code for a component: optimised code compiled in the
    /// background, a loaded plugin's (same bytes, same engine), the cache's,
    /// or compiled now — by Winch first when it is large and tiering is on.
    async fn code_for(
        &self,
        name: &str,
        sha256: &str,
        bytes: &Arc<Vec<u8>>,
        metered: bool,
        engine: &Engine,
        reusable: &[Arc<Plugin>],
    ) -> Result<(Component, CodeOrigin)> {
        let key = (sha256.to_string(), metered);
        if let Some(component) = self.optimised(&key) {
            return Ok((component, CodeOrigin::Compiled));
        }
        let same_bytes = |tier: Tier| {
            reusable.iter().find(|p| {
                p.sha256 == sha256
                    && p.metered() == metered
                    && self.runtime.tier_of(&p.component) == tier
                    && (tier == Tier::Baseline || Engine::same(p.component.engine(), engine))
            })
        };
        if let Some(plugin) = same_bytes(Tier::Optimised).or_else(|| same_bytes(Tier::Baseline)) {
            return Ok((plugin.component.clone(), CodeOrigin::Reused));
        }
        let optimise = {
            let (cache, digest, bytes, engine) = (self.cache.clone(), key.0.clone(), bytes.clone(), engine.clone());
            move || match cache {
                Some(cache) => cache.load_or_compile(&engine, &digest, &bytes),
                None => Component::new(&engine, &*bytes)
                    .map(|component| (component, CodeOrigin::Compiled))
                    .map_err(|e| warden_runtime::proposals::refusal(&bytes[..], &e)),
            }
        };
        let baseline = match self.tiering.get() {
            Some(tiering)
                if bytes.len() >= tiering::BASELINE_FROM
                    && !self.cache.as_ref().is_some_and(|c| c.contains(engine, sha256)) =>
            {
                self.runtime.baseline_engine_for(metered).map(|e| (tiering, e.clone()))
            }
            _ => None,
        };
        let Some((tiering, baseline)) = baseline else {
            return self
                .compilations
                .compile_once(sha256, metered, Tier::Optimised, async move || {
                    tokio::task::spawn_blocking(optimise)
                        .await
                        .context("the compiler thread panicked")?
                })
                .await;
        };
        if let Some(component) = tiering.baseline(&key) {
            return Ok((component, CodeOrigin::Reused));
        }
        let compiled = {
            let bytes = bytes.clone();
            self.compilations
                .compile_once(sha256, metered, Tier::Baseline, async move || {
                    tokio::task::spawn_blocking(move || {
                        Component::new(&baseline, &*bytes)
                            .map(|component| (component, CodeOrigin::Baseline))
                            .map_err(|e| warden_runtime::proposals::refusal(&bytes[..], &e))
                    })
                    .await
                    .context("the compiler thread panicked")?
                })
                .await?
        };
        tiering.optimise(key, name, compiled.0.clone(), move || {
            optimise().map(|(component, _)| component)
        });
        Ok(compiled)
    }

    /// Opens the plugin's mounts once, for all its calls, and checks where
    /// they are (see `grants::check_mount_layout`).
    fn pin_mounts(&self, manifest: &Manifest, source: &PluginSource) -> Result<PinnedMounts> {
        let mounts = &manifest.grants.mounts;
        if mounts.is_empty() {
            return Ok(PinnedMounts::default());
        }
        let own_folder = source.folder.as_deref().map(canonical_as_far_as_exists);
        let manifest_path = source.manifest.as_deref().unwrap_or(&source.component);
        PinnedMounts::pin(mounts)
            .and_then(|pinned| {
                check_mount_layout(
                    mounts,
                    own_folder.as_deref(),
                    &self.protected.read().unwrap_or_else(|p| p.into_inner()),
                )?;
                Ok(pinned)
            })
            .with_context(|| format!("invalid manifest {}", manifest_path.display()))
    }
}

fn check_header(bytes: &[u8]) -> Result<()> {
    const MAGIC: &[u8] = b"\0asm";
    const CORE_MODULE: &[u8] = &[1, 0, 0, 0];
    const COMPONENT_LAYER: &[u8] = &[0x0d, 0, 1, 0];
    if bytes.len() < 8 || &bytes[..4] != MAGIC {
        bail!("not a WebAssembly file (it may still be being written, or be something else)");
    }
    match &bytes[4..8] {
        v if v == COMPONENT_LAYER => Ok(()),
        v if v == CORE_MODULE => bail!(
            "a core WebAssembly module, not a component; build it for `wasm32-wasip2` \
             (or wrap it with `wasm-tools component new`)"
        ),
        other => bail!("an unsupported WebAssembly version/layer {other:02x?}"),
    }
}

/// Refuses a component built against another version of the contract, before
/// linking can fail with a less helpful message.
fn check_contract_version(component: &wasmtime::component::Component) -> Result<()> {
    let ty = component.component_type();
    let engine = component.engine();
    let names: Vec<String> = ty
        .imports(engine)
        .map(|(name, _)| name.to_string())
        .chain(ty.exports(engine).map(|(name, _)| name.to_string()))
        .filter(|name| name.starts_with("warden:plugin/"))
        .collect();
    let version_of = |name: &str| name.rsplit_once('@').map(|(_, version)| version.to_string());
    let foreign: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|name| !version_of(name).is_some_and(|v| contract::VERSIONS.contains(&v.as_str())))
        .collect();
    let served = contract::VERSIONS.map(|v| format!("warden:plugin@{v}")).join(" and ");
    if !foreign.is_empty() {
        bail!(
            "it was built against another contract version (it uses {}); this Warden serves {served} — \
             rebuild the plugin against the `wit/` folder of this release",
            foreign.join(", ")
        );
    }
    let mut versions: Vec<String> = names.iter().filter_map(|name| version_of(name)).collect();
    versions.sort();
    versions.dedup();
    if versions.len() > 1 {
        bail!(
            "it mixes contract versions ({}): a plugin is built against one of {served}",
            versions.join(", ")
        );
    }
    Ok(())
}

/// The contract version the component speaks, when it exports any of the
/// contract's interfaces (`check_contract_version` has made sure it speaks
/// one served version only). Any other component is a plain component.
fn contract_version(component: &Component) -> Option<&'static str> {
    let exported: Vec<String> = component
        .component_type()
        .exports(component.engine())
        .map(|(name, _)| name.to_string())
        .filter(|name| name.starts_with("warden:plugin/"))
        .collect();
    let first = exported.first()?;
    contract::VERSIONS
        .into_iter()
        .find(|version| first.ends_with(&format!("@{version}")))
}

/// Refuses a component that imports what Warden does not provide, naming
/// each such import and what Warden provides instead.
fn check_imports(component: &Component) -> Result<()> {
    let foreign: Vec<String> = component
        .component_type()
        .imports(component.engine())
        .map(|(name, _)| name)
        .filter(|name| !runtime::provides(name))
        .map(|name| format!("`{name}`"))
        .collect();
    if !foreign.is_empty() {
        bail!(
            "it imports {}, which Warden does not provide; {}",
            foreign.join(", "),
            runtime::PROVIDED_IMPORTS_HELP
        );
    }
    Ok(())
}

/// The functions of a plain component that can be served as tools. Each
/// one is held to the same rules as a declared tool, alone, so one function
/// with an oversized schema is skipped rather than refusing the rest.
fn plain_functions(engine: &Engine, component: &Component, bytes: &[u8], plugin: &str) -> Result<PlainExports> {
    let mut plain = plain::discover(component, engine, bytes)?;
    // Bound the count and sizes before compiling anyone's schema.
    declaration_limits::check(&Declared {
        tools: plain.functions.iter().map(|f| f.declared.clone()).collect(),
        ..Declared::default()
    })?;
    let candidates = std::mem::take(&mut plain.functions);
    for function in candidates {
        match declarations::tools(vec![function.declared.clone()], Vec::new()) {
            Ok(_) => plain.functions.push(function),
            Err(error) => plain.skipped.push(Skipped {
                export_name: function.export_name,
                reason: format!("{error:#}"),
            }),
        }
    }
    for skipped in &plain.skipped {
        tracing::warn!(
            plugin,
            "function `{}` is not served as a tool: {}",
            skipped.export_name,
            skipped.reason
        );
    }
    if plain.functions.is_empty() {
        // The reasons, so that `warden check` shows why without the log.
        let reasons: Vec<String> = plain
            .skipped
            .iter()
            .take(3)
            .map(|s| format!("`{}`: {}", s.export_name, s.reason))
            .collect();
        let more = plain.skipped.len().saturating_sub(reasons.len());
        let skipped = match (reasons.is_empty(), more) {
            (true, _) => "0 skipped".to_string(),
            (false, 0) => format!("{} skipped: {}", plain.skipped.len(), reasons.join("; ")),
            (false, more) => format!(
                "{} skipped: {}; and {more} more",
                plain.skipped.len(),
                reasons.join("; ")
            ),
        };
        bail!(
            "it exports no function that can be served as a tool ({skipped}); a plugin exports \
             functions, or at least one of {CONTRACT}'s tools, resources or prompts"
        );
    }
    Ok(plain)
}

/// Explains a component that exports none of the contract's interfaces.
fn describe_foreign_exports(component: &wasmtime::component::Component) -> String {
    let names: Vec<String> = component
        .component_type()
        .exports(component.engine())
        .map(|(name, _)| name.to_string())
        .collect();
    let found = if names.is_empty() {
        "nothing".to_string()
    } else {
        names.join(", ")
    };
    format!("it exports {found}; a plugin exports at least one of {CONTRACT}'s tools, resources or prompts")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_check_explains_what_the_file_is() {
        assert!(check_header(b"\0asm\x0d\0\x01\0rest").is_ok());
        let core = format!("{:#}", check_header(b"\0asm\x01\0\0\0").unwrap_err());
        assert!(core.contains("core WebAssembly module"), "{core}");
        let junk = format!("{:#}", check_header(b"hello world").unwrap_err());
        assert!(junk.contains("not a WebAssembly file"), "{junk}");
    }
}
