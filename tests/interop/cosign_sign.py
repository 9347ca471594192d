"""Keyed signatures in cosign's legacy ("tag") format, made and checked without cosign,
with `cryptography` (ECDSA P-256 over SHA-256, ASN.1 DER signatures, base64) and the
distribution API over urllib (registry_client.py). registry.sh uses it as cosign's
stand-in.

The format, as `cosign sign --key` writes it without the referrers API: a manifest
(application/vnd.oci.image.manifest.v1+json) tagged `sha256-<hex>.sig` in the signed
image's repository, where <hex> is the signed manifest's digest; one layer per signature,
of media type application/vnd.dev.cosign.simplesigning.v1+json, whose blob is the
"simple signing" payload

  {"critical":{"identity":{"docker-reference":"HOST/REPO"},"image":{"docker-manifest-digest":"sha256:…"},"type":"cosign container image signature"},"optional":null}

and whose annotation `dev.cosignproject.cosign/signature` is the base64 DER signature of
exactly those payload bytes; the config is a small application/vnd.oci.image.config.v1+json.
The public key is a PEM `PUBLIC KEY` (SubjectPublicKeyInfo), as cosign.pub is.

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
"""

import argparse
import base64
import json
import os
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from registry_client import OCI_MANIFEST, Registry, RegistryError, credentials_from_docker_config, sha256

SIMPLESIGNING = "application/vnd.dev.cosign.simplesigning.v1+json"
SIGNATURE_ANNOTATION = "dev.cosignproject.cosign/signature"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
SIGNATURE_TYPE = "cosign container image signature"


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
    args = parser.parse_args()
    if args.command == "keygen":
        keygen(args.dir, args.name)
    elif args.command == "sign":
        sign(args.host, args.repo, args.digest, args.key, args.docker_config, args.payload_digest, args.append)
    else:
        verify(args.host, args.repo, args.digest, args.pub, args.docker_config)


if __name__ == "__main__":
    main()
