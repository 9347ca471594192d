//! `warden pull` and `warden publish` against a registry of the test's own:
//! the distribution API over loopback with the Bearer token flow, which
//! turns hostile on demand (lying digests, swapped or oversized blobs,
//! trickling answers, redirects to plain HTTP). Every refusal must leave
//! the plugins folder as it was. The real CNCF registry and an independent
//! publisher are exercised by `tests/interop/registry.sh`.

#![allow(clippy::disallowed_methods)] // tests read fixtures freely; bounded_file is for what Warden serves

#[path = "../support/mod.rs"]
mod support;

mod fake;
mod hostile;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::{Era, PluginDir};

use fake::{Bench, Hostile, digest_of, key, refs};

#[tokio::test]
async fn a_published_component_is_pulled_with_credentials_verified_and_served() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", "tools/text:1.0").await;
    let reference = bench.registry.reference("tools/text:1.0");

    // No credentials, then wrong ones: refused with a message that says what to do.
    let plugins = bench.plugins.path().to_str().unwrap().to_string();
    let (ok, _, stderr) = bench.warden(&["pull", &reference, "--plugins", &plugins], None).await;
    assert!(!ok);
    assert!(
        stderr.contains("needs credentials") && stderr.contains("HTTP 401"),
        "{stderr}"
    );
    assert!(stderr.contains("config.json"), "{stderr}");
    let (ok, _, stderr) = bench
        .warden(&["pull", &reference, "--plugins", &plugins], Some("wrong.json"))
        .await;
    assert!(!ok);
    assert!(stderr.contains("refused the credentials"), "{stderr}");
    assert!(!stderr.contains("guess"), "a password was printed: {stderr}");
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());

    // Signed by the trusted key: pulled, and the folder serves it.
    bench.registry.sign("tools/text", &digest, &key(1), &digest);
    let trust = bench.trust_args();
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("signed by `release key`"), "{stderr}");
    assert_eq!(bench.folder(), ["text.origin.json", "text.wasm"]);
    let record: Value =
        serde_json::from_slice(&std::fs::read(bench.plugins.path().join("text.origin.json")).unwrap()).unwrap();
    assert_eq!(record["manifest_digest"], digest.as_str());
    assert_eq!(record["reference"], reference.as_str());
    assert_eq!(record["signer"], "release key");
    assert_eq!(
        std::fs::read(bench.plugins.path().join("text.wasm")).unwrap(),
        std::fs::read(support::guest("text")).unwrap()
    );

    // Pulling again changes nothing.
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(ok && stderr.contains("up to date"), "{stderr}");

    // `warden check` shows where it came from and who signed it.
    let mut check = vec!["check", "--plugins", &plugins];
    check.extend(refs(&trust));
    let (ok, stdout, stderr) = bench.warden(&check, None).await;
    assert!(ok, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("origin       {reference} ({digest}), signed by `release key`")),
        "{stdout}"
    );

    let audit = bench.file("audit.jsonl");
    let mut serve_args = refs(&trust);
    serve_args.extend(["--no-cache", "--audit-log", audit.to_str().unwrap()]);
    let server = support::serve(bench.plugins.path(), Era::Stateless, &serve_args).await;
    let result = server
        .call("text_stats", json!({"text": "pulled from a registry"}))
        .await;
    assert_eq!(result.structured_content.unwrap()["words"], 4);
    // The audit record says where the code that answered came from.
    let log = std::fs::read_to_string(&audit).unwrap();
    let record: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        record["source"],
        json!({"reference": reference, "digest": digest, "signer": "release key"}),
        "{record}"
    );

    // Replaced on disk after the pull: the hot reload refuses it (the
    // verified version keeps serving) and so does the next check.
    std::fs::write(
        bench.plugins.path().join("text.wasm"),
        std::fs::read(support::guest("clock")).unwrap(),
    )
    .unwrap();
    server.wait_for_log("is not what was pulled").await;
    let result = server
        .call("text_stats", json!({"text": "still the verified one"}))
        .await;
    assert_eq!(result.structured_content.unwrap()["words"], 4);
    server.stop().await;
    let (ok, stdout, _) = bench.warden(&check, None).await;
    assert!(!ok);
    assert!(
        stdout.contains("text.wasm is refused: it is not what was pulled"),
        "{stdout}"
    );
}

