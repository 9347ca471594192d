//! SIGHUP, as a daemon takes it: never the end of the server (the signal's
//! default action), but "look at your files again" — the audit log is
//! opened anew at its path (the logrotate convention), the trust and access
//! policies are read again, and every plugins folder is rescanned (which
//! checks the loaded plugins against a replaced trust policy).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::Notify;

use crate::cli::TrustArgs;
use warden_plugins::loader::Loader;
use warden_runtime::audit_log::AuditLog;
use warden_transport::auth::oauth::OAuth;
use warden_transport::auth::policy_file;

/// Takes over SIGHUP from its default action (ending the process). Called
/// first thing, so that a SIGHUP sent while plugins load is kept for
/// `Reload::spawn` rather than killing the server.
pub fn listen() -> Result<Signal> {
    signal(SignalKind::hangup()).context("cannot listen for SIGHUP")
}

/// What a SIGHUP reloads.
pub struct Reload {
    pub audit: Option<Arc<AuditLog>>,
    pub loader: Arc<Loader>,
    /// Where the trust policy came from (`--trust`, `--require-signature`).
    pub trust: TrustArgs,
    /// OAuth mode's access policy file, and where it is put in force.
    pub access: Option<(PathBuf, Arc<OAuth>)>,
    pub plugins_rescan: Arc<Notify>,
}

impl Reload {
    /// Reloads on every SIGHUP `hangups` receives, for as long as the
    /// server runs.
    pub fn spawn(self, mut hangups: Signal) {
        tokio::spawn(async move {
            while hangups.recv().await.is_some() {
                self.reload();
            }
        });
    }

    fn reload(&self) {
        tracing::info!("SIGHUP: reopening the audit log, reading the policies and the plugins folders again");
        if let Some(audit) = &self.audit {
            audit.reopen();
        }
        if let Some(path) = &self.trust.trust {
            match self.trust.load() {
                Ok(trust) => {
                    tracing::info!("trust policy {} reloaded", path.display());
                    self.loader.set_trust(trust);
                }
                Err(error) => tracing::error!("{error:#}; the trust policy in force stays"),
            }
        }
        if let Some((path, oauth)) = &self.access {
            policy_file::reload(path, oauth);
        }
        self.plugins_rescan.notify_one();
    }
}
