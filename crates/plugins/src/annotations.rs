//! The annotations a tool is served with: its author's claims, made never
//! less cautious than what the plugin's grants let a call reach.
//!
//! A plugin's annotations (`readOnlyHint`, `openWorldHint`, …) are only its
//! author's word, and a plain component declares none. Warden knows what a
//! call can actually reach, from the grants alone ([`Reach`]):
//!
//! - it **can write** — change something outside its sandbox — when it has a
//!   writable mount or any network grant (`allow`, `tcp`, `udp`, `dns`: a
//!   request can change remote state);
//! - it reaches the **open world** when it has any network grant.
//!
//! Environment variables and read-only mounts are neither. The rule, per
//! hint (what clients are served, whatever the plugin declared):
//!
//! | hint | cannot write / closed world | can write / open world |
//! |---|---|---|
//! | `openWorldHint` | `false` | `true` |
//! | `readOnlyHint` | `true` | a claimed `true` becomes `false`; `false` or absent is kept |
//! | `destructiveHint` | `false` | the author's claim, as declared |
//! | `idempotentHint` | `true` | the author's claim, as declared |
//! | `title` | the author's | the author's |
//!
//! When a plugin can write, the sandbox knows *that* a call may change
//! something, not whether the change destroys or repeats harmlessly: there
//! `destructiveHint` and `idempotentHint` stay the author's claims. Every
//! served value that differs from one the author set is a correction, logged
//! once at load and shown by `warden check`.

use rmcp::model::ToolAnnotations;

use crate::declarations::ToolDecl;
use warden_runtime::grants::{Grants, MountAccess};

/// What a plugin's calls can reach outside their sandbox, from its grants.
/// Each field names the first grant (as the manifest writes it) that
/// gives that reach; `None` means no grant does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    /// A grant through which a call can change something outside: a
    /// writable mount, else the first network grant.
    pub write: Option<String>,
    /// The first network grant: `allow`, then `tcp`, `udp`, `dns`.
    pub network: Option<String>,
}

impl Reach {
    pub fn of(grants: &Grants) -> Self {
        let sockets = &grants.sockets;
        let network = grants
            .http
            .rules
            .first()
            .map(|rule| format!("network.allow {:?}", rule.to_string()))
            .or_else(|| sockets.tcp.first().map(|a| format!("network.tcp \"{a}\"")))
            .or_else(|| sockets.udp.first().map(|a| format!("network.udp \"{a}\"")))
            .or_else(|| sockets.dns.then(|| "network.dns = true".to_string()));
        let writable_mount = grants
            .mounts
            .iter()
            .find(|m| m.access == MountAccess::ReadWrite)
            .map(|m| format!("{} (read-write)", m.key()));
        Self {
            write: writable_mount.or_else(|| network.clone()),
            network,
        }
    }

    /// Can a call change anything outside its sandbox?
    pub fn can_write(&self) -> bool {
        self.write.is_some()
    }

    /// Can a call reach anything beyond its mounts?
    pub fn open_world(&self) -> bool {
        self.network.is_some()
    }
}

/// A served hint that differs from the value the author declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Correction {
    /// The hint's MCP name: `readOnlyHint`.
    pub hint: &'static str,
    pub claimed: bool,
    pub served: bool,
    /// Which grant (or absence of grants) makes `served` true.
    pub reason: String,
}

impl std::fmt::Display for Correction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} claimed {}, served {}: {}",
            self.hint, self.claimed, self.served, self.reason
        )
    }
}

/// The annotations served for a tool whose author claimed `claimed` (see
/// the table above), and each correction of a claim. The one place the
/// rule lives.
pub fn served(claimed: Option<&ToolAnnotations>, reach: &Reach) -> (ToolAnnotations, Vec<Correction>) {
    let claim = claimed.cloned().unwrap_or_default();
    let mut served = claim.clone();
    served.open_world_hint = Some(reach.open_world());
    if reach.can_write() {
        if claim.read_only_hint == Some(true) {
            served.read_only_hint = Some(false);
        }
    } else {
        served.read_only_hint = Some(true);
        served.destructive_hint = Some(false);
        served.idempotent_hint = Some(true);
    }

    let write = match &reach.write {
        Some(grant) => format!("it can change things outside its sandbox through {grant}"),
        None => "it has no writable mount and no network grant, so nothing outside its sandbox can change".into(),
    };
    let world = match &reach.network {
        Some(grant) => format!("it can reach the network through {grant}"),
        None => "it has no network grant, so it can reach nothing beyond its mounts".into(),
    };
    let hints = [
        ("readOnlyHint", claim.read_only_hint, served.read_only_hint, &write),
        (
            "destructiveHint",
            claim.destructive_hint,
            served.destructive_hint,
            &write,
        ),
        ("idempotentHint", claim.idempotent_hint, served.idempotent_hint, &write),
        ("openWorldHint", claim.open_world_hint, served.open_world_hint, &world),
    ];
    let corrections = hints
        .into_iter()
        .filter_map(|(hint, claimed, served, reason)| match (claimed, served) {
            (Some(claimed), Some(served)) if claimed != served => Some(Correction {
                hint,
                claimed,
                served,
                reason: reason.clone(),
            }),
            _ => None,
        })
        .collect();
    (served, corrections)
}