#[tokio::test]
async fn untrusted_or_missing_signatures_are_refused_and_nothing_is_written() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", "tools/text:1.0").await;
    let reference = bench.registry.reference("tools/text:1.0");
    let trust = bench.trust_args();

    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(!ok);
    assert!(
        stderr.contains("is unsigned, and --require-signature expects a signature by `release key`"),
        "{stderr}"
    );
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());

    // Signed, but by a key the policy does not name.
    bench.registry.sign("tools/text", &digest, &key(2), &digest);
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(!ok);
    assert!(
        stderr.contains("no signature by a trusted signer (`release key`"),
        "{stderr}"
    );
    assert!(stderr.contains("does not verify with this key"), "{stderr}");
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());

    // The trusted key, but its payload vouches for another manifest.
    let other = bench.publish("clock", "tools/clock:1.0").await;
    bench.registry.sign("tools/text", &digest, &key(1), &other);
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(!ok);
    assert!(stderr.contains("not for this component's manifest"), "{stderr}");

    // A repository the policy does not cover, under --require-signature.
    let elsewhere = bench.registry.reference("elsewhere/clock:1.0");
    bench.publish("clock", "elsewhere/clock:1.0").await;
    let (ok, stderr) = bench.pull(&elsewhere, &refs(&trust)).await;
    assert!(!ok);
    assert!(stderr.contains("trusts no signer"), "{stderr}");
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());

    // A hand-placed component is not served under --require-signature.
    std::fs::copy(support::guest("clock"), bench.plugins.path().join("clock.wasm")).unwrap();
    let plugins = bench.plugins.path().to_str().unwrap().to_string();
    let mut check = vec!["check", "--plugins", &plugins];
    check.extend(refs(&trust));
    let (ok, stdout, _) = bench.warden(&check, None).await;
    assert!(!ok);
    assert!(stdout.contains("was not pulled from a registry"), "{stdout}");
}

#[tokio::test]
async fn a_hostile_registry_is_refused_and_the_folder_is_left_as_it_was() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", "tools/text:1.0").await;
    let by_tag = bench.registry.reference("tools/text:1.0");
    let by_digest = bench.registry.reference(&format!("tools/text@{digest}"));
    for (hostile, reference, extra, expect) in [
        (Hostile::ManifestDigestLie, &by_tag, &[][..], "but its bytes hash to"),
        (Hostile::ManifestSwap, &by_digest, &[][..], "not the sha256:"),
        (Hostile::HugeManifest, &by_tag, &[][..], "larger than 4194304 bytes"),
        (Hostile::BlobSwap, &by_tag, &[][..], "hashing to"),
        (Hostile::BlobLonger, &by_tag, &[][..], "larger than the"),
        (
            Hostile::Trickle,
            &by_tag,
            &["--timeout", "2"][..],
            "did not arrive within",
        ),
        (Hostile::RedirectToPlainHttp, &by_tag, &[][..], "plain-HTTP"),
        (
            Hostile::Honest,
            &by_tag,
            &["--max-size", "1000"][..],
            "the most Warden pulls is 1000",
        ),
    ] {
        bench.registry.turn(hostile);
        let started = std::time::Instant::now();
        let (ok, stderr) = bench.pull(reference, extra).await;
        assert!(!ok, "{hostile:?} was accepted");
        assert!(stderr.contains(expect), "{hostile:?}: {stderr}");
        assert!(bench.folder().is_empty(), "{hostile:?} left {:?}", bench.folder());
        if hostile == Hostile::Trickle {
            // --timeout plus the component's size at 1 MiB/s: a few seconds.
            assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
        }
    }
}

