//! A registry, and whoever can push to it, trying what the first rounds of
//! tests did not: junk signatures, escapes in error bodies, answers just
//! inside each timeout, names already taken, oversized referrers, and
//! signatures made for another repository.

use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::Signature;
use p256::ecdsa::signature::Signer as _;
use serde_json::{Value, json};

use crate::fake::{Bench, digest_of, key, refs};

const REPO: &str = "tools/text";

/// A layer cosign would push for `digest` in `repo`, signed by key 1.
fn signed_layer(bench: &Bench, digest: &str) -> (Vec<u8>, String) {
    let payload = json!({
        "critical": {
            "identity": {"docker-reference": format!("{}/{REPO}", bench.registry.host())},
            "image": {"docker-manifest-digest": digest},
            "type": "cosign container image signature"
        },
        "optional": null
    })
    .to_string()
    .into_bytes();
    let signature: Signature = key(1).sign(&payload);
    (payload, BASE64.encode(signature.to_der().as_bytes()))
}

fn plugins(bench: &Bench) -> String {
    bench.plugins.path().to_str().unwrap().to_string()
}

#[tokio::test]
async fn junk_signatures_neither_grow_the_record_nor_brick_the_plugin() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", &format!("{REPO}:1.0")).await;
    let reference = bench.registry.reference(&format!("{REPO}:1.0"));
    // Whoever can push to the repository adds junk layers of 60 KiB beside
    // the real signature: kept, they would outgrow the 1 MiB record.
    // cosign appends: the release's signature comes first, what was pushed
    // since after it (16 layers are read).
    let mut layers = vec![signed_layer(&bench, &digest)];
    layers.extend((0..13u8).map(|i| (vec![b'a' + i; 60 * 1024], BASE64.encode([i; 70]))));
    bench.registry.push_signatures(REPO, &digest, layers);
    {
        // More junk that cannot fail the pull: a layer claiming 70 000
        // bytes, one whose blob is missing, 200 KB of unverified Rekor
        // entry riding on the real signature, and a referrer naming
        // another subject.
        let mut store = bench.registry.store.lock().unwrap();
        let tag = format!("{REPO}@{}.sig", digest.replacen(':', "-", 1));
        let mut sig: Value = serde_json::from_slice(&store.manifests[&tag]).unwrap();
        let layers = sig["layers"].as_array_mut().unwrap();
        layers[0]["annotations"]["dev.sigstore.cosign/bundle"] = "r".repeat(200_000).into();
        let mut big = layers[1].clone();
        big["size"] = 70_000.into();
        let mut missing = layers[1].clone();
        missing["digest"] = digest_of(b"nowhere").into();
        layers.insert(1, big);
        layers.insert(1, missing);
        store.manifests.insert(tag, sig.to_string().into_bytes());
        store.referrers_api = true;
        store.referrers.insert(
            digest.clone(),
            vec![json!({
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "size": 100,
                "digest": digest_of(b"elsewhere"),
                "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            })],
        );
    }
    // An earlier pull killed mid-download left its staging folder.
    let abandoned = bench.plugins.path().join(".text.pull-4000000");
    std::fs::create_dir(&abandoned).unwrap();
    std::fs::write(abandoned.join("text.wasm"), b"\0asm half").unwrap();
    let trust = bench.trust_args();
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("signed by `release key`"), "{stderr}");
    assert!(stderr.contains("could not be read and were skipped"), "{stderr}");
    assert!(!abandoned.exists());

    let record_path = bench.plugins.path().join("text.origin.json");
    let record = std::fs::read(&record_path).unwrap();
    assert!(record.len() < 8 * 1024, "the record is {} bytes", record.len());
    let value: Value = serde_json::from_slice(&record).unwrap();
    assert_eq!(value["signatures"].as_array().unwrap().len(), 1, "{value}");
    assert_eq!(value["signer"], "release key");

    // Every load accepts exactly what was written, and a second pull
    // finds it up to date.
    let folder = plugins(&bench);
    let mut check = vec!["check", "--plugins", &folder];
    check.extend(refs(&trust));
    let (ok, stdout, stderr) = bench.warden(&check, None).await;
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("signed by `release key`"), "{stdout}");
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(ok && stderr.contains("up to date"), "{stderr}");

    // A record that cannot be read (here 2 MiB of junk) is replaced only
    // when the operator says so, and then replaced whole.
    std::fs::write(&record_path, vec![b' '; 2 * 1024 * 1024]).unwrap();
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(!ok);
    assert!(stderr.contains("`warden pull --update` replaces both"), "{stderr}");
    assert_eq!(std::fs::metadata(&record_path).unwrap().len(), 2 * 1024 * 1024);
    let mut update = refs(&trust);
    update.push("--update");
    let (ok, stderr) = bench.pull(&reference, &update).await;
    assert!(ok, "{stderr}");
    assert!(std::fs::metadata(&record_path).unwrap().len() < 8 * 1024);
}

