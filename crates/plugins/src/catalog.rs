//! The catalog: an immutable snapshot of everything loaded, by exposed name.
//!
//! Requests read the current snapshot and keep it for their whole duration,
//! so a call that started before a reload finishes on the plugin it started
//! with. Reloads build a new snapshot and swap it in atomically.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use tokio::sync::{broadcast, watch};

use crate::declarations::{PromptDecl, ResourceDecl, TemplateDecl, ToolDecl};
use crate::load_error::LoadError;
use crate::plugin::Plugin;
use crate::uri_overlap;

mod swap;
pub use swap::{ListChanges, Swap};

/// One tool as clients see it.
pub struct CatalogTool {
    pub plugin: Arc<Plugin>,
    index: usize,
}

impl CatalogTool {
    pub fn decl(&self) -> &ToolDecl {
        &self.plugin.tools[self.index]
    }
}

/// One concrete resource as clients see it.
pub struct CatalogResource {
    pub plugin: Arc<Plugin>,
    index: usize,
}

impl CatalogResource {
    pub fn decl(&self) -> &ResourceDecl {
        &self.plugin.resources[self.index]
    }
}

/// One resource template as clients see it.
pub struct CatalogTemplate {
    pub plugin: Arc<Plugin>,
    index: usize,
}

impl CatalogTemplate {
    pub fn decl(&self) -> &TemplateDecl {
        &self.plugin.templates[self.index]
    }
}

/// One prompt as clients see it.
pub struct CatalogPrompt {
    pub plugin: Arc<Plugin>,
    index: usize,
}

impl CatalogPrompt {
    pub fn decl(&self) -> &PromptDecl {
        &self.plugin.prompts[self.index]
    }
}

#[derive(Default)]
pub struct Catalog {
    plugins: Vec<Arc<Plugin>>,
    tools: Vec<CatalogTool>,
    tool_index: HashMap<String, usize>,
    resources: Vec<CatalogResource>,
    resource_index: HashMap<String, usize>,
    templates: Vec<CatalogTemplate>,
    /// Indices into `templates`, most specific first: the order URIs are
    /// matched in.
    template_order: Vec<usize>,
    prompts: Vec<CatalogPrompt>,
    prompt_index: HashMap<String, usize>,
}