#[tokio::test]
async fn a_moved_tag_is_refused_until_the_operator_accepts_it_and_sources_sync_idempotently() {
    let bench = Bench::new().await;
    let first = bench.publish("text", "tools/text:stable").await;
    let reference = bench.registry.reference("tools/text:stable");
    let (ok, stderr) = bench.pull(&reference, &[]).await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("signature not checked (no --trust)"), "{stderr}");

    // The tag moves to other bytes: the next pull says so and changes nothing.
    let second = bench.publish("clock", "tools/text:stable").await;
    assert_ne!(first, second);
    let before = std::fs::read(bench.plugins.path().join("text.wasm")).unwrap();
    let (ok, stderr) = bench.pull(&reference, &[]).await;
    assert!(!ok);
    assert!(
        stderr.contains(&format!("was {first} when")) && stderr.contains(&second),
        "{stderr}"
    );
    assert_eq!(std::fs::read(bench.plugins.path().join("text.wasm")).unwrap(), before);
    let (ok, stderr) = bench.pull(&reference, &["--update"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(
        std::fs::read(bench.plugins.path().join("text.wasm")).unwrap(),
        std::fs::read(support::guest("clock")).unwrap()
    );

    // Another repository under the same name is not pulled over it unasked.
    let words = bench.registry.reference("tools/words:1");
    bench.publish("text", "tools/words:1").await;
    let (ok, stderr) = bench.pull(&words, &["--name", "text"]).await;
    assert!(!ok);
    assert!(
        stderr.contains("was pulled from") && stderr.contains("needs --update"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(bench.plugins.path().join("text.wasm")).unwrap(),
        std::fs::read(support::guest("clock")).unwrap()
    );

    // A sources file: pulled, locked; again: up to date, lock unchanged.
    let fleet = PluginDir::new();
    let sources = bench.file("sources.toml");
    std::fs::write(
        &sources,
        format!(
            "[components]\nwords = \"{}\"\npinned = \"{}\"\n",
            bench.registry.reference("tools/words:1"),
            bench.registry.reference(&format!("tools/text@{first}"))
        ),
    )
    .unwrap();
    let words = bench.publish("text", "tools/words:1").await;
    let from = |extra: &'static [&'static str]| {
        let sources = sources.to_str().unwrap().to_string();
        let fleet = fleet.path().to_str().unwrap().to_string();
        let bench = &bench;
        async move {
            let mut args = vec!["pull".to_string(), "--from".into(), sources, "--plugins".into(), fleet];
            args.extend(extra.iter().map(|s| s.to_string()));
            bench.warden(&refs(&args), Some("config.json")).await
        }
    };
    let (ok, _, stderr) = from(&[]).await;
    assert!(ok, "{stderr}");
    let lock = std::fs::read_to_string(bench.file("sources.lock")).unwrap();
    assert!(lock.contains(&words) && lock.contains(&first), "{lock}");
    let mut names: Vec<String> = std::fs::read_dir(fleet.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["pinned.origin.json", "pinned.wasm", "words.origin.json", "words.wasm"]
    );
    let (ok, _, stderr) = from(&[]).await;
    assert!(ok, "{stderr}");
    assert_eq!(stderr.matches("up to date").count(), 2, "{stderr}");
    assert!(!stderr.contains("wrote"), "{stderr}");

    // The locked tag moves: refused (and the rest still synced), until --update.
    bench.publish("clock", "tools/words:1").await;
    let (ok, _, stderr) = from(&[]).await;
    assert!(!ok);
    assert!(stderr.contains("the tag of") && stderr.contains("--update"), "{stderr}");
    assert_eq!(std::fs::read_to_string(bench.file("sources.lock")).unwrap(), lock);
    // --locked pulls what the lock says, without asking where the tags
    // point now, and never writes the lock; a source it lacks is refused.
    let (ok, _, stderr) = from(&["--locked"]).await;
    assert!(ok, "{stderr}");
    assert_eq!(stderr.matches("up to date").count(), 2, "{stderr}");
    let unlocked = bench.file("unlocked.toml");
    std::fs::write(
        &unlocked,
        format!(
            "[components]\nwords = \"{}\"\n",
            bench.registry.reference("tools/words:1")
        ),
    )
    .unwrap();
    let fleet_dir = fleet.path().to_str().unwrap().to_string();
    let (ok, _, stderr) = bench
        .warden(
            &[
                "pull",
                "--from",
                unlocked.to_str().unwrap(),
                "--locked",
                "--plugins",
                &fleet_dir,
            ],
            Some("config.json"),
        )
        .await;
    assert!(!ok);
    assert!(stderr.contains("--locked pulls only locked digests"), "{stderr}");
    assert!(!bench.file("unlocked.lock").exists());
    let (ok, _, stderr) = from(&["--update"]).await;
    assert!(ok, "{stderr}");
    assert_ne!(std::fs::read_to_string(bench.file("sources.lock")).unwrap(), lock);
}

#[tokio::test]
async fn an_authors_suggested_manifest_is_shown_beside_the_operators_and_never_applied() {
    let bench = Bench::new().await;
    let suggested = bench.file("suggested.toml");
    std::fs::write(
        &suggested,
        "[grants]\nnetwork = [\"https://suggested.example\"]\n# \x1b[31mred\n",
    )
    .unwrap();
    let component = support::guest("text").to_str().unwrap().to_string();
    let reference = bench.registry.reference("tools/text:1.0");
    let (ok, _, stderr) = bench
        .warden(
            &[
                "publish",
                &component,
                &reference,
                "--suggest-manifest",
                suggested.to_str().unwrap(),
            ],
            Some("config.json"),
        )
        .await;
    assert!(ok, "{stderr}");
    let (ok, stderr) = bench.pull(&reference, &[]).await;
    assert!(ok, "{stderr}");

    let pulled = bench.plugins.path().join("text.wasm");
    let (ok, stdout, stderr) = bench.warden(&["inspect", pulled.to_str().unwrap()], None).await;
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains(&format!(
            "suggested manifest (the author's, from {reference}; never applied"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("    network = [\"https://suggested.example\"]"),
        "{stdout}"
    );
    assert!(
        !stdout.contains('\x1b') && stdout.contains("\\u{1b}[31mred"),
        "{stdout}"
    );
    // What the plugin is granted is the operator's (nothing), not the author's.
    let before_suggestion = stdout.split("suggested manifest").next().unwrap();
    assert!(!before_suggestion.contains("suggested.example"), "{stdout}");
}

#[tokio::test]
async fn sigstore_bundles_are_found_through_referrers_or_their_tag_and_held_to_the_keyless_identity() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", "tools/text:1.0").await;
    let reference = bench.registry.reference("tools/text:1.0");
    // A real keyless bundle from Sigstore's own output — of a blob, by its
    // signer: found, verified against the shipped public-good root, and not
    // taken for a signature of this component.
    let bundle = include_str!("../../crates/origin/testdata/sigstore/cosign-v3-blob.sigstore.json");
    std::fs::write(
        bench.file("keyless.toml"),
        format!(
            "[[repository]]\nmatch = \"{}/tools/*\"\n[[repository.signer]]\nname = \"their CI\"\n\
             issuer = \"https://github.com/login/oauth\"\nsubject = \"w.vollprecht@gmail.com\"\n",
            bench.registry.host()
        ),
    )
    .unwrap();
    let policy = bench.file("keyless.toml").to_str().unwrap().to_string();
    for referrers_api in [false, true] {
        bench
            .registry
            .attach_bundle("tools/text", &digest, bundle, referrers_api);
        let (ok, stderr) = bench
            .pull(&reference, &["--trust", &policy, "--require-signature"])
            .await;
        assert!(!ok, "accepted a blob's bundle as the component's signature");
        assert!(
            stderr.contains("no signature by a trusted signer (`their CI`"),
            "{stderr}"
        );
        assert!(stderr.contains("signs a blob, not an image"), "{stderr}");
        assert!(bench.folder().is_empty(), "{:?}", bench.folder());
    }
}

#[tokio::test]
async fn a_keyless_signature_of_the_component_is_verified_offline_against_the_policys_trusted_root() {
    let bench = Bench::new().await;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/keyless");
    let read = |name: &str| std::fs::read(data.join(name)).unwrap();
    let manifest = read("manifest.json");
    let digest = digest_of(&manifest);
    assert_eq!(
        digest,
        "sha256:083c207332f5277e9977c5d28566d438bd584bc179a54418497b546556bb9317"
    );
    {
        let mut store = bench.registry.store.lock().unwrap();
        for blob in [read("config.json"), read("component.wasm")] {
            store.blobs.insert(digest_of(&blob), blob);
        }
        store.manifests.insert("tools/empty@1.0".into(), manifest.clone());
        store.manifests.insert(format!("tools/empty@{digest}"), manifest);
    }
    let reference = bench.registry.reference("tools/empty:1.0");
    let policy = |name: &str, issuer: &str, subject: &str, root: &str| {
        let path = bench.file(name);
        std::fs::write(
            &path,
            format!(
                "trusted_root = \"{}\"\n[[repository]]\nmatch = \"{}/tools/*\"\n[[repository.signer]]\n\
                 name = \"acme CI\"\nissuer = \"{issuer}\"\nsubject = \"{subject}\"\n",
                data.join(root).display(),
                bench.registry.host()
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    const ACTIONS: &str = "https://token.actions.githubusercontent.com";
    const RELEASES: &str = "https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*";
    let good = policy("good.toml", ACTIONS, RELEASES, "trusted_root.json");

    // Another digest's bundle by the same signer is no signature of this one.
    let other = String::from_utf8(read("other-digest.sigstore.json")).unwrap();
    bench.registry.attach_bundle("tools/empty", &digest, &other, false);
    let (ok, stderr) = bench.pull(&reference, &["--trust", &good, "--require-signature"]).await;
    assert!(!ok);
    assert!(stderr.contains("not this component's manifest"), "{stderr}");
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());

    let bundle = String::from_utf8(read("bundle.sigstore.json")).unwrap();
    bench.registry.attach_bundle("tools/empty", &digest, &bundle, true);
    for (name, issuer, subject, root, expect) in [
        (
            "subject.toml",
            ACTIONS,
            "https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v2*",
            "trusted_root.json",
            "signed by `https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v1.0.0`, not",
        ),
        (
            "issuer.toml",
            "https://accounts.google.com",
            RELEASES,
            "trusted_root.json",
            "issuer",
        ),
        (
            "root.toml",
            ACTIONS,
            RELEASES,
            "other_trusted_root.json",
            "certificate chain",
        ),
    ] {
        let policy = policy(name, issuer, subject, root);
        let (ok, stderr) = bench
            .pull(&reference, &["--trust", &policy, "--require-signature"])
            .await;
        assert!(!ok, "{name} accepted");
        assert!(stderr.contains(expect), "{name}: {stderr}");
        assert!(bench.folder().is_empty(), "{name}: {:?}", bench.folder());
    }

    let (ok, stderr) = bench.pull(&reference, &["--trust", &good, "--require-signature"]).await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("signed by `acme CI`"), "{stderr}");
    let record: Value =
        serde_json::from_slice(&std::fs::read(bench.plugins.path().join("empty.origin.json")).unwrap()).unwrap();
    assert_eq!(record["signer"], "acme CI");
    // Only the signature that verified is kept.
    assert_eq!(record["signatures"].as_array().unwrap().len(), 1, "{record}");
    assert_eq!(record["signatures"][0]["format"], "sigstore-bundle", "{record}");
}

#[tokio::test]
async fn a_cosign_2_keyless_sig_is_verified_like_a_bundle() {
    let bench = Bench::new().await;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/keyless");
    let read = |name: &str| std::fs::read(data.join(name)).unwrap();
    let manifest = read("manifest.json");
    let digest = digest_of(&manifest);
    // cosign 2's keyless `.sig`: the payload as the layer, the signature,
    // Fulcio certificate, chain and Rekor entry in its annotations.
    let annotations: Value = serde_json::from_slice(&read("legacy-annotations.json")).unwrap();
    let push_sig = |payload: Vec<u8>| {
        let config = b"{}".to_vec();
        let sig = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": 2, "digest": digest_of(&config)},
            "layers": [{
                "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                "size": payload.len(),
                "digest": digest_of(&payload),
                "annotations": annotations,
            }]
        })
        .to_string()
        .into_bytes();
        let mut store = bench.registry.store.lock().unwrap();
        for blob in [read("config.json"), read("component.wasm"), config, payload] {
            store.blobs.insert(digest_of(&blob), blob);
        }
        store.manifests.insert("tools/empty@1.0".into(), manifest.clone());
        store
            .manifests
            .insert(format!("tools/empty@{digest}"), manifest.clone());
        store
            .manifests
            .insert(format!("tools/empty@{}.sig", digest.replacen(':', "-", 1)), sig);
    };
    let reference = bench.registry.reference("tools/empty:1.0");
    let policy_for = |subject: &str, mirror: bool| {
        let path = bench.file("legacy.toml");
        std::fs::write(
            &path,
            format!(
                "trusted_root = \"{}\"\n[[repository]]\nmatch = \"{}/tools/*\"\n{}[[repository.signer]]\n\
                 name = \"acme CI\"\nissuer = \"https://token.actions.githubusercontent.com\"\nsubject = \"{subject}\"\n",
                data.join("trusted_root.json").display(),
                bench.registry.host(),
                // The signature names the repository it was made for:
                // served from this registry, it is a mirror's.
                if mirror { "signed_reference = \"registry.example/tools/*\"\n" } else { "" }
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    let policy = |subject: &str| policy_for(subject, true);
    let releases = policy("https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*");

    // The payload changed by one byte: the signature no longer covers it.
    let mut changed = read("legacy-payload.json");
    changed[10] ^= 1;
    push_sig(changed);
    let (ok, stderr) = bench
        .pull(&reference, &["--trust", &releases, "--require-signature"])
        .await;
    assert!(!ok);
    assert!(
        stderr.contains("no signature by a trusted signer (`acme CI`"),
        "{stderr}"
    );
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());

    push_sig(read("legacy-payload.json"));
    let other = policy("https://github.com/acme/other/**");
    let (ok, stderr) = bench
        .pull(&reference, &["--trust", &other, "--require-signature"])
        .await;
    assert!(!ok);
    assert!(stderr.contains("signed by `https://github.com/acme/tools/"), "{stderr}");
    let releases = policy("https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*");
    let (ok, stderr) = bench
        .pull(&reference, &["--trust", &releases, "--require-signature"])
        .await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("signed by `acme CI`"), "{stderr}");

    // Without `signed_reference`, a signature made for another repository
    // is not this one's, as cosign decides by default.
    std::fs::remove_file(bench.plugins.path().join("empty.wasm")).unwrap();
    std::fs::remove_file(bench.plugins.path().join("empty.origin.json")).unwrap();
    let strict = policy_for(
        "https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*",
        false,
    );
    let (ok, stderr) = bench
        .pull(&reference, &["--trust", &strict, "--require-signature"])
        .await;
    assert!(!ok);
    assert!(
        stderr.contains("the signature is for `registry.example/tools/empty`, not for"),
        "{stderr}"
    );
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());
}
