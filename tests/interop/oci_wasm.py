"""registry.sh's publisher and inspector of WebAssembly components in an OCI registry,
in the CNCF Wasm OCI artifact layout (tag-group-wasm's "Wasm OCI Artifact layout"):
an image manifest (application/vnd.oci.image.manifest.v1+json) whose config is
application/vnd.wasm.config.v0+json and whose one layer is application/wasm.

usage:
  python oci_wasm.py push-oras HOST REPO:TAG WASM DOCKER_CONFIG
      pushes WASM with the oras Python SDK (0.2.43, credentials from DOCKER_CONFIG, plain
      HTTP); prints the manifest digest.
  python oci_wasm.py check HOST REPO REFERENCE WASM DOCKER_CONFIG [--digest sha256:…]
      reads REPO's manifest REFERENCE back over the distribution API (urllib, not oras)
      and checks the layout, media types, digests, sizes and that the layer is WASM's
      bytes (and, with --digest, that the manifest has that digest); prints the digest.
  python oci_wasm.py pulled DIR NAME WASM --reference REF --digest sha256:… [--signer NAME]
      checks what `warden pull` wrote: DIR/NAME.wasm is WASM's bytes and
      DIR/NAME.origin.json is JSON naming REF, the digest (and the signer).

Exits 1 with the reason on stderr when a check fails.
"""

import argparse
import json
import os
import sys
import tempfile

from registry_client import OCI_MANIFEST, Registry, credentials_from_docker_config, sha256

WASM_CONFIG = "application/vnd.wasm.config.v0+json"
WASM_LAYER = "application/wasm"


def fail(message: str) -> None:
    print(f"oci_wasm.py: {message}", file=sys.stderr)
    sys.exit(1)


def wasm_config(layer_digest: str) -> bytes:
    return json.dumps(
        {
            "architecture": "wasm",
            "os": "wasip2",
            "layerDigests": [layer_digest],
            "component": {"exports": [], "imports": [], "target": None},
        },
        separators=(",", ":"),
    ).encode()


def push_oras(host: str, target: str, wasm: str, docker_config: str) -> None:
    import oras.client
    import oras.version

    if oras.version.__version__ != "0.2.43":
        fail(f"oras is {oras.version.__version__}, want 0.2.43")
    with open(wasm, "rb") as f:
        layer_digest = sha256(f.read())
    with tempfile.TemporaryDirectory() as scratch:
        config = os.path.join(scratch, "config.json")
        with open(config, "wb") as f:
            f.write(wasm_config(layer_digest))
        # Basic auth (the registry's htpasswd), read from DOCKER_CONFIG's `auths`.
        client = oras.client.OrasClient(hostname=host, insecure=True, auth_backend="basic")
        response = client.push(
            target=f"{host}/{target}",
            config_path=docker_config,
            files=[f"{wasm}:{WASM_LAYER}"],
            manifest_config=f"{config}:{WASM_CONFIG}",
            disable_path_validation=True,
            quiet=True,
        )
    if response.status_code != 201:
        fail(f"oras push answered HTTP {response.status_code}: {response.text[:300]}")
    print(response.headers["Docker-Content-Digest"])


def pull_oras(host: str, target: str, wasm: str, docker_config: str) -> None:
    """Pulls TARGET with oras (an independent client) and checks that its one
    layer is WASM, byte for byte: what `warden publish` pushed is usable by
    others, not only by Warden."""
    import oras.client

    with open(wasm, "rb") as f:
        component = f.read()
    with tempfile.TemporaryDirectory() as scratch:
        client = oras.client.OrasClient(hostname=host, insecure=True, auth_backend="basic")
        files = client.pull(target=f"{host}/{target}", config_path=docker_config, outdir=scratch)
        if len(files) != 1:
            fail(f"oras pulled {len(files)} files from {target}, want 1: {files}")
        with open(files[0], "rb") as f:
            pulled = f.read()
    if pulled != component:
        fail(f"oras pulled {len(pulled)} bytes from {target}, not the {len(component)} bytes of {wasm}")
    print(f"oras pulled {target}: {len(pulled)} bytes, = {os.path.basename(wasm)}", file=sys.stderr)