/// Who already provides each exposed name or URI, to refuse a later plugin
/// that would provide it again.
#[derive(Default)]
struct Owners(HashMap<(&'static str, String), Arc<str>>);

impl Owners {
    /// The first of `keys` that another plugin already owns, as an error.
    fn clash(&self, plugin: &Plugin, keys: &[(&'static str, String)]) -> Option<anyhow::Error> {
        keys.iter().find_map(|key| {
            self.0.get(key).map(|owner| {
                let (kind, name) = key;
                anyhow::anyhow!(
                    "its {kind} `{name}` is already provided by plugin `{owner}`; \
                     two plugins may not expose the same {kind} (plugin `{}` is refused whole)",
                    plugin.name
                )
            })
        })
    }
}

/// Every name and URI a plugin exposes, each with its kind.
fn exposed(plugin: &Plugin) -> Vec<(&'static str, String)> {
    let mut keys = Vec::new();
    keys.extend(plugin.tools.iter().map(|t| ("tool", t.tool.name.to_string())));
    keys.extend(plugin.prompts.iter().map(|p| ("prompt", p.prompt.name.clone())));
    keys.extend(plugin.resources.iter().map(|r| ("resource", r.resource.uri.clone())));
    keys.extend(
        plugin
            .templates
            .iter()
            .map(|t| ("resource template", t.template.uri_template.clone())),
    );
    keys
}

impl Catalog {
    /// Builds a snapshot. Plugins are taken in name order, so which of two
    /// clashing plugins is refused never depends on the folder's listing
    /// order: the later name is refused, whole, with an error.
    pub fn build(mut candidates: Vec<Arc<Plugin>>) -> (Self, Vec<LoadError>) {
        candidates.sort_by(|a, b| a.name.cmp(&b.name));
        let mut catalog = Catalog::default();
        let mut errors = Vec::new();
        let mut owners = Owners::default();
        // Names taken so far, each with its component (a map: folders may
        // hold many plugins).
        let mut names: HashMap<Arc<str>, std::path::PathBuf> = HashMap::new();
        for plugin in candidates {
            if let Some(existing) = names.get(&plugin.name) {
                errors.push(LoadError {
                    path: plugin.component_path.clone(),
                    error: anyhow::anyhow!(
                        "another plugin ({}) is already named `{}`; set a different `[plugin] name` in a manifest",
                        existing.display(),
                        plugin.name
                    ),
                });
                continue;
            }
            let keys = exposed(&plugin);
            if let Some(error) = owners.clash(&plugin, &keys) {
                errors.push(LoadError {
                    path: plugin.component_path.clone(),
                    error,
                });
                continue;
            }
            // Overlapping URI claims are clashes too: the later plugin would
            // otherwise receive reads meant for the earlier one.
            if let Some(why) = uri_overlap::claim_clash(&plugin, &catalog.plugins) {
                errors.push(LoadError {
                    path: plugin.component_path.clone(),
                    error: anyhow::anyhow!(why),
                });
                continue;
            }
            names.insert(plugin.name.clone(), plugin.component_path.clone());
            for key in keys {
                owners.0.insert(key, plugin.name.clone());
            }
            for index in 0..plugin.tools.len() {
                catalog.tools.push(CatalogTool {
                    plugin: plugin.clone(),
                    index,
                });
            }
            for index in 0..plugin.resources.len() {
                catalog.resources.push(CatalogResource {
                    plugin: plugin.clone(),
                    index,
                });
            }
            for index in 0..plugin.templates.len() {
                catalog.templates.push(CatalogTemplate {
                    plugin: plugin.clone(),
                    index,
                });
            }
            for index in 0..plugin.prompts.len() {
                catalog.prompts.push(CatalogPrompt {
                    plugin: plugin.clone(),
                    index,
                });
            }
            catalog.plugins.push(plugin);
        }
        catalog
            .tools
            .sort_by(|a, b| a.decl().tool.name.cmp(&b.decl().tool.name));
        catalog.tool_index = catalog
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.decl().tool.name.to_string(), i))
            .collect();
        catalog
            .resources
            .sort_by(|a, b| a.decl().resource.uri.cmp(&b.decl().resource.uri));
        catalog.resource_index = catalog
            .resources
            .iter()
            .enumerate()
            .map(|(i, r)| (r.decl().resource.uri.clone(), i))
            .collect();
        catalog
            .templates
            .sort_by(|a, b| a.decl().template.uri_template.cmp(&b.decl().template.uri_template));
        let mut order: Vec<usize> = (0..catalog.templates.len()).collect();
        // Stable: equally specific templates keep their (sorted) order.
        order.sort_by_key(|&i| std::cmp::Reverse(catalog.templates[i].decl().matcher.specificity()));
        catalog.template_order = order;
        catalog
            .prompts
            .sort_by(|a, b| a.decl().prompt.name.cmp(&b.decl().prompt.name));
        catalog.prompt_index = catalog
            .prompts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.decl().prompt.name.clone(), i))
            .collect();
        (catalog, errors)
    }

    pub fn plugins(&self) -> &[Arc<Plugin>] {
        &self.plugins
    }

    /// All tools, sorted by exposed name.
    pub fn tools(&self) -> &[CatalogTool] {
        &self.tools
    }

    pub fn tool(&self, name: &str) -> Option<&CatalogTool> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// All concrete resources, sorted by URI.
    pub fn resources(&self) -> &[CatalogResource] {
        &self.resources
    }

    /// All resource templates, sorted by template.
    pub fn templates(&self) -> &[CatalogTemplate] {
        &self.templates
    }

    /// All prompts, sorted by name.
    pub fn prompts(&self) -> &[CatalogPrompt] {
        &self.prompts
    }

    pub fn prompt(&self, name: &str) -> Option<&CatalogPrompt> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
    }

    pub fn template(&self, uri_template: &str) -> Option<&CatalogTemplate> {
        self.templates
            .binary_search_by(|t| t.decl().template.uri_template.as_str().cmp(uri_template))
            .ok()
            .map(|i| &self.templates[i])
    }

    /// The plugin that serves `uri`: the one that lists it, else the one
    /// whose most specific template matches it.
    pub fn resource_owner(&self, uri: &str) -> Option<&Arc<Plugin>> {
        self.resource_source(uri).map(|(plugin, _)| plugin)
    }

    /// The plugin that serves `uri`, and the template it matched (none for
    /// a resource the plugin lists).
    pub fn resource_source(&self, uri: &str) -> Option<(&Arc<Plugin>, Option<&str>)> {
        if let Some(&i) = self.resource_index.get(uri) {
            return Some((&self.resources[i].plugin, None));
        }
        self.template_order
            .iter()
            .map(|&i| &self.templates[i])
            .find(|t| t.decl().matcher.matches(uri).is_some())
            .map(|t| (&t.plugin, Some(t.decl().template.uri_template.as_str())))
    }
}

