//! An authenticated caller in OAuth mode (the HTTP transport's `auth`
//! makes one from a verified token), and what the access policy grants it.

use std::sync::Arc;

use arc_swap::ArcSwap;
use serde_json::{Map, Value};

use crate::access::{AccessPolicy, Permissions, Target};

/// How far clocks may differ: `exp` and `nbf` are checked this loosely.
pub const LEEWAY_SECS: u64 = 30;

/// An authenticated caller in OAuth mode.
#[derive(Debug, Clone)]
pub struct Principal {
    /// The token's `sub`: audited with each call.
    pub subject: String,
    /// What the policy granted when the token was checked: good for the
    /// request it came with.
    pub grant: Permissions,
    claims: Arc<Map<String, Value>>,
    /// The policy in force, which the policy file's reloads replace.
    policy: Arc<ArcSwap<AccessPolicy>>,
}

impl Principal {
    /// The principal a verified token's `claims` stand for, granted what
    /// `policy` (now) grants them.
    pub fn new(subject: String, claims: Map<String, Value>, policy: Arc<ArcSwap<AccessPolicy>>) -> Self {
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
    /// operator removes the grant — or when the token expires (nothing).
    pub fn permissions_now(&self) -> Permissions {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let expired = self
            .claims
            .get("exp")
            .and_then(Value::as_f64)
            .is_some_and(|exp| now as f64 > exp + LEEWAY_SECS as f64);
        if expired {
            return Permissions::default();
        }
        self.policy.load().grant(&self.claims)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn principal(claims: Value, policy: &Arc<ArcSwap<AccessPolicy>>) -> Principal {
        let Value::Object(claims) = claims else { unreachable!() };
        Principal::new("alice".into(), claims, policy.clone())
    }

    #[test]
    fn the_permissions_now_follow_the_policy_in_force_and_end_with_the_token() {
        let tool = Target::Tool {
            plugin: "notes",
            name: "add_note",
        };
        let policy = AccessPolicy::parse("[[allow]]\nscope = \"notes\"\nplugins = [\"notes\"]").unwrap();
        let policy = Arc::new(ArcSwap::from_pointee(policy));
        let far = 4_000_000_000u64;
        let alice = principal(json!({ "sub": "alice", "scope": "notes", "exp": far }), &policy);
        assert!(alice.allows(tool) && alice.permissions_now().allows(tool));

        // The operator removes the rule: the request's grant stays what it
        // was, what outlives it follows the new policy.
        policy.store(Arc::new(
            AccessPolicy::parse("[[allow]]\nscope = \"other\"\nplugins = [\"notes\"]").unwrap(),
        ));
        assert!(alice.allows(tool));
        assert!(alice.permissions_now().is_empty());

        // A token past its `exp` (and the leeway) is granted nothing any more.
        policy.store(Arc::new(
            AccessPolicy::parse("[[allow]]\nscope = \"notes\"\nplugins = [\"notes\"]").unwrap(),
        ));
        let expired = principal(json!({ "sub": "alice", "scope": "notes", "exp": 1_000_000 }), &policy);
        assert!(expired.permissions_now().is_empty());
        assert!(!alice.permissions_now().is_empty());
    }
}
