//! `oci://REGISTRY/REPOSITORY[:TAG][@sha256:DIGEST]`, checked the way the
//! OCI distribution spec spells names, so a reference never smuggles a path,
//! a query or a second host into the URLs built from it.

use std::fmt;

use anyhow::{Result, bail};

/// A component's address in a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `host` or `host:port`, as written.
    pub registry: String,
    /// `path/to/repo`, lowercase.
    pub repository: String,
    pub tag: Option<String>,
    /// `sha256:…`, when the reference pins one.
    pub digest: Option<String>,
}

const SCHEME: &str = "oci://";
/// The distribution spec's bound on a tag.
const MAX_TAG: usize = 128;
/// Repository names longer than this are refused by common registries too.
const MAX_REPOSITORY: usize = 255;

impl Reference {
    pub fn parse(text: &str) -> Result<Self> {
        let Some(rest) = text.strip_prefix(SCHEME) else {
            bail!("`{text}` is not an OCI reference: write `oci://REGISTRY/REPOSITORY:TAG` or `…@sha256:DIGEST`");
        };
        let Some((registry, path)) = rest.split_once('/') else {
            bail!("`{text}` names no repository: write `oci://REGISTRY/REPOSITORY:TAG`");
        };
        check_registry(registry).map_err(|why| anyhow::anyhow!("`{text}`: {why}"))?;
        let (path, digest) = match path.split_once('@') {
            Some((path, digest)) => {
                crate::check_digest(digest).map_err(|why| anyhow::anyhow!("`{text}`: {why}"))?;
                (path, Some(digest.to_string()))
            }
            None => (path, None),
        };
        // A tag follows the last `:` after the last `/`.
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag.to_string())),
            _ => (path, None),
        };
        check_repository(repository).map_err(|why| anyhow::anyhow!("`{text}`: {why}"))?;
        if let Some(tag) = &tag {
            check_tag(tag).map_err(|why| anyhow::anyhow!("`{text}`: {why}"))?;
        }
        if tag.is_none() && digest.is_none() {
            bail!(
                "`{text}` has neither a tag nor a digest: add `:TAG` or `@sha256:DIGEST` (Warden assumes no `latest`)"
            );
        }
        Ok(Reference {
            // Host names are case-insensitive: one spelling, so a trust
            // policy's patterns (lowercase) cannot be sidestepped by another.
            registry: registry.to_ascii_lowercase(),
            repository: repository.to_string(),
            tag,
            digest,
        })
    }

    /// `REGISTRY/REPOSITORY`: what a trust policy's patterns are matched
    /// against, and what a cosign payload's `docker-reference` names.
    pub fn repository_path(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> Reference {
        Reference {
            digest: Some(digest.to_string()),
            ..self.clone()
        }
    }

    /// The same repository at another tag (cosign's `sha256-….sig`).
    pub fn at_tag(&self, tag: &str) -> Reference {
        Reference {
            tag: Some(tag.to_string()),
            digest: None,
            ..self.clone()
        }
    }

    /// What to ask the registry for: the digest when pinned, else the tag.
    pub fn manifest_ref(&self) -> &str {
        self.digest.as_deref().or(self.tag.as_deref()).unwrap_or("latest")
    }

    /// The last segment of the repository: a pulled component's default name.
    pub fn default_name(&self) -> &str {
        self.repository.rsplit('/').next().unwrap_or(&self.repository)
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

fn check_registry(registry: &str) -> Result<(), String> {
    let (host, port) = match registry.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || registry.starts_with('[') => (host, Some(port)),
        _ => (registry, None),
    };
    let host_ok = if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        inner.parse::<std::net::Ipv6Addr>().is_ok()
    } else {
        !host.is_empty()
            && host.len() <= 253
            && host.split('.').all(|label| {
                !label.is_empty()
                    && label.len() <= 63
                    && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            })
    };
    if !host_ok {
        return Err(format!("`{registry}` is not a registry host (`host` or `host:port`)"));
    }
    if let Some(port) = port
        && port.parse::<u16>().map_or(true, |p| p == 0)
    {
        return Err(format!("`{registry}` has no valid port"));
    }
    Ok(())
}

