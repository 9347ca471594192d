//! `warden pull` and `warden publish`: the registry's side of the plugins
//! folder. What may be installed is decided by the trust policy, exactly as
//! at every later load.

use std::time::Duration;

use anyhow::{Context, Result};

use crate::cli::{PublishArgs, PullArgs, RegistryArgs};
use crate::log_writer::say;
use warden_runtime::bounded_file;

/// A manifest an author suggests is a few lines of TOML.
const MAX_SUGGESTED_MANIFEST_BYTES: u64 = 64 * 1024;
use warden_origin::{Reference, Trust};
use warden_registry::install::{Installed, TagMoves, install};
use warden_registry::sources::{Lock, Locked, Sources};
use warden_registry::{Limits, Registry, credentials};

/// Pulls one reference, or every component of a sources file. Returns
/// whether everything was installed.
pub async fn run(args: &PullArgs) -> Result<bool> {
    let trust = args.trust.load()?;
    let tag_moves = if args.update {
        TagMoves::Accept
    } else {
        TagMoves::Refuse
    };
    if let Some(from) = &args.from {
        return sync(args, from, &trust, tag_moves).await;
    }
    let reference = Reference::parse(args.reference.as_deref().context("name a reference or --from FILE")?)?;
    let registry = registry_for(&args.registry, &reference, false)?;
    let installed = install(
        &registry,
        &reference,
        &args.plugins,
        args.name.as_deref(),
        &trust,
        tag_moves,
    )
    .await?;
    report(&installed, &trust);
    Ok(true)
}

async fn sync(args: &PullArgs, from: &std::path::Path, trust: &Trust, tag_moves: TagMoves) -> Result<bool> {
    let sources = Sources::load(from)?;
    let lock_path = sources.lock_path();
    let mut lock = Lock::load(&lock_path)?;
    let before = serde_json::to_string(&lock.components)?;
    let mut failed = 0;
    for (name, reference) in &sources.components {
        let outcome = async {
            let registry = registry_for(&args.registry, reference, false)?;
            // A tag is pulled at the digest the lock recorded; the tag is
            // still resolved, so a moved tag is noticed, not followed.
            let locked = lock
                .components
                .get(name)
                .filter(|l| l.reference == reference.to_string())
                .cloned();
            let pinned = match (&reference.digest, &locked) {
                (Some(_), _) => reference.clone(),
                (None, Some(locked)) if args.locked => reference.at_digest(&locked.digest),
                (None, None) if args.locked => anyhow::bail!(
                    "{reference} is not in {} and --locked pulls only locked digests; run \
                     `warden pull --from {}` without --locked to resolve and lock it",
                    lock_path.display(),
                    from.display()
                ),
                (None, Some(locked)) => {
                    // Within the same budget a pull's own questions have.
                    let budget = registry.limits.metadata_deadline();
                    let now = tokio::time::timeout(budget, warden_registry::pull::manifest(&registry, reference))
                        .await
                        .map_err(|_| {
                            anyhow::anyhow!(
                                "{} did not say where the tag of {reference} points within {budget:?} \
                                 (10 × --timeout); nothing was changed",
                                registry.host()
                            )
                        })??
                        .map(|(_, digest)| digest);
                    match now {
                        Some(now) if now != locked.digest && tag_moves == TagMoves::Refuse => anyhow::bail!(
                            "the tag of {reference} moved: {} locked {}, the registry now says {now}; nothing \
                             was changed — run with --update to take the new digest",
                            lock_path.display(),
                            locked.digest
                        ),
                        Some(now) if tag_moves == TagMoves::Accept => reference.at_digest(&now),
                        _ => reference.at_digest(&locked.digest),
                    }
                }
                (None, None) => reference.clone(),
            };
            let installed = install(&registry, &pinned, &args.plugins, Some(name), trust, TagMoves::Accept).await?;
            Ok::<_, anyhow::Error>(installed)
        }
        .await;
        match outcome {
            Ok(installed) => {
                report(&installed, trust);
                lock.components.insert(
                    name.clone(),
                    Locked {
                        reference: reference.to_string(),
                        digest: installed.verified.manifest_digest.clone(),
                    },
                );
            }
            Err(error) => {
                failed += 1;
                say(format_args!("✗ {name}: {error:#}"));
            }
        }
    }
    lock.components
        .retain(|name, _| sources.components.iter().any(|(n, _)| n == name));
    if !args.locked && serde_json::to_string(&lock.components)? != before {
        lock.save(&lock_path)?;
        say(format_args!("wrote {}", lock_path.display()));
    }
    Ok(failed == 0)
}

fn report(installed: &Installed, trust: &Trust) {
    let verified = &installed.verified;
    let signer = match (&verified.signer, trust.policy()) {
        (Some(signer), _) => format!("signed by `{signer}`"),
        (None, Some(_)) => "not signed by a signer the trust policy names".to_string(),
        (None, None) => "signature not checked (no --trust)".to_string(),
    };
    let what = if installed.unchanged { "up to date" } else { "pulled" };
    say(format_args!(
        "✓ {}: {what} {} ({}), {signer} → {}",
        installed.name,
        verified.reference,
        verified.manifest_digest,
        installed.path.display()
    ));
}

pub async fn publish(args: &PublishArgs) -> Result<()> {
    let reference = Reference::parse(&args.reference)?;
    // Regular files only, never waiting on a FIFO, within what a pull takes.
    let component = bounded_file::read_named(&args.component, args.registry.max_size, "the component")?;
    let suggested = args
        .suggest_manifest
        .as_deref()
        .map(|path| bounded_file::read_text(path, MAX_SUGGESTED_MANIFEST_BYTES, "the suggested manifest"))
        .transpose()?;
    let registry = registry_for(&args.registry, &reference, true)?;
    let digest = warden_registry::publish::publish(&registry, &reference, &component, suggested.as_deref())
        .await
        .with_context(|| format!("cannot publish {} to {reference}", args.component.display()))?;
    say(format_args!(
        "published {} as {}@{digest}",
        args.component.display(),
        reference
    ));
    println!("{digest}");
    Ok(())
}

fn registry_for(args: &RegistryArgs, reference: &Reference, push: bool) -> Result<Registry> {
    let host = &reference.registry;
    let config = credentials::config_path(args.registry_config.as_deref());
    let credentials = credentials::for_host(host, config.as_deref(), args.registry_config.is_some())?;
    let insecure = args.insecure_registry.iter().any(|h| h == host);
    let limits = Limits {
        max_component: args.max_size,
        request_timeout: Duration::from_secs(args.timeout.max(1)),
    };
    Ok(Registry::new(host, insecure, credentials, limits, push))
}