#[tokio::test]
async fn a_registrys_error_text_cannot_write_to_the_operators_terminal() {
    let bench = Bench::new().await;
    bench.publish("text", &format!("{REPO}:1.0")).await;
    let reference = bench.registry.reference(&format!("{REPO}:1.0"));
    let hostile =
        "busy\u{1b}]52;c;aGVsbG8=\u{7}\r\n✓ text: pulled oci://x, signed by `release key` → plugins/text.wasm\u{1b}[8m";
    bench.registry.store.lock().unwrap().error_body = Some(hostile.into());
    let sources = bench.file("sources.toml");
    std::fs::write(&sources, format!("[components]\ntext = \"{reference}\"\n")).unwrap();
    let folder = plugins(&bench);
    // One pull reports through the log; `--from` prints a ✗ line per component.
    let one = bench.pull(&reference, &[]).await;
    let (ok_from, _, stderr_from) = bench
        .warden(
            &["pull", "--from", sources.to_str().unwrap(), "--plugins", &folder],
            Some("config.json"),
        )
        .await;
    for (ok, stderr) in [one, (ok_from, stderr_from)] {
        assert!(!ok);
        assert!(!stderr.contains(['\u{1b}', '\r', '\u{7}']), "{stderr:?}");
        assert!(!stderr.lines().any(|line| line.starts_with('✓')), "{stderr}");
        // Shown, escaped (`\x1b` by the log's formatter, `\u{1b}` by Warden's escaper).
        assert!(stderr.contains("]52;c;aGVsbG8="), "{stderr}");
        assert!(stderr.contains("\\r\\n✓ text: pulled oci://x"), "{stderr}");
    }
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());
}

#[tokio::test]
async fn a_registry_answering_each_request_just_in_time_cannot_stretch_a_pull() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", &format!("{REPO}:1.0")).await;
    let reference = bench.registry.reference(&format!("{REPO}:1.0"));
    // 16 signature payloads, each answered 0.9 s later: with `--timeout 1`
    // every request is in time, and together they took a minute.
    let layers = (0..16u8)
        .map(|i| (vec![b'a' + i; 100], BASE64.encode([i; 70])))
        .collect();
    bench.registry.push_signatures(REPO, &digest, layers);
    bench.registry.store.lock().unwrap().delay = Some(Duration::from_millis(900));
    let started = Instant::now();
    let (ok, stderr) = bench.pull(&reference, &["--timeout", "1"]).await;
    let elapsed = started.elapsed();
    assert!(!ok);
    assert!(stderr.contains("within 10s (10 × --timeout"), "{stderr}");
    assert!(elapsed < Duration::from_secs(20), "{elapsed:?}");
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());
}

#[tokio::test]
async fn a_pull_never_takes_a_name_another_plugin_holds() {
    let bench = Bench::new().await;
    bench.publish("text", &format!("{REPO}:1.0")).await;
    let reference = bench.registry.reference(&format!("{REPO}:1.0"));
    let component = crate::support::guest("text");

    // A folder plugin `text/`.
    let folder = bench.plugins.path().join("text");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("plugin.toml"), "").unwrap();
    std::fs::copy(component, folder.join("plugin.wasm")).unwrap();
    let before = bench.folder();
    let (ok, stderr) = bench.pull(&reference, &[]).await;
    assert!(!ok);
    assert!(stderr.contains("is a folder plugin named `text`"), "{stderr}");
    assert_eq!(bench.folder(), before);
    std::fs::remove_dir_all(&folder).unwrap();

    // A plugin whose manifest names it `text`.
    std::fs::copy(component, bench.plugins.path().join("words.wasm")).unwrap();
    std::fs::write(bench.plugins.path().join("words.toml"), "[plugin]\nname = \"text\"\n").unwrap();
    let (ok, stderr) = bench.pull(&reference, &[]).await;
    assert!(!ok);
    assert!(stderr.contains("words.toml names its plugin `text`"), "{stderr}");
    assert_eq!(bench.folder(), ["words.toml", "words.wasm"]);

    // Under another name it is pulled beside them.
    let (ok, stderr) = bench.pull(&reference, &["--name", "text2"]).await;
    assert!(ok, "{stderr}");
}

