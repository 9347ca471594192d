//! The test's own registry: the distribution API over loopback with the
//! Bearer token flow, which turns hostile on demand.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use p256::ecdsa::signature::Signer as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::EncodePublicKey as _;
use serde_json::{Value, json};
use sha2::Digest as _;

use crate::support::{self, PluginDir};

pub const USER: &str = "alice";
pub const PASSWORD: &str = "s3cret";
pub const TOKEN: &str = "t0ken-for-alice";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Hostile {
    Honest,
    /// The manifest's `Docker-Content-Digest` is not its bytes' digest.
    ManifestDigestLie,
    /// Asked for a manifest by digest, serves other bytes.
    ManifestSwap,
    /// A manifest far larger than any real one.
    HugeManifest,
    /// The component blob's bytes do not hash to its digest.
    BlobSwap,
    /// The component blob is longer than its descriptor says.
    BlobLonger,
    /// The component blob arrives a byte at a time, forever.
    Trickle,
    /// The component blob redirects to plain HTTP on another host.
    RedirectToPlainHttp,
}

#[derive(Default)]
pub struct Store {
    pub blobs: HashMap<String, Vec<u8>>,
    /// `repo@tag` and `repo@digest` → manifest bytes.
    pub manifests: HashMap<String, Vec<u8>>,
    pub hostile: Option<Hostile>,
    pub auth: bool,
    pub uploads: usize,
    /// Subject digest → referrer descriptors, served by the OCI 1.1
    /// referrers API when `referrers_api` (else through the tag fallback).
    pub referrers: HashMap<String, Vec<Value>>,
    pub referrers_api: bool,
    /// Every manifest request answered `500` with this body.
    pub error_body: Option<String>,
    /// Every answer but the token's held back this long.
    pub delay: Option<Duration>,
}

pub type Shared = Arc<Mutex<Store>>;

pub struct Registry {
    pub port: u16,
    pub store: Shared,
}

impl Registry {
    pub async fn start(auth: bool) -> Self {
        let store: Shared = Arc::new(Mutex::new(Store {
            auth,
            ..Store::default()
        }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = axum::Router::new().fallback(handle).with_state((store.clone(), port));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Registry { port, store }
    }

    pub fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn reference(&self, repo_tag: &str) -> String {
        format!("oci://{}/{repo_tag}", self.host())
    }

    pub fn turn(&self, hostile: Hostile) {
        self.store.lock().unwrap().hostile = Some(hostile);
    }

    /// Pushes a cosign keyed signature of `digest` (a manifest digest) in
    /// cosign's own format: a `sha256-<hex>.sig` tag whose layer is the
    /// simple-signing payload, signed in the layer's annotation.
    pub fn sign(&self, repo: &str, digest: &str, key: &SigningKey, signed_digest: &str) {
        self.sign_as(repo, digest, key, signed_digest, &format!("{}/{repo}", self.host()));
    }

    /// `sign`, the payload naming `docker_reference` as the repository.
    pub fn sign_as(&self, repo: &str, digest: &str, key: &SigningKey, signed_digest: &str, docker_reference: &str) {
        let payload = json!({
            "critical": {
                "identity": {"docker-reference": docker_reference},
                "image": {"docker-manifest-digest": signed_digest},
                "type": "cosign container image signature"
            },
            "optional": null
        })
        .to_string()
        .into_bytes();
        let signature: Signature = key.sign(&payload);
        self.push_signatures(
            repo,
            digest,
            vec![(payload, BASE64.encode(signature.to_der().as_bytes()))],
        );
    }

    /// The `sha256-<hex>.sig` tag of `digest` with these layers: each a
    /// payload and its base64 signature, in cosign's format.
    pub fn push_signatures(&self, repo: &str, digest: &str, layers: Vec<(Vec<u8>, String)>) {
        let config = br#"{"architecture":"","config":{},"created":"0001-01-01T00:00:00Z","history":[{"created":"0001-01-01T00:00:00Z"}],"os":"","rootfs":{"type":"layers","diff_ids":[]}}"#.to_vec();
        let descriptors: Vec<Value> = layers
            .iter()
            .map(|(payload, signature)| {
                json!({
                    "mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                    "size": payload.len(),
                    "digest": digest_of(payload),
                    "annotations": {"dev.cosignproject.cosign/signature": signature}
                })
            })
            .collect();
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "size": config.len(), "digest": digest_of(&config)},
            "layers": descriptors,
        })
        .to_string()
        .into_bytes();
        let mut store = self.store.lock().unwrap();
        store.blobs.insert(digest_of(&config), config);
        for (payload, _) in layers {
            store.blobs.insert(digest_of(&payload), payload);
        }
        let tag = format!("{}.sig", digest.replacen(':', "-", 1));
        store
            .manifests
            .insert(format!("{repo}@{}", digest_of(&manifest)), manifest.clone());
        store.manifests.insert(format!("{repo}@{tag}"), manifest);
    }
}

