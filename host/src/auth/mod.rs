//! Who is calling, on the HTTP transport: nobody in particular (loopback,
//! or an authenticating proxy in front), the holder of the one bearer token
//! (`--token-file`), or, in OAuth mode (`--oauth-issuer`), the subject of a
//! JWT access token, with what the access policy grants them.
//!
//! Tokens end here: nothing about them reaches a plugin.

pub mod fetch;
pub mod jwks;
pub mod oauth;
pub mod policy_file;
pub mod resource_metadata;

use std::sync::Arc;

use arc_swap::ArcSwap;
use serde_json::{Map, Value};

use crate::access::{Grant, Policy, Target};

/// An authenticated caller in OAuth mode.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The token's `sub`: audited with each call.
    pub subject: String,
    /// What the policy granted when the token was checked: good for the
    /// request it came with.
    pub grant: Grant,
    claims: Arc<Map<String, Value>>,
    /// The policy in force, which the policy file's reloads replace.
    policy: Arc<ArcSwap<Policy>>,
}

impl Principal {
    /// The principal a verified token's `claims` stand for, granted what
    /// `policy` (now) grants them.
    pub fn new(subject: String, claims: Map<String, Value>, policy: Arc<ArcSwap<Policy>>) -> Self {
        let grant = policy.load().grant(&claims);
        Self {
            subject,
            grant,
            claims: Arc::new(claims),
            policy,
        }
    }

    pub fn allows(&self, target: Target<'_>) -> bool {
        self.grant.allows(target)
    }

    /// What the policy in force grants this principal now: for what outlives
    /// the request (a subscription's updates), which must end when the
    /// operator removes the grant.
    pub fn grant_now(&self) -> Grant {
        self.policy.load().grant(&self.claims)
    }
}
