//! What `Trust::check` costs a load: the median of 200 checks of one pulled
//! component, with a keyed cosign signature and with a keyless Sigstore
//! bundle (the test PKI's, `tests/data/keyless`).
//!
//!   cargo run --release -p warden-origin --example trust_cost

// A measurement reads the files it is pointed at freely; the one opener
// (bounded_file) is for what Warden serves.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::time::{Duration, Instant};

use warden_origin::{OriginRecord, SignatureRecord, Trust, TrustPolicy};

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn measure(trust: &Trust, component: &Path, sha256: &str) -> Duration {
    let runs = (0..200)
        .map(|_| {
            let started = Instant::now();
            let verified = trust.check("empty", component, sha256).expect("verifies");
            assert!(verified.and_then(|v| v.signer).is_some());
            started.elapsed()
        })
        .collect();
    median(runs)
}

fn main() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/keyless");
    let dir = tempfile::tempdir().unwrap();
    let component = dir.path().join("empty.wasm");
    let wasm = std::fs::read(data.join("component.wasm")).unwrap();
    std::fs::write(&component, &wasm).unwrap();
    let sha256 = warden_origin::digest_of(&wasm)["sha256:".len()..].to_string();
    let manifest = std::fs::read(data.join("manifest.json")).unwrap();
    let repository = "registry.example/tools/empty";
    let write = |signatures: Vec<SignatureRecord>, policy: &str| {
        let record = OriginRecord::new(
            format!("oci://{repository}:1.0"),
            repository.into(),
            &manifest,
            signatures,
            0,
        );
        std::fs::write(OriginRecord::path_for(&component), record.to_json()).unwrap();
        let path = dir.path().join("trust.toml");
        std::fs::write(&path, policy).unwrap();
        Trust::new(Some(TrustPolicy::load(&path).unwrap()), true).unwrap()
    };

    let bundle = std::fs::read_to_string(data.join("bundle.sigstore.json")).unwrap();
    let keyless = write(
        vec![SignatureRecord::SigstoreBundle { bundle }],
        &format!(
            "trusted_root = \"{}\"\n[[repository]]\nmatch = \"registry.example/tools/*\"\n[[repository.signer]]\n\
             name = \"acme CI\"\nissuer = \"https://token.actions.githubusercontent.com\"\n\
             subject = \"https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v*\"\n",
            data.join("trusted_root.json").display()
        ),
    );
    let keyless_cost = measure(&keyless, &component, &sha256);

    // A keyed signature, made here the way cosign makes one.
    use base64::Engine as _;
    use p256::ecdsa::signature::Signer as _;
    use p256::pkcs8::EncodePublicKey as _;
    let key = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
    std::fs::write(
        dir.path().join("release.pub"),
        key.verifying_key().to_public_key_pem(Default::default()).unwrap(),
    )
    .unwrap();
    let payload = warden_origin::cosign::payload(repository, &warden_origin::digest_of(&manifest));
    let signature: p256::ecdsa::Signature = key.sign(&payload);
    let keyed = write(
        vec![SignatureRecord::CosignSimpleSigning {
            payload: base64::engine::general_purpose::STANDARD.encode(&payload),
            signature: base64::engine::general_purpose::STANDARD.encode(signature.to_der().as_bytes()),
            certificate: None,
            rekor_bundle: None,
        }],
        "[[repository]]\nmatch = \"registry.example/tools/*\"\n[[repository.signer]]\nname = \"release\"\nkey = \"release.pub\"\n",
    );
    let keyed_cost = measure(&keyed, &component, &sha256);
    println!("Trust::check, median of 200: keyed cosign {keyed_cost:?}, keyless Sigstore bundle {keyless_cost:?}");
}