/// Gives each of `plugin`'s tools the annotations its grants make true,
/// and logs every correction of its author's claims.
pub fn serve(plugin: &str, grants: &Grants, mut tools: Vec<ToolDecl>) -> Vec<ToolDecl> {
    let reach = Reach::of(grants);
    for decl in &mut tools {
        let (annotations, corrections) = served(decl.claimed.as_ref(), &reach);
        for correction in corrections {
            tracing::warn!("plugin `{plugin}`, tool `{}`: annotation {correction}", decl.tool.name);
        }
        decl.tool.annotations = Some(annotations);
    }
    tools
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use warden_runtime::grants::{HttpRule, Mount};

    fn mount(access: MountAccess) -> Mount {
        Mount {
            host: PathBuf::from("/srv/data"),
            guest: "/data".into(),
            access,
        }
    }

    /// The grants of each kind of reach the table distinguishes.
    fn grants(kind: &str) -> Grants {
        let mut grants = Grants::default();
        match kind {
            "nothing" => {}
            "env and read-only mount" => {
                grants
                    .env
                    .push(("TOKEN".into(), warden_runtime::secrets::Setting::Plain("x".into())));
                grants.mounts.push(mount(MountAccess::ReadOnly));
            }
            "writable mount" => grants.mounts.push(mount(MountAccess::ReadWrite)),
            "http" => grants.http.rules.push(HttpRule::parse("api.example.com").unwrap()),
            "tcp" => grants.sockets.tcp.push("127.0.0.1:5432".parse().unwrap()),
            "udp" => grants.sockets.udp.push("127.0.0.1:53".parse().unwrap()),
            "dns" => grants.sockets.dns = true,
            other => panic!("no grants {other:?}"),
        }
        grants
    }

    #[test]
    fn reach_comes_from_writable_mounts_and_network_grants_only() {
        let cases = [
            ("nothing", None, None),
            ("env and read-only mount", None, None),
            ("writable mount", Some("filesystem.\"/srv/data\" (read-write)"), None),
            (
                "http",
                Some("network.allow \"api.example.com\""),
                Some("network.allow \"api.example.com\""),
            ),
            (
                "tcp",
                Some("network.tcp \"127.0.0.1:5432\""),
                Some("network.tcp \"127.0.0.1:5432\""),
            ),
            (
                "udp",
                Some("network.udp \"127.0.0.1:53\""),
                Some("network.udp \"127.0.0.1:53\""),
            ),
            ("dns", Some("network.dns = true"), Some("network.dns = true")),
        ];
        for (kind, write, network) in cases {
            let reach = Reach::of(&grants(kind));
            assert_eq!(reach.write.as_deref(), write, "{kind}");
            assert_eq!(reach.network.as_deref(), network, "{kind}");
            assert_eq!(reach.can_write(), write.is_some(), "{kind}");
            assert_eq!(reach.open_world(), network.is_some(), "{kind}");
        }
        // A writable mount is named before a network grant.
        let mut both = grants("http");
        both.mounts.push(mount(MountAccess::ReadWrite));
        assert_eq!(
            Reach::of(&both).write.as_deref(),
            Some("filesystem.\"/srv/data\" (read-write)")
        );
    }

    /// `[readOnly, destructive, idempotent, openWorld]`: `None` is absent.
    type Hints = [Option<bool>; 4];

    fn annotations(hints: Hints) -> ToolAnnotations {
        ToolAnnotations::from_raw(Some("Title".into()), hints[0], hints[1], hints[2], hints[3])
    }

    fn hints(a: &ToolAnnotations) -> Hints {
        [
            a.read_only_hint,
            a.destructive_hint,
            a.idempotent_hint,
            a.open_world_hint,
        ]
    }

    const T: Option<bool> = Some(true);
    const F: Option<bool> = Some(false);
    const NONE: Hints = [None; 4];

    #[test]
    fn the_rule_table() {
        // (reach, claimed (None: no annotations at all), served, corrected hints)
        #[rustfmt::skip]
        let cases: &[(&str, Option<Hints>, Hints, &[&str])] = &[
            // Nothing outside reachable: everything derived, whatever was claimed.
            ("nothing", None,                 [T, F, T, F], &[]),
            ("nothing", Some(NONE),           [T, F, T, F], &[]),
            ("nothing", Some([T, F, T, F]),   [T, F, T, F], &[]),
            ("nothing", Some([F, T, F, T]),   [T, F, T, F],
                &["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]),
            ("env and read-only mount", Some([F, T, F, T]), [T, F, T, F],
                &["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]),
            ("env and read-only mount", None, [T, F, T, F], &[]),
            // A writable mount: may write, closed world.
            ("writable mount", None,               [None, None, None, F], &[]),
            ("writable mount", Some(NONE),         [None, None, None, F], &[]),
            ("writable mount", Some([T, F, T, F]), [F, F, T, F], &["readOnlyHint"]),
            ("writable mount", Some([F, T, F, F]), [F, T, F, F], &[]),
            ("writable mount", Some([F, F, T, T]), [F, F, T, F], &["openWorldHint"]),
            ("writable mount", Some([None, T, None, None]), [None, T, None, F], &[]),
            // Any network grant: may write, open world.
            ("http", None,               [None, None, None, T], &[]),
            ("http", Some([T, F, T, F]), [F, F, T, T], &["readOnlyHint", "openWorldHint"]),
            ("http", Some([F, T, F, T]), [F, T, F, T], &[]),
            ("http", Some([T, None, None, T]), [F, None, None, T], &["readOnlyHint"]),
            ("tcp",  Some([T, F, T, F]), [F, F, T, T], &["readOnlyHint", "openWorldHint"]),
            ("tcp",  None,               [None, None, None, T], &[]),
            ("udp",  Some([F, F, F, F]), [F, F, F, T], &["openWorldHint"]),
            ("udp",  None,               [None, None, None, T], &[]),
            ("dns",  Some([T, T, T, T]), [F, T, T, T], &["readOnlyHint"]),
            ("dns",  None,               [None, None, None, T], &[]),
        ];
        for &(kind, claimed, expected, corrected) in cases {
            let reach = Reach::of(&grants(kind));
            let claimed = claimed.map(annotations);
            let (served, corrections) = served(claimed.as_ref(), &reach);
            let case = format!("{kind}, claimed {claimed:?}");
            assert_eq!(hints(&served), expected, "{case}");
            let title = claimed.as_ref().map(|_| "Title".to_string());
            assert_eq!(served.title, title, "the title is the author's: {case}");
            let names: Vec<&str> = corrections.iter().map(|c| c.hint).collect();
            assert_eq!(names, corrected, "{case}");
            for c in &corrections {
                assert_ne!(c.claimed, c.served, "{case}");
            }
        }
    }

    #[test]
    fn a_correction_names_the_hint_both_values_and_the_grant() {
        let claim = annotations([T, F, T, F]);
        let (_, corrections) = served(Some(&claim), &Reach::of(&grants("http")));
        let lines: Vec<String> = corrections.iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                "readOnlyHint claimed true, served false: it can change things outside its sandbox \
                 through network.allow \"api.example.com\"",
                "openWorldHint claimed false, served true: it can reach the network through \
                 network.allow \"api.example.com\"",
            ]
        );
        let claim = annotations([F, T, F, T]);
        let (_, corrections) = served(Some(&claim), &Reach::of(&grants("nothing")));
        assert_eq!(
            corrections[0].to_string(),
            "readOnlyHint claimed false, served true: it has no writable mount and no network grant, \
             so nothing outside its sandbox can change"
        );
        assert_eq!(
            corrections[3].to_string(),
            "openWorldHint claimed true, served false: it has no network grant, so it can reach \
             nothing beyond its mounts"
        );
    }

    #[test]
    fn served_annotations_are_never_less_cautious_than_the_grants() {
        let values = [None, T, F];
        for kind in ["nothing", "writable mount", "http", "tcp", "udp", "dns"] {
            let reach = Reach::of(&grants(kind));
            for a in values {
                for b in values {
                    for c in values {
                        for d in values {
                            let (served, _) = served(Some(&annotations([a, b, c, d])), &reach);
                            assert_eq!(served.open_world_hint, Some(reach.open_world()), "{kind}");
                            if reach.can_write() {
                                assert_ne!(served.read_only_hint, T, "{kind}");
                            }
                        }
                    }
                }
            }
        }
    }
}