impl Registry {
    /// Attaches a Sigstore bundle to the manifest `digest` as cosign 3 does:
    /// an artifact manifest (artifactType the bundle's media type, the empty
    /// config, one bundle layer, `subject` the signed manifest), listed by
    /// the referrers API — or, without it, by the `sha256-<hex>` tag's index.
    pub fn attach_bundle(&self, repo: &str, digest: &str, bundle: &str, referrers_api: bool) {
        const BUNDLE: &str = "application/vnd.dev.sigstore.bundle.v0.3+json";
        let mut store = self.store.lock().unwrap();
        let subject = store.manifests[&format!("{repo}@{digest}")].clone();
        let empty = b"{}".to_vec();
        let manifest = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "artifactType": BUNDLE,
            "config": {"mediaType": "application/vnd.oci.empty.v1+json", "size": 2, "digest": digest_of(&empty)},
            "layers": [{"mediaType": BUNDLE, "size": bundle.len(), "digest": digest_of(bundle.as_bytes())}],
            "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json", "size": subject.len(), "digest": digest},
            "annotations": {"dev.sigstore.bundle.content": "dsse-envelope"}
        })
        .to_string()
        .into_bytes();
        let entry = json!({
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "size": manifest.len(),
            "digest": digest_of(&manifest),
            "artifactType": BUNDLE,
        });
        store.blobs.insert(digest_of(&empty), empty);
        store
            .blobs
            .insert(digest_of(bundle.as_bytes()), bundle.as_bytes().to_vec());
        store
            .manifests
            .insert(format!("{repo}@{}", digest_of(&manifest)), manifest);
        store.referrers.entry(digest.to_string()).or_default().push(entry);
        store.referrers_api = referrers_api;
        let index = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": store.referrers[digest].clone(),
        })
        .to_string()
        .into_bytes();
        store
            .manifests
            .insert(format!("{repo}@{}", digest.replacen(':', "-", 1)), index);
    }
}

