"""A small client of the distribution (OCI registry) HTTP API over plain HTTP, with
urllib and Basic auth only: what registry.sh's helpers (oci_wasm.py, cosign_sign.py)
use to push and read manifests and blobs exactly as bytes, independently of Warden
and of oras.

    registry = Registry("127.0.0.1:5000", "user", "password")
    digest = registry.push_blob("tools/text", data)
    digest = registry.push_manifest("tools/text", "1.0", body, OCI_MANIFEST)
    body, media_type, digest = registry.manifest("tools/text", "1.0")
"""

import base64
import hashlib
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Optional

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
ACCEPT = ", ".join(
    [
        OCI_MANIFEST,
        OCI_INDEX,
        "application/vnd.docker.distribution.manifest.v2+json",
        "application/vnd.docker.distribution.manifest.list.v2+json",
    ]
)


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


class RegistryError(Exception):
    def __init__(self, method: str, url: str, status: int, body: bytes):
        self.status = status
        super().__init__(f"{method} {url}: HTTP {status}: {body[:300].decode('utf-8', 'replace')}")


def credentials_from_docker_config(path: str, registry: str) -> tuple[str, str]:
    """(user, password) of `registry` in a Docker config.json's `auths`."""
    with open(path) as f:
        auth = json.load(f)["auths"][registry]["auth"]
    user, _, password = base64.b64decode(auth).decode().partition(":")
    return user, password


class Registry:
    def __init__(self, host: str, user: Optional[str] = None, password: Optional[str] = None):
        self.host = host
        self.base = f"http://{host}"
        self.auth = None
        if user is not None:
            self.auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def request(self, method: str, url: str, body: Optional[bytes] = None, headers: Optional[dict] = None):
        """(status, headers, body) of one request; raises RegistryError on a status >= 400."""
        if url.startswith("/"):
            url = self.base + url
        all_headers = dict(headers or {})
        if self.auth:
            all_headers["Authorization"] = self.auth
        request = urllib.request.Request(url, data=body, method=method, headers=all_headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            raise RegistryError(method, url, error.code, error.read()) from None

    def push_blob(self, repo: str, data: bytes) -> str:
        """Monolithic upload: POST /v2/REPO/blobs/uploads/, then PUT LOCATION?digest=…; the digest."""
        digest = sha256(data)
        status, headers, _ = self.request("POST", f"/v2/{repo}/blobs/uploads/", b"")
        if status != 202:
            raise RegistryError("POST", f"/v2/{repo}/blobs/uploads/", status, b"want 202")
        location = urllib.parse.urljoin(self.base + "/", headers["Location"])
        separator = "&" if "?" in location else "?"
        status, headers, _ = self.request(
            "PUT",
            f"{location}{separator}digest={urllib.parse.quote(digest)}",
            data,
            {"Content-Type": "application/octet-stream", "Content-Length": str(len(data))},
        )
        if status != 201:
            raise RegistryError("PUT", location, status, b"want 201")
        if headers.get("Docker-Content-Digest") not in (None, digest):
            raise RegistryError("PUT", location, status, f"registry says {headers['Docker-Content-Digest']}".encode())
        return digest

    def push_manifest(self, repo: str, reference: str, body: bytes, media_type: str) -> str:
        """PUT /v2/REPO/manifests/REFERENCE of exactly these bytes; the digest (checked against the registry's)."""
        status, headers, _ = self.request(
            "PUT", f"/v2/{repo}/manifests/{reference}", body, {"Content-Type": media_type}
        )
        if status != 201:
            raise RegistryError("PUT", f"/v2/{repo}/manifests/{reference}", status, b"want 201")
        digest = sha256(body)
        said = headers.get("Docker-Content-Digest")
        if said != digest:
            raise RegistryError("PUT", f"/v2/{repo}/manifests/{reference}", status, f"digest {said}, want {digest}".encode())
        return digest

    def manifest(self, repo: str, reference: str) -> tuple[bytes, str, str]:
        """(bytes, Content-Type, Docker-Content-Digest) of a manifest; the digest is checked against the bytes."""
        _, headers, body = self.request("GET", f"/v2/{repo}/manifests/{reference}", headers={"Accept": ACCEPT})
        digest = headers.get("Docker-Content-Digest")
        if digest != sha256(body):
            raise RegistryError("GET", f"/v2/{repo}/manifests/{reference}", 200, f"digest {digest} != {sha256(body)}".encode())
        return body, headers.get_content_type(), digest

    def blob(self, repo: str, digest: str) -> bytes:
        """A blob's bytes (through the registry's redirect, if any), checked against its digest."""
        _, _, body = self.request("GET", f"/v2/{repo}/blobs/{digest}")
        if sha256(body) != digest:
            raise RegistryError("GET", f"/v2/{repo}/blobs/{digest}", 200, f"content is {sha256(body)}".encode())
        return body
