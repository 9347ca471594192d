"""Keyed signatures in cosign's legacy ("tag") format, made and checked without cosign,
with `cryptography` (ECDSA P-256 over SHA-256, ASN.1 DER signatures, base64) and the
distribution API over urllib (registry_client.py); and Sigstore bundles attached the way
cosign 3 attaches them on a registry without the referrers API. registry.sh uses it as
cosign's stand-in.

The format, as `cosign sign --key` writes it without the referrers API: a manifest
(application/vnd.oci.image.manifest.v1+json) tagged `sha256-<hex>.sig` in the signed
image's repository, where <hex> is the signed manifest's digest; one layer per signature,
of media type application/vnd.dev.cosign.simplesigning.v1+json, whose blob is the
"simple signing" payload

  {"critical":{"identity":{"docker-reference":"HOST/REPO"},"image":{"docker-manifest-digest":"sha256:…"},"type":"cosign container image signature"},"optional":null}

and whose annotation `dev.cosignproject.cosign/signature` is the base64 DER signature of
exactly those payload bytes; the config is a small application/vnd.oci.image.config.v1+json.
The public key is a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), as cosign.pub is.

Bundles (cosign 3, specs/BUNDLE_SPEC.md; the OCI 1.1 referrers tag schema): the bundle
JSON is a blob; an artifact manifest (application/vnd.oci.image.manifest.v1+json,
schemaVersion 2, artifactType application/vnd.dev.sigstore.bundle.v0.3+json, config the
empty descriptor application/vnd.oci.empty.v1+json = `{}`, exactly one layer of the
bundle media type, `subject` the signed manifest's descriptor) is pushed by digest; and,
the registry having no referrers API, the image index (application/vnd.oci.image.index.v1+json)
tagged `sha256-<hex>` (no `.sig`) lists it by a descriptor carrying its artifactType.
The bundle-spec annotations (dev.sigstore.bundle.content, .predicateType,
org.opencontainers.image.created) are on the manifest and copied onto its index entry.

usage:
  python cosign_sign.py keygen DIR NAME
      writes DIR/NAME.key (PKCS#8 PEM, unencrypted) and DIR/NAME.pub (SPKI PEM).
  python cosign_sign.py sign HOST REPO DIGEST KEY DOCKER_CONFIG [--payload-digest D] [--append]
      signs REPO@DIGEST and pushes the signature to REPO:sha256-<hex>.sig. With
      --payload-digest the payload names D instead (a signature of another image, for a
      replay test); with --append the layer is added to the .sig manifest already there
      (cosign's way with a second signer). Prints the .sig manifest's digest.
  python cosign_sign.py verify HOST REPO DIGEST PUB DOCKER_CONFIG
      reads REPO:sha256-<hex>.sig back and checks every layer's media type, blob digest,
      payload (type, docker-reference HOST/REPO, docker-manifest-digest DIGEST) and that
      at least one signature verifies with PUB. Exits 1 with the reason if not.
  python cosign_sign.py attach-bundle HOST REPO DIGEST BUNDLE DOCKER_CONFIG
      attaches the Sigstore bundle file BUNDLE to REPO@DIGEST as above: the artifact
      manifest's subject is REPO@DIGEST's descriptor (read from the registry), and the
      entry is added to the `sha256-<hex>` index already there, if any. Prints the
      artifact manifest's digest.
  python cosign_sign.py verify-bundle HOST REPO DIGEST DOCKER_CONFIG [--bundle FILE]
      reads REPO:sha256-<hex> back and checks the index, each listed artifact manifest
      (media types, artifactType, empty config and its `{}` blob, one bundle layer whose
      blob is a v0.3 bundle, subject = REPO@DIGEST's mediaType, digest and size) and, with
      --bundle, that a layer holds exactly FILE's bytes. Prints one line per bundle naming
      the digest its in-toto statement signs (not checked: a bundle of another artifact
      is attached on purpose by registry.sh). Exits 1 with the reason if not.
"""

import argparse
import base64
import json
import os
import sys
from datetime import datetime, timezone

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from registry_client import OCI_INDEX, OCI_MANIFEST, Registry, RegistryError, credentials_from_docker_config, sha256

SIMPLESIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
SIGNATURE_TYPE = "cosign container image signature"
BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json"
OCI_EMPTY = "application/vnd.oci.empty.v1+json"
EMPTY_BLOB = b"{}"


def fail(message: str) -> None:
    print(f"cosign_sign.py: {message}", file=sys.stderr)
    sys.exit(1)