pub fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", hex(&sha2::Sha256::digest(bytes)))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub async fn handle(
    State((store, port)): State<(Shared, u16)>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let (delay, error_body) = {
        let store = store.lock().unwrap();
        (store.delay, store.error_body.clone())
    };
    if let Some(delay) = delay
        && path != "/token"
    {
        tokio::time::sleep(delay).await;
    }
    if let Some(body) = error_body
        && path.contains("/manifests/")
    {
        return (StatusCode::INTERNAL_SERVER_ERROR, body).into_response();
    }
    let authorization = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if path == "/token" {
        let expected = format!("Basic {}", BASE64.encode(format!("{USER}:{PASSWORD}")));
        if authorization != expected {
            return (StatusCode::UNAUTHORIZED, "bad credentials").into_response();
        }
        return (
            [(header::CONTENT_TYPE, "application/json")],
            json!({"token": TOKEN}).to_string(),
        )
            .into_response();
    }
    let Some(rest) = path.strip_prefix("/v2/") else {
        return StatusCode::NOT_FOUND.into_response();
    };
    if let Some((_, digest)) = rest.split_once("/referrers/") {
        let store = store.lock().unwrap();
        if !store.referrers_api {
            return StatusCode::NOT_FOUND.into_response();
        }
        let index = json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": store.referrers.get(digest).cloned().unwrap_or_default(),
        });
        return (
            [(header::CONTENT_TYPE, "application/vnd.oci.image.index.v1+json")],
            index.to_string(),
        )
            .into_response();
    }
    let (auth, hostile) = {
        let store = store.lock().unwrap();
        (store.auth, store.hostile.unwrap_or(Hostile::Honest))
    };
    if auth && authorization != format!("Bearer {TOKEN}") {
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header(
                header::WWW_AUTHENTICATE,
                format!(r#"Bearer realm="http://127.0.0.1:{port}/token",service="test-registry""#),
            )
            .body(Body::from("{\"errors\":[{\"code\":\"UNAUTHORIZED\"}]}"))
            .unwrap();
    }
    if let Some((repo, reference)) = rest.split_once("/manifests/") {
        let key = format!("{repo}@{reference}");
        if method == Method::PUT {
            let digest = digest_of(&body);
            let mut store = store.lock().unwrap();
            store.manifests.insert(key, body.to_vec());
            store.manifests.insert(format!("{repo}@{digest}"), body.to_vec());
            return Response::builder()
                .status(StatusCode::CREATED)
                .header("docker-content-digest", digest)
                .body(Body::empty())
                .unwrap();
        }
        let Some(mut bytes) = store.lock().unwrap().manifests.get(&key).cloned() else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let is_signature = reference.ends_with(".sig") || reference.starts_with("sha256-");
        let mut claimed = digest_of(&bytes);
        match hostile {
            Hostile::ManifestDigestLie if !is_signature => claimed = digest_of(b"something else"),
            Hostile::ManifestSwap if reference.starts_with("sha256:") => {
                let mut manifest: Value = serde_json::from_slice(&bytes).unwrap();
                manifest["annotations"] = json!({"swapped": "yes"});
                bytes = manifest.to_string().into_bytes();
            }
            Hostile::HugeManifest if !is_signature => bytes = vec![b' '; 5 * 1024 * 1024],
            _ => {}
        }
        return Response::builder()
            .header(header::CONTENT_TYPE, "application/vnd.oci.image.manifest.v1+json")
            .header("docker-content-digest", claimed)
            .body(Body::from(bytes))
            .unwrap();
    }
    if let Some((repo, upload)) = rest.split_once("/blobs/uploads/") {
        if method == Method::POST {
            let mut store = store.lock().unwrap();
            store.uploads += 1;
            return Response::builder()
                .status(StatusCode::ACCEPTED)
                .header(header::LOCATION, format!("/v2/{repo}/blobs/uploads/{}", store.uploads))
                .body(Body::empty())
                .unwrap();
        }
        let _ = upload;
        let digest = uri
            .query()
            .and_then(|q| q.split('&').find_map(|p| p.strip_prefix("digest=")))
            .map(|d| d.replace("%3A", ":"))
            .unwrap_or_default();
        if digest != digest_of(&body) {
            return (StatusCode::BAD_REQUEST, "digest mismatch").into_response();
        }
        store.lock().unwrap().blobs.insert(digest, body.to_vec());
        return StatusCode::CREATED.into_response();
    }
    if let Some((_, digest)) = rest.split_once("/blobs/") {
        let Some(bytes) = store.lock().unwrap().blobs.get(digest).cloned() else {
            return StatusCode::NOT_FOUND.into_response();
        };
        if method == Method::HEAD {
            return Response::builder()
                .header(header::CONTENT_LENGTH, bytes.len())
                .body(Body::empty())
                .unwrap();
        }
        let is_component = bytes.starts_with(b"\0asm");
        return match hostile {
            Hostile::BlobSwap if is_component => {
                let mut swapped = bytes;
                let last = swapped.len() - 1;
                swapped[last] ^= 0xff;
                Body::from(swapped).into_response()
            }
            Hostile::BlobLonger if is_component => {
                let mut longer = bytes;
                longer.extend(std::iter::repeat_n(0u8, 1024 * 1024));
                Body::from(longer).into_response()
            }
            Hostile::Trickle if is_component => {
                let stream = futures_stream(bytes);
                Response::builder()
                    .header(header::CONTENT_TYPE, "application/octet-stream")
                    .body(Body::from_stream(stream))
                    .unwrap()
            }
            Hostile::RedirectToPlainHttp if is_component => Response::builder()
                .status(StatusCode::TEMPORARY_REDIRECT)
                .header(
                    header::LOCATION,
                    format!("http://localhost:{port}/v2/elsewhere/blobs/{digest}"),
                )
                .body(Body::empty())
                .unwrap(),
            _ => Body::from(bytes).into_response(),
        };
    }
    StatusCode::NOT_FOUND.into_response()
}