fn check_repository(repository: &str) -> Result<(), String> {
    if repository.is_empty() || repository.len() > MAX_REPOSITORY {
        return Err(format!("the repository name must be 1 to {MAX_REPOSITORY} characters"));
    }
    for component in repository.split('/') {
        let valid = !component.is_empty()
            && component
                .bytes()
                .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'))
            && component.as_bytes()[0].is_ascii_alphanumeric()
            && component.as_bytes()[component.len() - 1].is_ascii_alphanumeric()
            && !component.contains("..");
        if !valid {
            return Err(format!(
                "`{component}` is not a repository name component (lowercase letters and digits, \
                 joined by `.`, `_` or `-`)"
            ));
        }
    }
    Ok(())
}

fn check_tag(tag: &str) -> Result<(), String> {
    let valid = !tag.is_empty()
        && tag.len() <= MAX_TAG
        && (tag.as_bytes()[0].is_ascii_alphanumeric() || tag.as_bytes()[0] == b'_')
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if valid {
        Ok(())
    } else {
        Err(format!(
            "`{tag}` is not a tag (letters, digits, `_`, `.`, `-`, at most {MAX_TAG})"
        ))
    }
}

/// `REGISTRY/REPOSITORY` as cosign writes it into a payload's
/// `docker-reference`, brought to the form `repository_path` gives: a tag or
/// digest dropped, Docker Hub's two spellings made one.
pub fn normalized_repository(text: &str) -> String {
    let text = text.split_once('@').map_or(text, |(name, _)| name);
    let text = match text.rsplit_once(':') {
        Some((name, tag)) if !tag.contains('/') && name.contains('/') => name,
        _ => text,
    };
    match text.strip_prefix("index.docker.io/") {
        Some(rest) => format!("docker.io/{rest}"),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn signed_references_normalize_to_repository_paths() {
        assert_eq!(normalized_repository("ghcr.io/acme/hello"), "ghcr.io/acme/hello");
        assert_eq!(normalized_repository("ghcr.io/acme/hello:1.0"), "ghcr.io/acme/hello");
        assert_eq!(
            normalized_repository("127.0.0.1:5000/tools/hello@sha256:00"),
            "127.0.0.1:5000/tools/hello"
        );
        assert_eq!(
            normalized_repository("127.0.0.1:5000/tools/hello"),
            "127.0.0.1:5000/tools/hello"
        );
        assert_eq!(
            normalized_repository("index.docker.io/library/x"),
            "docker.io/library/x"
        );
    }

    #[test]
    fn a_registry_host_has_one_spelling() {
        let reference = Reference::parse("oci://LocalHost:5111/tools/text:1").unwrap();
        assert_eq!(reference.repository_path(), "localhost:5111/tools/text");
    }
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn tags_digests_and_ports_are_read() {
        let r = Reference::parse("oci://127.0.0.1:5000/tools/hello:1.0").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("127.0.0.1:5000", "tools/hello")
        );
        assert_eq!(r.tag.as_deref(), Some("1.0"));
        assert_eq!(r.default_name(), "hello");
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/tools/hello:1.0");

        let pinned = Reference::parse(&format!("oci://ghcr.io/acme/x@{DIGEST}")).unwrap();
        assert_eq!((pinned.tag, pinned.digest.as_deref()), (None, Some(DIGEST)));
        let both = Reference::parse(&format!("oci://ghcr.io/acme/x:v2@{DIGEST}")).unwrap();
        assert_eq!(both.manifest_ref(), DIGEST);
        assert_eq!(both.repository_path(), "ghcr.io/acme/x");
        assert!(Reference::parse("oci://[::1]:5000/a:b").is_ok());
    }

    #[test]
    fn anything_that_could_leave_the_path_is_refused() {
        for bad in [
            "ghcr.io/acme/x:1",
            "oci://ghcr.io",
            "oci://ghcr.io/acme/x",
            "oci://ghcr.io/../x:1",
            "oci://ghcr.io/acme/X:1",
            "oci://ghcr.io/acme/x?y=1:1",
            "oci://ghcr.io/acme//x:1",
            "oci://ghcr.io/acme/x:1/../../v2",
            "oci://ghcr.io/acme/x:-1",
            "oci://ghcr.io/acme/x@sha256:ABC",
            "oci://ghcr.io/acme/x@sha512:00",
            "oci://user@evil.example/acme/x:1",
            "oci://ghcr.io:0/acme/x:1",
            "oci://ghcr.io:99999/acme/x:1",
            "oci://gh_cr.io/acme/x:1",
        ] {
            assert!(Reference::parse(bad).is_err(), "accepted {bad}");
        }
        let missing = Reference::parse("oci://ghcr.io/acme/x").unwrap_err().to_string();
        assert!(missing.contains("neither a tag nor a digest"), "{missing}");
    }
}