def signature_tag(digest: str) -> str:
    algorithm, _, hex_digest = digest.partition(":")
    if algorithm != "sha256" or len(hex_digest) != 64:
        fail(f"not a sha256 digest: {digest}")
    return f"sha256-{hex_digest}.sig"


def payload(docker_reference: str, digest: str) -> bytes:
    """The simple-signing payload, byte for byte as cosign writes it (Go's encoding/json: no spaces)."""
    return (
        '{"critical":{"identity":{"docker-reference":"%s"},"image":{"docker-manifest-digest":"%s"},'
        '"type":"%s"},"optional":null}' % (docker_reference, digest, SIGNATURE_TYPE)
    ).encode()


def keygen(directory: str, name: str) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{name}.key"), "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    with open(os.path.join(directory, f"{name}.pub"), "wb") as f:
        f.write(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )


def config_blob(payload_digests: list[str]) -> bytes:
    """The config cosign gives a signature manifest: an empty image whose diff_ids are the payloads."""
    return json.dumps(
        {
            "architecture": "",
            "created": "0001-01-01T00:00:00Z",
            "history": [{"created": "0001-01-01T00:00:00Z"}],
            "os": "",
            "rootfs": {"type": "layers", "diff_ids": payload_digests},
            "config": {},
        },
        separators=(",", ":"),
    ).encode()


def sign(host, repo, digest, key_path, docker_config, payload_digest, append) -> None:
    registry = Registry(host, *credentials_from_docker_config(docker_config, host))
    with open(key_path, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    body = payload(f"{host}/{repo}", payload_digest or digest)
    signature = base64.b64encode(key.sign(body, ec.ECDSA(hashes.SHA256()))).decode()
    layer = {
        "mediaType": SIMPLESIGNING,
        "size": len(body),
        "digest": registry.push_blob(repo, body),
        "annotations": {SIGNATURE_ANNOTATION: signature},
    }
    layers = [layer]
    tag = signature_tag(digest)
    if append:
        try:
            existing, _, _ = registry.manifest(repo, tag)
            layers = json.loads(existing)["layers"] + layers
        except RegistryError as error:
            if error.status != 404:
                raise
    config = config_blob([layer["digest"] for layer in layers])
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "config": {"mediaType": OCI_CONFIG, "size": len(config), "digest": registry.push_blob(repo, config)},
        "layers": layers,
    }
    print(registry.push_manifest(repo, tag, json.dumps(manifest, separators=(",", ":")).encode(), OCI_MANIFEST))


def verify(host, repo, digest, pub_path, docker_config) -> None:
    registry = Registry(host, *credentials_from_docker_config(docker_config, host))
    with open(pub_path, "rb") as f:
        public_key = serialization.load_pem_public_key(f.read())
    if not isinstance(public_key, ec.EllipticCurvePublicKey) or public_key.curve.name != "secp256r1":
        fail(f"{pub_path} is not an ECDSA P-256 public key")
    tag = signature_tag(digest)
    body, content_type, sig_digest = registry.manifest(repo, tag)
    manifest = json.loads(body)
    if content_type != OCI_MANIFEST or manifest.get("mediaType") != OCI_MANIFEST:
        fail(f"{repo}:{tag} is {content_type} / {manifest.get('mediaType')}, want {OCI_MANIFEST}")
    if manifest["config"]["mediaType"] != OCI_CONFIG:
        fail(f"{repo}:{tag} config is {manifest['config']['mediaType']}, want {OCI_CONFIG}")
    registry.blob(repo, manifest["config"]["digest"])
    verified = 0
    for index, layer in enumerate(manifest["layers"]):
        if layer["mediaType"] != SIMPLESIGNING:
            fail(f"layer {index} is {layer['mediaType']}, want {SIMPLESIGNING}")
        blob = registry.blob(repo, layer["digest"])
        if len(blob) != layer["size"]:
            fail(f"layer {index}: {len(blob)} bytes, its descriptor says {layer['size']}")
        claims = json.loads(blob)
        critical = claims["critical"]
        if critical["type"] != SIGNATURE_TYPE:
            fail(f"layer {index}: type {critical['type']!r}")
        if critical["image"]["docker-manifest-digest"] != digest:
            fail(f"layer {index} signs {critical['image']['docker-manifest-digest']}, not {digest}")
        if critical["identity"]["docker-reference"] != f"{host}/{repo}":
            fail(f"layer {index}: docker-reference {critical['identity']['docker-reference']}")
        signature = base64.b64decode(layer["annotations"][SIGNATURE_ANNOTATION], validate=True)
        try:
            public_key.verify(signature, blob, ec.ECDSA(hashes.SHA256()))
            verified += 1
            print(f"  {repo}:{tag} ({sig_digest}) layer {index}: signature verifies with {pub_path}", file=sys.stderr)
        except InvalidSignature:
            print(f"  {repo}:{tag} layer {index}: not signed by {pub_path}", file=sys.stderr)
    if not verified:
        fail(f"no signature in {repo}:{tag} verifies with {pub_path}")
    print(f"{verified} of {len(manifest['layers'])} signatures verify")