/// One byte every 200 ms.
pub fn futures_stream(bytes: Vec<u8>) -> impl futures_core::Stream<Item = Result<Bytes, std::io::Error>> + Send {
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(1);
    tokio::spawn(async move {
        for byte in bytes {
            if sender.send(Ok(Bytes::from(vec![byte]))).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    struct Stream(tokio::sync::mpsc::Receiver<Result<Bytes, std::io::Error>>);
    impl futures_core::Stream for Stream {
        type Item = Result<Bytes, std::io::Error>;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            cx: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<Self::Item>> {
            self.0.poll_recv(cx)
        }
    }
    Stream(receiver)
}

/// A workspace for one test: a plugins folder, a registry config with the
/// right credentials, a trust policy.
pub struct Bench {
    pub registry: Registry,
    pub plugins: PluginDir,
    pub files: tempfile::TempDir,
}

impl Bench {
    pub async fn new() -> Self {
        let registry = Registry::start(true).await;
        let files = tempfile::tempdir().unwrap();
        let auth = BASE64.encode(format!("{USER}:{PASSWORD}"));
        std::fs::write(
            files.path().join("config.json"),
            json!({"auths": {registry.host(): {"auth": auth}}}).to_string(),
        )
        .unwrap();
        std::fs::write(
            files.path().join("wrong.json"),
            json!({"auths": {registry.host(): {"auth": BASE64.encode("alice:guess")}}}).to_string(),
        )
        .unwrap();
        for (seed, file) in [(1u8, "release.pub"), (2, "other.pub")] {
            let pem = key(seed).verifying_key().to_public_key_pem(Default::default()).unwrap();
            std::fs::write(files.path().join(file), pem).unwrap();
        }
        let bench = Bench {
            registry,
            plugins: PluginDir::new(),
            files,
        };
        bench.policy("release.pub");
        bench
    }

    pub fn policy(&self, key_file: &str) {
        std::fs::write(
            self.file("trust.toml"),
            format!(
                "[[repository]]\nmatch = \"{}/tools/*\"\n[[repository.signer]]\nname = \"release key\"\nkey = \"{key_file}\"\n",
                self.registry.host()
            ),
        )
        .unwrap();
    }

    pub fn file(&self, name: &str) -> std::path::PathBuf {
        self.files.path().join(name)
    }

    /// `warden ARGS… --insecure-registry HOST` with the right credentials.
    pub async fn warden(&self, args: &[&str], config: Option<&str>) -> (bool, String, String) {
        let mut command = support::warden();
        command.args(args);
        if matches!(args.first(), Some(&"pull" | &"publish")) {
            command.arg("--insecure-registry").arg(self.registry.host());
        }
        if let Some(config) = config {
            command.arg("--registry-config").arg(self.file(config));
        }
        command
            .env_remove("DOCKER_CONFIG")
            .env_remove("REGISTRY_AUTH_FILE")
            .env("HOME", self.files.path());
        let output = tokio::time::timeout(Duration::from_secs(120), command.output())
            .await
            .expect("warden finishes")
            .unwrap();
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    pub async fn publish(&self, guest: &str, repo_tag: &str) -> String {
        let component = support::guest(guest).to_str().unwrap().to_string();
        let reference = self.registry.reference(repo_tag);
        let (ok, stdout, stderr) = self
            .warden(&["publish", &component, &reference], Some("config.json"))
            .await;
        assert!(ok, "publish failed: {stderr}");
        let digest = stdout.trim().to_string();
        assert!(digest.starts_with("sha256:") && digest.len() == 71, "{stdout}");
        digest
    }

    pub async fn pull(&self, reference: &str, extra: &[&str]) -> (bool, String) {
        let plugins = self.plugins.path().to_str().unwrap().to_string();
        let mut args = vec!["pull", reference, "--plugins", &plugins];
        args.extend_from_slice(extra);
        let (ok, _, stderr) = self.warden(&args, Some("config.json")).await;
        (ok, stderr)
    }

    pub fn trust_args(&self) -> Vec<String> {
        vec![
            "--trust".into(),
            self.file("trust.toml").to_str().unwrap().into(),
            "--require-signature".into(),
        ]
    }

    pub fn folder(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.plugins.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

pub fn key(seed: u8) -> SigningKey {
    SigningKey::from_slice(&[seed; 32]).unwrap()
}

pub fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}
