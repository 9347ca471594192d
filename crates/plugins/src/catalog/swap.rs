//! What one catalog swap changed, as the catalog publishes it: which lists
//! clients see differently, and (by comparing the two snapshots) which
//! resources may read differently.

use std::sync::Arc;

use super::Catalog;

/// Which lists changed (or, for what a server advertises, which lists can).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListChanges {
    pub tools: bool,
    pub resources: bool,
    pub prompts: bool,
}

impl ListChanges {
    pub const NONE: Self = Self {
        tools: false,
        resources: false,
        prompts: false,
    };

    pub const ALL: Self = Self {
        tools: true,
        resources: true,
        prompts: true,
    };

    /// Only what `supported` allows.
    pub fn within(self, supported: ListChanges) -> Self {
        Self {
            tools: self.tools && supported.tools,
            resources: self.resources && supported.resources,
            prompts: self.prompts && supported.prompts,
        }
    }

    /// The lists whose declarations differ between two snapshots.
    pub fn between(before: &Catalog, after: &Catalog) -> Self {
        Self {
            tools: !same_tools(before, after),
            resources: !same_resources(before, after),
            prompts: !same_prompts(before, after),
        }
    }
}

/// One catalog swap.
pub struct Swap {
    /// The lists whose declarations changed.
    pub lists: ListChanges,
    before: Arc<Catalog>,
    after: Arc<Catalog>,
}

impl Swap {
    pub fn new(before: Arc<Catalog>, after: Arc<Catalog>) -> Self {
        Self {
            lists: ListChanges::between(&before, &after),
            before,
            after,
        }
    }

    /// A swap that may have changed everything: what a subscriber that
    /// missed some swaps must assume.
    pub fn everything(catalog: Arc<Catalog>) -> Self {
        Self {
            lists: ListChanges::ALL,
            before: Arc::new(Catalog::default()),
            after: catalog,
        }
    }

    /// The catalog before the swap.
    pub fn before(&self) -> &Catalog {
        &self.before
    }

    /// The catalog after the swap.
    pub fn after(&self) -> &Catalog {
        &self.after
    }

    /// Whether reading `uri` may give something else now: the plugin that
    /// serves it was reloaded, removed or added.
    pub fn updated(&self, uri: &str) -> bool {
        match (self.before.resource_owner(uri), self.after.resource_owner(uri)) {
            (Some(before), Some(after)) => !Arc::ptr_eq(before, after),
            (None, None) => false,
            _ => true,
        }
    }
}

fn same_resources(old: &Catalog, new: &Catalog) -> bool {
    old.resources().len() == new.resources().len()
        && old.templates().len() == new.templates().len()
        && old
            .resources()
            .iter()
            .zip(new.resources())
            .all(|(a, b)| a.decl().resource == b.decl().resource)
        && old
            .templates()
            .iter()
            .zip(new.templates())
            .all(|(a, b)| a.decl().template == b.decl().template)
}

fn same_prompts(old: &Catalog, new: &Catalog) -> bool {
    old.prompts().len() == new.prompts().len()
        && old
            .prompts()
            .iter()
            .zip(new.prompts())
            .all(|(a, b)| a.decl().prompt == b.decl().prompt)
}

fn same_tools(old: &Catalog, new: &Catalog) -> bool {
    old.tools().len() == new.tools().len()
        && old
            .tools()
            .iter()
            .zip(new.tools())
            .all(|(a, b)| a.decl().tool == b.decl().tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_and_empty_swaps() {
        let lists = ListChanges {
            tools: true,
            prompts: true,
            ..ListChanges::NONE
        };
        assert_eq!(
            lists.within(ListChanges {
                tools: true,
                ..ListChanges::NONE
            }),
            ListChanges {
                tools: true,
                ..ListChanges::NONE
            }
        );
        let empty = Arc::new(Catalog::default());
        let swap = Swap::new(empty.clone(), empty.clone());
        assert_eq!(swap.lists, ListChanges::NONE);
        assert!(!swap.updated("test://anything"));
        assert_eq!(Swap::everything(empty).lists, ListChanges::ALL);
    }
}