def check(host: str, repo: str, reference: str, wasm: str, docker_config: str, want_digest) -> None:
    registry = Registry(host, *credentials_from_docker_config(docker_config, host))
    with open(wasm, "rb") as f:
        component = f.read()
    body, content_type, digest = registry.manifest(repo, reference)
    manifest = json.loads(body)
    print(f"  {repo}@{digest}: {json.dumps(manifest, separators=(',', ':'))}", file=sys.stderr)
    if want_digest and digest != want_digest:
        fail(f"{repo}:{reference} has digest {digest}, want {want_digest}")
    if content_type != OCI_MANIFEST:
        fail(f"the registry serves the manifest as {content_type}, want {OCI_MANIFEST}")
    if manifest.get("schemaVersion") != 2 or manifest.get("mediaType") != OCI_MANIFEST:
        fail(f"schemaVersion {manifest.get('schemaVersion')}, mediaType {manifest.get('mediaType')}: want 2, {OCI_MANIFEST}")
    config_descriptor = manifest["config"]
    if config_descriptor["mediaType"] != WASM_CONFIG:
        fail(f"config mediaType {config_descriptor['mediaType']}, want {WASM_CONFIG}")
    config_bytes = registry.blob(repo, config_descriptor["digest"])
    if len(config_bytes) != config_descriptor["size"]:
        fail(f"config is {len(config_bytes)} bytes, its descriptor says {config_descriptor['size']}")
    config = json.loads(config_bytes)
    print(f"  config: {config_bytes.decode()}", file=sys.stderr)
    layers = manifest["layers"]
    if len(layers) != 1:
        fail(f"{len(layers)} layers, want exactly 1")
    layer = layers[0]
    if layer["mediaType"] != WASM_LAYER:
        fail(f"layer mediaType {layer['mediaType']}, want {WASM_LAYER}")
    if layer["digest"] != sha256(component) or layer["size"] != len(component):
        fail(f"layer {layer['digest']} ({layer['size']} bytes), want {sha256(component)} ({len(component)} bytes) of {wasm}")
    if registry.blob(repo, layer["digest"]) != component:
        fail(f"the layer blob is not the bytes of {wasm}")
    for key, want in (("architecture", "wasm"), ("os", "wasip2"), ("layerDigests", [layer["digest"]])):
        if config.get(key) != want:
            fail(f"config {key} is {json.dumps(config.get(key))}, want {json.dumps(want)}")
    print(digest)


def strings_in(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return []


def pulled(directory: str, name: str, wasm: str, reference: str, digest: str, signer) -> None:
    with open(wasm, "rb") as f:
        want = f.read()
    got_path = os.path.join(directory, f"{name}.wasm")
    origin_path = os.path.join(directory, f"{name}.origin.json")
    for path in (got_path, origin_path):
        if not os.path.isfile(path):
            fail(f"no {path} (the folder holds {sorted(os.listdir(directory)) if os.path.isdir(directory) else 'nothing'})")
    with open(got_path, "rb") as f:
        got = f.read()
    if got != want:
        fail(f"{got_path} is {sha256(got)} ({len(got)} bytes), want {wasm}: {sha256(want)} ({len(want)} bytes)")
    with open(origin_path) as f:
        text = f.read()
    print(f"  {origin_path}: {text.strip()}", file=sys.stderr)
    try:
        strings = strings_in(json.loads(text))
    except json.JSONDecodeError as error:
        fail(f"{origin_path} is not JSON: {error}")
    wanted = [("the reference", reference), ("the manifest digest", digest)]
    if signer:
        wanted.append(("the signer", signer))
    for what, value in wanted:
        if not value:
            fail(f"no {what} to look for (an earlier step failed)")
        if not any(value in s for s in strings):
            fail(f"{origin_path} does not name {what} {value}")


def main() -> None:
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("push-oras")
    p.add_argument("host"), p.add_argument("target"), p.add_argument("wasm"), p.add_argument("docker_config")
    c = commands.add_parser("check")
    c.add_argument("host"), c.add_argument("repo"), c.add_argument("reference")
    c.add_argument("wasm"), c.add_argument("docker_config"), c.add_argument("--digest")
    o = commands.add_parser("pull-oras")
    o.add_argument("host"), o.add_argument("target"), o.add_argument("wasm"), o.add_argument("docker_config")
    d = commands.add_parser("pulled")
    d.add_argument("dir"), d.add_argument("name"), d.add_argument("wasm")
    d.add_argument("--reference", required=True), d.add_argument("--digest", required=True), d.add_argument("--signer")
    args = parser.parse_args()
    if args.command == "push-oras":
        push_oras(args.host, args.target, args.wasm, args.docker_config)
    elif args.command == "pull-oras":
        pull_oras(args.host, args.target, args.wasm, args.docker_config)
    elif args.command == "check":
        check(args.host, args.repo, args.reference, args.wasm, args.docker_config, args.digest)
    else:
        pulled(args.dir, args.name, args.wasm, args.reference, args.digest, args.signer)


if __name__ == "__main__":
    main()