#[tokio::test]
async fn a_referrer_is_read_only_to_its_bound_and_a_signature_only_for_its_repository() {
    let bench = Bench::new().await;
    let digest = bench.publish("text", &format!("{REPO}:1.0")).await;
    let reference = bench.registry.reference(&format!("{REPO}:1.0"));

    // A referrer the index says is 500 bytes, served as 100 KiB.
    let big = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/vnd.example.sbom",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "size": 2, "digest": digest_of(b"{}")},
        "layers": [],
        "annotations": {"padding": "x".repeat(100 * 1024)}
    })
    .to_string()
    .into_bytes();
    {
        let mut store = bench.registry.store.lock().unwrap();
        store.referrers_api = true;
        store.referrers.insert(
            digest.clone(),
            vec![json!({
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "size": 500,
                "digest": digest_of(&big),
                "artifactType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            })],
        );
        store.manifests.insert(format!("{REPO}@{}", digest_of(&big)), big);
    }
    // It is read no further than 64 KiB, then skipped like any referrer
    // that cannot be read: junk anyone could push does not fail the pull.
    let (ok, stderr) = bench.pull(&reference, &[]).await;
    assert!(ok, "{stderr}");
    assert!(stderr.contains("larger than 65536 bytes"), "{stderr}");
    assert!(stderr.contains("1 referrer(s) of"), "{stderr}");
    for file in ["text.wasm", "text.origin.json"] {
        std::fs::remove_file(bench.plugins.path().join(file)).unwrap();
    }
    bench.registry.store.lock().unwrap().referrers.clear();

    // The release key's signature of this digest, made for another
    // repository of the same registry.
    let elsewhere = format!("{}/tools/other", bench.registry.host());
    bench.registry.sign_as(REPO, &digest, &key(1), &digest, &elsewhere);
    let trust = bench.trust_args();
    let (ok, stderr) = bench.pull(&reference, &refs(&trust)).await;
    assert!(!ok);
    assert!(
        stderr.contains(&format!("the signature is for `{elsewhere}`, not for")),
        "{stderr}"
    );
    assert!(bench.folder().is_empty(), "{:?}", bench.folder());
}

#[tokio::test]
async fn a_sources_sync_writes_its_lock_past_a_fifo_and_never_reads_a_lock_as_sources() {
    let bench = Bench::new().await;
    bench.publish("text", &format!("{REPO}:1.0")).await;
    let reference = bench.registry.reference(&format!("{REPO}:1.0"));
    let sources = bench.file("sources.toml");
    std::fs::write(&sources, format!("[components]\ntext = \"{reference}\"\n")).unwrap();
    // A FIFO left where the lock is written first: never opened, replaced.
    let partial = bench.file("sources.lock.partial");
    let made = std::process::Command::new("mkfifo").arg(&partial).status().unwrap();
    assert!(made.success());
    let folder = plugins(&bench);
    let (ok, _, stderr) = bench
        .warden(
            &["pull", "--from", sources.to_str().unwrap(), "--plugins", &folder],
            Some("config.json"),
        )
        .await;
    assert!(ok, "{stderr}");
    let lock = std::fs::read_to_string(bench.file("sources.lock")).unwrap();
    assert!(lock.contains("[components.text]"), "{lock}");
    assert!(!partial.exists());

    // The lock named as the sources file is refused, not parsed (and its
    // error would have said to delete it).
    let lock_path = bench.file("sources.lock");
    let (ok, _, stderr) = bench
        .warden(
            &["pull", "--from", lock_path.to_str().unwrap(), "--plugins", &folder],
            Some("config.json"),
        )
        .await;
    assert!(!ok);
    assert!(stderr.contains("looks like a lock Warden writes"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&lock_path).unwrap(), lock);
}