/// How many swaps a subscriber may fall behind before it is told that
/// everything changed (which is what it would conclude anyway). Each is an
/// `Arc`, so a slow subscriber costs at most this many pointers.
const SWAP_BACKLOG: usize = 16;

/// The shared, swappable current catalog. Each swap is published to
/// subscribers (the MCP layer's notification tasks) and never waits for
/// them: events go up, never calls.
///
/// A handle made by [`CatalogHandle::loading`] is not *loaded* until
/// [`CatalogHandle::mark_loaded`]: requests that read the catalog wait in
/// [`CatalogHandle::loaded`] for the first complete load, so a client can
/// finish its handshake while large plugins compile (an official client gives
/// up on `server/discover` after 10 s) and still never sees a partial list.
#[derive(Clone)]
pub struct CatalogHandle {
    current: Arc<ArcSwap<Catalog>>,
    swaps: broadcast::Sender<Arc<Swap>>,
    loaded: watch::Sender<bool>,
}

impl Default for CatalogHandle {
    fn default() -> Self {
        Self::new(Catalog::default())
    }
}

impl CatalogHandle {
    /// A handle holding `catalog`, loaded.
    pub fn new(catalog: Catalog) -> Self {
        let handle = Self::loading();
        handle.current.store(Arc::new(catalog));
        handle.mark_loaded();
        handle
    }

    /// An empty handle whose first load has not finished.
    pub fn loading() -> Self {
        Self {
            current: Arc::new(ArcSwap::from_pointee(Catalog::default())),
            swaps: broadcast::channel(SWAP_BACKLOG).0,
            loaded: watch::channel(false).0,
        }
    }

    /// The first load is complete: [`CatalogHandle::loaded`] stops waiting.
    pub fn mark_loaded(&self) {
        self.loaded.send_replace(true);
    }

    /// The snapshot to use for one request, as it is now (empty while the
    /// first load runs).
    pub fn snapshot(&self) -> Arc<Catalog> {
        self.current.load_full()
    }

    /// The snapshot to use for one request, once the first load is complete.
    pub async fn loaded(&self) -> Arc<Catalog> {
        let mut loaded = self.loaded.subscribe();
        // The sender lives in `self`, so waiting cannot fail.
        let _ = loaded.wait_for(|done| *done).await;
        self.snapshot()
    }

    /// Swaps `catalog` in and publishes what changed; returns the swap.
    /// Swaps of the first load are not published: no client has seen a list
    /// before it (`loaded` waits for it), so nothing has changed for anyone.
    pub fn replace(&self, catalog: Arc<Catalog>) -> Arc<Swap> {
        let before = self.current.swap(catalog.clone());
        let swap = Arc::new(Swap::new(before, catalog));
        if *self.loaded.borrow() {
            // No subscriber is not an error.
            let _ = self.swaps.send(swap.clone());
        }
        swap
    }

    /// Swaps from now on. A receiver that falls more than a few swaps behind
    /// gets `RecvError::Lagged`, never blocks the publisher.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Swap>> {
        self.swaps.subscribe()
    }
}