def referrers_tag(digest: str) -> str:
    """The referrers tag schema's tag of DIGEST: `<alg>-<hex>`."""
    return signature_tag(digest)[: -len(".sig")]


def bundle_annotations(bundle: dict) -> dict:
    """What BUNDLE_SPEC.md's clients add: the content kind, the predicate type, the time."""
    annotations = {}
    if "dsseEnvelope" in bundle:
        annotations["dev.sigstore.bundle.content"] = "dsse-envelope"
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        if "predicateType" in statement:
            annotations["dev.sigstore.bundle.predicateType"] = statement["predicateType"]
    elif "messageSignature" in bundle:
        annotations["dev.sigstore.bundle.content"] = "message-signature"
    entries = bundle.get("verificationMaterial", {}).get("tlogEntries", [])
    if entries and "integratedTime" in entries[0]:
        created = datetime.fromtimestamp(int(entries[0]["integratedTime"]), timezone.utc)
        annotations["org.opencontainers.image.created"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return annotations


def attach_bundle(host, repo, digest, bundle_path, docker_config) -> None:
    registry = Registry(host, *credentials_from_docker_config(docker_config, host))
    with open(bundle_path, "rb") as f:
        bundle_bytes = f.read()
    bundle = json.loads(bundle_bytes)
    if bundle.get("mediaType") != BUNDLE_V03:
        fail(f"{bundle_path} is a {bundle.get('mediaType')!r}, want {BUNDLE_V03}")
    subject_body, subject_type, subject_digest = registry.manifest(repo, digest)
    if subject_digest != digest:
        fail(f"{repo}@{digest} read back as {subject_digest}")
    annotations = bundle_annotations(bundle)
    manifest = {
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST,
        "artifactType": BUNDLE_V03,
        "config": {"mediaType": OCI_EMPTY, "digest": registry.push_blob(repo, EMPTY_BLOB), "size": len(EMPTY_BLOB)},
        "layers": [{"mediaType": BUNDLE_V03, "digest": registry.push_blob(repo, bundle_bytes), "size": len(bundle_bytes)}],
        "subject": {"mediaType": subject_type, "digest": digest, "size": len(subject_body)},
        "annotations": annotations,
    }
    body = json.dumps(manifest, separators=(",", ":")).encode()
    artifact_digest = registry.push_manifest(repo, sha256(body), body, OCI_MANIFEST)
    tag = referrers_tag(digest)
    entries = []
    try:
        existing, _, _ = registry.manifest(repo, tag)
        entries = [e for e in json.loads(existing)["manifests"] if e.get("digest") != artifact_digest]
    except RegistryError as error:
        if error.status != 404:
            raise
    entries.append(
        {
            "mediaType": OCI_MANIFEST,
            "digest": artifact_digest,
            "size": len(body),
            "artifactType": BUNDLE_V03,
            "annotations": annotations,
        }
    )
    index = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": entries}
    registry.push_manifest(repo, tag, json.dumps(index, separators=(",", ":")).encode(), OCI_INDEX)
    print(artifact_digest)


def verify_bundle(host, repo, digest, docker_config, bundle_path) -> None:
    registry = Registry(host, *credentials_from_docker_config(docker_config, host))
    want_bytes = None
    if bundle_path:
        with open(bundle_path, "rb") as f:
            want_bytes = f.read()
    subject_body, subject_type, _ = registry.manifest(repo, digest)
    want_subject = {"mediaType": subject_type, "digest": digest, "size": len(subject_body)}
    tag = referrers_tag(digest)
    try:
        body, content_type, index_digest = registry.manifest(repo, tag)
    except RegistryError as error:
        if error.status != 404:
            raise
        fail(f"{repo} has no referrers tag {tag}: no bundle is attached to {repo}@{digest}")
    index = json.loads(body)
    print(f"  {repo}:{tag} ({index_digest}) = {body.decode()}", file=sys.stderr)
    if content_type != OCI_INDEX or index.get("mediaType") != OCI_INDEX or index.get("schemaVersion") != 2:
        fail(f"{repo}:{tag} is {content_type} / {index.get('mediaType')} v{index.get('schemaVersion')}, want {OCI_INDEX} v2")
    found, matched = [], False
    for number, entry in enumerate(index["manifests"]):
        where = f"{repo}:{tag} manifests[{number}]"
        if entry.get("mediaType") != OCI_MANIFEST or entry.get("artifactType") != BUNDLE_V03:
            fail(f"{where} is {entry.get('mediaType')} of artifactType {entry.get('artifactType')}, want {OCI_MANIFEST} of {BUNDLE_V03}")
        artifact_body, artifact_type, artifact_digest = registry.manifest(repo, entry["digest"])
        if artifact_digest != entry["digest"] or len(artifact_body) != entry["size"]:
            fail(f"{where}: {entry['digest']} ({entry['size']} bytes) read back as {artifact_digest} ({len(artifact_body)} bytes)")
        manifest = json.loads(artifact_body)
        print(f"  {repo}@{artifact_digest} = {artifact_body.decode()}", file=sys.stderr)
        if artifact_type != OCI_MANIFEST or manifest.get("mediaType") != OCI_MANIFEST or manifest.get("schemaVersion") != 2:
            fail(f"{where}: the manifest is {artifact_type} / {manifest.get('mediaType')} v{manifest.get('schemaVersion')}")
        if manifest.get("artifactType") != BUNDLE_V03:
            fail(f"{where}: artifactType {manifest.get('artifactType')}, want {BUNDLE_V03}")
        config = manifest["config"]
        if config != {"mediaType": OCI_EMPTY, "digest": sha256(EMPTY_BLOB), "size": 2}:
            fail(f"{where}: config {config}, want the empty descriptor")
        if registry.blob(repo, config["digest"]) != EMPTY_BLOB:
            fail(f"{where}: the config blob is not {{}}")
        if len(manifest["layers"]) != 1:
            fail(f"{where}: {len(manifest['layers'])} layers, want exactly one")
        layer = manifest["layers"][0]
        if layer["mediaType"] != BUNDLE_V03:
            fail(f"{where}: the layer is {layer['mediaType']}, want {BUNDLE_V03}")
        blob = registry.blob(repo, layer["digest"])
        if len(blob) != layer["size"]:
            fail(f"{where}: the bundle is {len(blob)} bytes, its descriptor says {layer['size']}")
        subject = manifest.get("subject")
        if subject != want_subject:
            fail(f"{where}: subject {subject}, want {want_subject}")
        bundle = json.loads(blob)
        if bundle.get("mediaType") != BUNDLE_V03:
            fail(f"{where}: the bundle says mediaType {bundle.get('mediaType')!r}")
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        signs = ",".join("sha256:" + s["digest"]["sha256"] for s in statement["subject"])
        matched = matched or blob == want_bytes
        found.append(f"{artifact_digest} ({len(blob)}-byte bundle, {statement['predicateType']}, signs {signs})")
    if not found:
        fail(f"{repo}:{tag} lists no bundle")
    if want_bytes is not None and not matched:
        fail(f"no bundle attached to {repo}@{digest} is the bytes of {bundle_path}")
    print(f"{len(found)} bundle(s) attached to {repo}@{digest} ({subject_type}, {len(subject_body)} bytes): " + "; ".join(found))


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    k = commands.add_parser("keygen")
    k.add_argument("dir"), k.add_argument("name")
    s = commands.add_parser("sign")
    for name in ("host", "repo", "digest", "key", "docker_config"):
        s.add_argument(name)
    s.add_argument("--payload-digest"), s.add_argument("--append", action="store_true")
    v = commands.add_parser("verify")
    for name in ("host", "repo", "digest", "pub", "docker_config"):
        v.add_argument(name)
    a = commands.add_parser("attach-bundle")
    for name in ("host", "repo", "digest", "bundle", "docker_config"):
        a.add_argument(name)
    b = commands.add_parser("verify-bundle")
    for name in ("host", "repo", "digest", "docker_config"):
        b.add_argument(name)
    b.add_argument("--bundle")
    args = parser.parse_args()
    if args.command == "keygen":
        keygen(args.dir, args.name)
    elif args.command == "sign":
        sign(args.host, args.repo, args.digest, args.key, args.docker_config, args.payload_digest, args.append)
    elif args.command == "verify":
        verify(args.host, args.repo, args.digest, args.pub, args.docker_config)
    elif args.command == "attach-bundle":
        attach_bundle(args.host, args.repo, args.digest, args.bundle, args.docker_config)
    else:
        verify_bundle(args.host, args.repo, args.digest, args.docker_config, args.bundle)


if __name__ == "__main__":
    main()
