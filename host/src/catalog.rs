//! The catalog: an immutable snapshot of everything loaded, by exposed name.
//!
//! Requests read the current snapshot and keep it for their whole duration,
//! so a call that started before a reload finishes on the plugin it started
//! with. Reloads build a new snapshot and swap it in atomically.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::declarations::ToolDecl;
use crate::loader::LoadError;
use crate::plugin::Plugin;

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

#[derive(Default)]
pub struct Catalog {
    plugins: Vec<Arc<Plugin>>,
    tools: Vec<CatalogTool>,
    tool_index: HashMap<String, usize>,
}

impl Catalog {
    /// Builds a snapshot. Plugins are taken in name order, so which of two
    /// clashing plugins is refused never depends on the folder's listing
    /// order: the later name is refused, whole, with an error.
    pub fn build(mut candidates: Vec<Arc<Plugin>>) -> (Self, Vec<LoadError>) {
        candidates.sort_by(|a, b| a.name.cmp(&b.name));
        let mut catalog = Catalog::default();
        let mut errors = Vec::new();
        let mut owners: HashMap<String, Arc<str>> = HashMap::new();
        for plugin in candidates {
            if let Some(existing) = catalog.plugins.iter().find(|p| p.name == plugin.name) {
                errors.push(LoadError {
                    path: plugin.component_path.clone(),
                    error: anyhow::anyhow!(
                        "another plugin ({}) is already named `{}`; set a different `[plugin] name` in a manifest",
                        existing.component_path.display(),
                        plugin.name
                    ),
                });
                continue;
            }
            let clash = plugin.tools.iter().find_map(|t| {
                owners
                    .get(t.tool.name.as_ref())
                    .map(|owner| (t.tool.name.to_string(), owner.clone()))
            });
            if let Some((tool, owner)) = clash {
                errors.push(LoadError {
                    path: plugin.component_path.clone(),
                    error: anyhow::anyhow!(
                        "its tool `{tool}` is already provided by plugin `{owner}`; \
                         two plugins may not expose the same tool name"
                    ),
                });
                continue;
            }
            for (index, decl) in plugin.tools.iter().enumerate() {
                owners.insert(decl.tool.name.to_string(), plugin.name.clone());
                catalog.tools.push(CatalogTool {
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
}

/// The shared, swappable current catalog.
#[derive(Clone, Default)]
pub struct CatalogHandle(Arc<ArcSwap<Catalog>>);

impl CatalogHandle {
    pub fn new(catalog: Catalog) -> Self {
        Self(Arc::new(ArcSwap::from_pointee(catalog)))
    }

    /// The snapshot to use for one request.
    pub fn snapshot(&self) -> Arc<Catalog> {
        self.0.load_full()
    }

    pub fn replace(&self, catalog: Catalog) {
        self.0.store(Arc::new(catalog));
    }
}
