#!/usr/bin/env python3
"""A Sigstore PKI of our own, offline: makes a keyless Sigstore bundle for any sha256
digest, shaped as `cosign sign` (v3, new bundle format) makes one for an OCI image, and
the trusted_root.json that verifies it; optionally also a cosign 2 legacy keyless signature.

usage:
  python3 sigstore_test_pki.py OUTDIR --digest sha256:HEX [--issuer URL] [--san URI|EMAIL]
                               [--seed N] [--time UNIX] [--issuer-ext both|v2|legacy]
                               [--legacy-sig --docker-reference REGISTRY/REPO [--legacy-bundle]]

writes
  OUTDIR/bundle.sigstore.json   application/vnd.dev.sigstore.bundle.v0.3+json: a DSSE envelope
      (application/vnd.in-toto+json) over an in-toto v1 statement, predicateType
      https://sigstore.dev/cosign/sign/v1, predicate {}, one subject {"digest":{"sha256":HEX}};
      the leaf certificate; one Rekor v1 `dsse` 0.0.1 entry with inclusion proof, signed
      checkpoint and SET (inclusion promise). No RFC 3161 timestamp: the SET-authenticated
      integratedTime is the verified signing time.
  OUTDIR/trusted_root.json      application/vnd.dev.sigstore.trustedroot+json;version=0.1 naming
      the test Fulcio CA (intermediate + root), CT log and Rekor key.
  OUTDIR/other_trusted_root.json        same logs, another CA         (chain must fail)
  OUTDIR/other_ctlog_trusted_root.json  same CA and Rekor, another CT (SCT must fail)
  OUTDIR/other_rekor_trusted_root.json  same CA and CT, another Rekor (SET/checkpoint must fail)
  OUTDIR/info.json              digest, issuer, SAN, integrated time, log indexes
with --legacy-sig (what cosign 2 `sign`, keyless, no new bundle format, pushes as the layer of
the sha256-HEX.sig tag; same leaf certificate, CA, CT log and Rekor key):
  OUTDIR/legacy/payload.json      the simple-signing payload, exact bytes (the layer blob)
  OUTDIR/legacy/annotations.json  the layer's annotations: signature, certificate, chain and the
      Rekor bundle (SET + hashedrekord 0.0.1 body); the entry has no inclusion proof
  OUTDIR/legacy/converted.sigstore.json  (--legacy-bundle) them as Warden's v0.1 bundle

The test "Fulcio" issues what Fulcio issues: an empty subject, a P-256 key, 10 minutes of
validity, KeyUsage digitalSignature (critical), EKU codeSigning, a critical SAN, the OIDC
issuer in 1.3.6.1.4.1.57264.1.8 (DER UTF8String) and/or the legacy .1.1 (bare bytes), and
one embedded SCT over the *precertificate* TBS. CA: P-384 (ecdsa-with-SHA384); logs and
leaf: P-256. With --seed all keys, serials and trees derive from N and ECDSA is RFC 6979, so
--seed plus --time is byte-for-byte reproducible; a bundle with a fixed past --time stays
verifiable (validity is checked at the integrated time, which must not be in the future).
Checked against sigstore-verify 0.15.1.
"""
# Requires: cryptography==46.0.7 (what tests/interop/registry.sh pins); Python >= 3.11.

import argparse
import base64
import hashlib
import json
import os
import random
import sys
from datetime import datetime, timedelta, timezone

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier

OID_ISSUER_LEGACY = ObjectIdentifier("1.3.6.1.4.1.57264.1.1")  # bare UTF-8 bytes
OID_ISSUER_V2 = ObjectIdentifier("1.3.6.1.4.1.57264.1.8")  # DER UTF8String
OID_CT_PRECERT_SCTS = ObjectIdentifier("1.3.6.1.4.1.11129.2.4.2")
CODE_SIGNING = x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING])

BUNDLE_V01 = "application/vnd.dev.sigstore.bundle+json;version=0.1"
BUNDLE_V03 = "application/vnd.dev.sigstore.bundle.v0.3+json"
TRUSTED_ROOT = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
IN_TOTO = "application/vnd.in-toto+json"
COSIGN_SIGN_PREDICATE = "https://sigstore.dev/cosign/sign/v1"
REKOR_ORIGIN = "rekor.warden.test"  # checkpoint origin / signer name (prod: rekor.sigstore.dev)
DEFAULT_ISSUER = "https://token.actions.githubusercontent.com"
DEFAULT_SAN = "https://github.com/acme/tools/.github/workflows/release.yml@refs/tags/v1.0.0"
# cosign 2's legacy signature layer annotations
ANN_SIGNATURE = "dev.cosignproject.cosign/signature"
ANN_CERTIFICATE = "dev.sigstore.cosign/certificate"
ANN_CHAIN = "dev.sigstore.cosign/chain"
ANN_BUNDLE = "dev.sigstore.cosign/bundle"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def canonical_json(value) -> bytes:
    # RFC 8785 for what we emit (ASCII keys, strings, integers): sorted keys, no spaces.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def der_tlv(tag: int, content: bytes) -> bytes:
    n = len(content)
    if n < 0x80:
        return bytes([tag, n]) + content
    size = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([tag, 0x80 | len(size)]) + size + content


def tls_vector(data: bytes, length_bytes: int) -> bytes:
    # RFC 5246 opaque<..2^(8*length_bytes)-1>: a big-endian length prefix, then the bytes.
    return len(data).to_bytes(length_bytes, "big") + data


def spki_der(key) -> bytes:
    return key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)


def log_id(key) -> bytes:
    # A log's ID is SHA-256 of its DER SubjectPublicKeyInfo (RFC 6962 for CT; Rekor the same).
    return sha256(spki_der(key))


class Material:
    """Where keys, serials, signatures and random bytes come from: the seed, or the OS."""

    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed) if seed is not None else random.SystemRandom()

    def key(self, label: str, curve):
        if self.seed is None:
            return ec.generate_private_key(curve)
        # A scalar below the group order: one byte shorter than the field, plus one.
        n = curve.key_size // 8 - 1
        d = int.from_bytes(hashlib.sha512(f"{self.seed}/{label}".encode()).digest()[:n], "big")
        return ec.derive_private_key(d + 1, curve)

    def sign(self, key, data: bytes) -> bytes:
        # ASN.1 DER ECDSA, with the hash that goes with the curve (what Sigstore clients assume).
        h = hashes.SHA384() if key.curve.key_size == 384 else hashes.SHA256()
        return key.sign(data, ec.ECDSA(h, deterministic_signing=self.seed is not None))

    def sign_cert(self, builder, key) -> x509.Certificate:
        return builder.sign(key, hashes.SHA384(), ecdsa_deterministic=self.seed is not None)

    def serial(self) -> int:
        return self.rng.getrandbits(159) + 1  # positive and at most 20 bytes, as RFC 5280 wants


class CA:
    """A Fulcio-like CA: a self-signed root and the intermediate that issues leaves."""

    def __init__(self, m: Material, label: str, t: datetime):
        self.root_key = m.key(f"{label}/root", ec.SECP384R1())
        self.key = m.key(f"{label}/intermediate", ec.SECP384R1())
        root_name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "warden-test"),
                               x509.NameAttribute(NameOID.COMMON_NAME, f"{label}-root")])
        self.name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "warden-test"),
                               x509.NameAttribute(NameOID.COMMON_NAME, f"{label}-intermediate")])
        ca_usage = x509.KeyUsage(False, False, False, False, False,  # keyCertSign, cRLSign
                                 True, True, False, False)
        root_ski = x509.SubjectKeyIdentifier.from_public_key(self.root_key.public_key())
        self.root = m.sign_cert(
            x509.CertificateBuilder().subject_name(root_name).issuer_name(root_name)
            .public_key(self.root_key.public_key()).serial_number(m.serial())
            .not_valid_before(t - timedelta(days=365)).not_valid_after(t + timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=1), critical=True)
            .add_extension(ca_usage, critical=True)
            .add_extension(root_ski, critical=False),
            self.root_key)
        self.ski = x509.SubjectKeyIdentifier.from_public_key(self.key.public_key())
        self.intermediate = m.sign_cert(
            x509.CertificateBuilder().subject_name(self.name).issuer_name(root_name)
            .public_key(self.key.public_key()).serial_number(m.serial())
            .not_valid_before(t - timedelta(days=365)).not_valid_after(t + timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(ca_usage, critical=True)
            # Fulcio's intermediate carries codeSigning too; webpki would enforce it on a
            # non-anchor intermediate.
            .add_extension(CODE_SIGNING, critical=False)
            .add_extension(self.ski, critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(root_ski),
                           critical=False),
            self.root_key)
        # Leaf first, as in Sigstore's trusted roots. sigstore-verify makes every certificate
        # of the chain a webpki trust anchor, so the leaf's verified issuer is the intermediate.
        self.chain = [self.intermediate, self.root]


def make_sct(m: Material, ct_key, issuer_spki: bytes, tbs_precert: bytes, ts_ms: int) -> bytes:
    """An RFC 6962 SignedCertificateTimestampList holding one precert SCT, TLS-encoded.

    The log signs: version(0) | signature_type(0=certificate_timestamp) | timestamp(ms, u64) |
    entry_type(1=precert_entry, u16) | SHA-256(issuer SPKI) | opaque tbs<u24> | extensions<u16>.
    sigstore-verify rebuilds that TBS from the *final* certificate by dropping the SCT
    extension and re-encoding, and takes the issuer SPKI from the webpki-verified path.
    """
    ct_id = log_id(ct_key)
    signed = (bytes([0, 0]) + ts_ms.to_bytes(8, "big") + (1).to_bytes(2, "big")
              + sha256(issuer_spki) + tls_vector(tbs_precert, 3) + tls_vector(b"", 2))
    sig = m.sign(ct_key, signed)
    sct = (bytes([0]) + ct_id + ts_ms.to_bytes(8, "big") + tls_vector(b"", 2)
           + bytes([4, 3])  # SignatureAndHashAlgorithm: sha256, ecdsa
           + tls_vector(sig, 2))
    return tls_vector(tls_vector(sct, 2), 2)  # list<u16> of one SerializedSCT<u16>


def issue_leaf(m: Material, ca: CA, ct_key, t: datetime, issuer: str, san: str, issuer_ext: str):
    """A Fulcio-style leaf with an embedded SCT; returns (certificate, private key)."""
    key = m.key("leaf", ec.SECP256R1())
    serial = m.serial()
    # A SAN with a scheme (https:, spiffe:, ...) is a URI; otherwise an email, as Fulcio does.
    name = (x509.UniformResourceIdentifier(san) if ":" in san.split("@")[0]
            else x509.RFC822Name(san))
    exts = [
        (x509.KeyUsage(True, *[False] * 8), True),  # digitalSignature only, critical
        (CODE_SIGNING, False),
        (x509.SubjectKeyIdentifier.from_public_key(key.public_key()), False),
        (x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca.ski), False),
        (x509.SubjectAlternativeName([name]), True),  # critical: the subject is empty
    ]
    if issuer_ext in ("both", "legacy"):
        exts.append((x509.UnrecognizedExtension(OID_ISSUER_LEGACY, issuer.encode()), False))
    if issuer_ext in ("both", "v2"):
        v2 = der_tlv(0x0C, issuer.encode())  # UTF8String
        exts.append((x509.UnrecognizedExtension(OID_ISSUER_V2, v2), False))

    def build(extensions):
        b = (x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(ca.name)
             .public_key(key.public_key()).serial_number(serial)
             .not_valid_before(t).not_valid_after(t + timedelta(minutes=10)))
        for ext, critical in extensions:
            b = b.add_extension(ext, critical=critical)
        return m.sign_cert(b, ca.key)

    # The precertificate TBS is the final TBS minus the SCT extension (the verifier filters
    # it out, keeping the others in order, and re-encodes). Real Fulcio submits a precert
    # with the CT poison extension, which the log strips; a certificate signed without
    # either has the same TBS bytes. The SCT goes last, where Fulcio puts it.
    tbs_precert = build(exts).tbs_certificate_bytes
    sct_ms = int(t.timestamp()) * 1000 + 250
    scts = make_sct(m, ct_key, spki_der(ca.key), tbs_precert, sct_ms)
    sct_ext = x509.UnrecognizedExtension(OID_CT_PRECERT_SCTS, der_tlv(0x04, scts))  # OCTET STRING
    cert = build(exts + [(sct_ext, False)])
    assert cert.tbs_precertificate_bytes == tbs_precert, "precertificate TBS does not round-trip"
    return cert, key


# RFC 6962 / 9162 Merkle tree: leaves and interior nodes are domain-separated.
def leaf_hash(data: bytes) -> bytes:
    return sha256(b"\x00" + data)


def node_hash(left: bytes, right: bytes) -> bytes:
    return sha256(b"\x01" + left + right)


def split_point(n: int) -> int:
    return 1 << ((n - 1).bit_length() - 1)  # the largest power of two smaller than n


def tree_root(leaves: list) -> bytes:
    if len(leaves) == 1:
        return leaves[0]
    k = split_point(len(leaves))
    return node_hash(tree_root(leaves[:k]), tree_root(leaves[k:]))


def inclusion_path(index: int, leaves: list) -> list:
    # RFC 6962 2.1.1 PATH(m, D[n]), ordered from the leaf's sibling up to the root's child.
    if len(leaves) == 1:
        return []
    k = split_point(len(leaves))
    if index < k:
        return inclusion_path(index, leaves[:k]) + [tree_root(leaves[k:])]
    return inclusion_path(index - k, leaves[k:]) + [tree_root(leaves[:k])]


def signed_entry_timestamp(m: Material, rekor_key, body: bytes, integrated_time: int,
                           log_index: int) -> bytes:
    # SET: Rekor's signature over the RFC 8785 JSON of body (base64), integratedTime,
    # logID (hex) and logIndex (the global one).
    return m.sign(rekor_key, canonical_json({
        "body": b64(body), "integratedTime": integrated_time,
        "logID": log_id(rekor_key).hex(), "logIndex": log_index}))


def rekor_entry(m: Material, rekor_key, body: bytes, integrated_time: int) -> dict:
    """A Rekor v1 TransparencyLogEntry for `body`: a tree of a few leaves holding it, the
    inclusion proof, a signed checkpoint (signed note) and the SET."""
    size = m.rng.randint(2, 17)  # >= 2, so the proof has at least one hash to tamper with
    index = m.rng.randrange(size)
    leaves = [leaf_hash(m.rng.randbytes(64)) for _ in range(size)]
    leaves[index] = leaf_hash(body)
    root = tree_root(leaves)
    # Rekor v1 has two indexes: logIndex counts over every shard (the SET signs it), while
    # the proof's logIndex is the position in this shard's tree. Keep them apart as prod does.
    global_index = 90_000_000 + index
    rekor_id = log_id(rekor_key)

    # Checkpoint (C2SP signed note): "origin\nsize\nbase64(root)\n", a blank line, then
    # "— name base64(4-byte key hint || signature)". The hint is the log ID's first 4 bytes.
    note = f"{REKOR_ORIGIN} - {m.rng.getrandbits(63)}\n{size}\n{b64(root)}\n"
    note_sig = m.sign(rekor_key, note.encode())
    checkpoint = f"{note}\n\u2014 {REKOR_ORIGIN} {b64(rekor_id[:4] + note_sig)}\n"

    set_ = signed_entry_timestamp(m, rekor_key, body, integrated_time, global_index)
    return {
        "logIndex": str(global_index),
        "logId": {"keyId": b64(rekor_id)},
        "kindVersion": {"kind": "dsse", "version": "0.0.1"},
        "integratedTime": str(integrated_time),
        "inclusionPromise": {"signedEntryTimestamp": b64(set_)},
        "inclusionProof": {
            "logIndex": str(index),
            "rootHash": b64(root),
            "treeSize": str(size),
            "hashes": [b64(h) for h in inclusion_path(index, leaves)],
            "checkpoint": {"envelope": checkpoint},
        },
        "canonicalizedBody": b64(body),
    }


def make_bundle(m: Material, leaf, leaf_key, rekor_key, digest_hex: str, integrated_time: int):
    # What cosign v3 signs for an image: an in-toto v1 statement naming only the digest.
    statement = {"_type": "https://in-toto.io/Statement/v1",
                 "subject": [{"digest": {"sha256": digest_hex}}],
                 "predicateType": COSIGN_SIGN_PREDICATE, "predicate": {}}
    payload = json.dumps(statement, separators=(",", ":")).encode()
    # DSSE signs the pre-authentication encoding, not the payload itself.
    pae = b"DSSEv1 %d %s %d %s" % (len(IN_TOTO), IN_TOTO.encode(), len(payload), payload)
    sig = m.sign(leaf_key, pae)
    envelope = {"payload": b64(payload), "payloadType": IN_TOTO, "signatures": [{"sig": b64(sig)}]}

    # Rekor's dsse 0.0.1 body. sigstore-verify checks payloadHash, the one signature and that
    # the verifier (base64 of the PEM certificate) is the bundle's certificate; envelopeHash
    # is parsed but not checked (it hashes Rekor's own serialisation of the envelope).
    pem = leaf.public_bytes(Encoding.PEM)
    body = canonical_json({"apiVersion": "0.0.1", "kind": "dsse", "spec": {
        "envelopeHash": {"algorithm": "sha256", "value": sha256(canonical_json(envelope)).hex()},
        "payloadHash": {"algorithm": "sha256", "value": sha256(payload).hex()},
        "signatures": [{"signature": b64(sig), "verifier": b64(pem)}],
    }})
    return {
        "mediaType": BUNDLE_V03,
        "verificationMaterial": {
            # v0.3 carries the leaf alone, never a chain.
            "certificate": {"rawBytes": b64(leaf.public_bytes(Encoding.DER))},
            "tlogEntries": [rekor_entry(m, rekor_key, body, integrated_time)],
            "timestampVerificationData": {},
        },
        "dsseEnvelope": envelope,
    }


def make_legacy(m: Material, ca: CA, leaf, leaf_key, rekor_key, digest_hex: str,
                docker_reference: str, integrated_time: int):
    """A cosign 2 legacy keyless signature: (payload bytes, layer annotations)."""
    # The simple-signing payload, as cosign's Go structs marshal it: compact, in field order.
    payload = json.dumps({"critical": {"identity": {"docker-reference": docker_reference},
                                       "image": {"docker-manifest-digest": f"sha256:{digest_hex}"},
                                       "type": "cosign container image signature"},
                          "optional": None}, separators=(",", ":")).encode()
    sig = b64(m.sign(leaf_key, payload))  # ECDSA P-256 SHA-256 over the payload itself
    pem = leaf.public_bytes(Encoding.PEM)
    # hashedrekord 0.0.1 as Rekor canonicalizes it (RFC 8785); publicKey.content is the
    # base64 of the PEM certificate, data.hash the hex SHA-256 of the payload.
    body = canonical_json({"apiVersion": "0.0.1", "kind": "hashedrekord", "spec": {
        "data": {"hash": {"algorithm": "sha256", "value": sha256(payload).hex()}},
        "signature": {"content": sig, "publicKey": {"content": b64(pem)}}}})
    log_index = 90_000_000 + m.rng.randrange(1_000_000)  # no tree: cosign 2 keeps only the SET
    set_ = signed_entry_timestamp(m, rekor_key, body, integrated_time, log_index)
    # cosign's bundle.RekorBundle, json.Marshal'd (compact, in Go field order).
    rekor_bundle = {"SignedEntryTimestamp": b64(set_),
                    "Payload": {"body": b64(body), "integratedTime": integrated_time,
                                "logIndex": log_index, "logID": log_id(rekor_key).hex()}}
    return payload, {
        ANN_SIGNATURE: sig,
        ANN_CERTIFICATE: pem.decode(),
        ANN_CHAIN: "".join(c.public_bytes(Encoding.PEM).decode() for c in ca.chain),
        ANN_BUNDLE: json.dumps(rekor_bundle, separators=(",", ":")),
    }


def legacy_to_bundle(annotations: dict, payload: bytes) -> dict:
    """Warden's conversion of the annotations into a v0.1 bundle (artifact: the payload).

    v0.1 is the one bundle version sigstore-verify accepts with a SET and no inclusion proof.
    The chain holds only the leaf: the CA certificates come from the trusted root, never
    from the chain annotation. The artifact to verify it for is the payload bytes."""
    rekor = json.loads(annotations[ANN_BUNDLE])
    entry = rekor["Payload"]
    leaf = x509.load_pem_x509_certificate(annotations[ANN_CERTIFICATE].encode())
    return {
        "mediaType": BUNDLE_V01,
        "verificationMaterial": {
            "x509CertificateChain": {"certificates": [
                {"rawBytes": b64(leaf.public_bytes(Encoding.DER))}]},
            "tlogEntries": [{
                "logIndex": str(entry["logIndex"]),
                "logId": {"keyId": b64(bytes.fromhex(entry["logID"]))},
                "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
                "integratedTime": str(entry["integratedTime"]),
                "inclusionPromise": {"signedEntryTimestamp": rekor["SignedEntryTimestamp"]},
                "canonicalizedBody": entry["body"],
            }],
        },
        "messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256", "digest": b64(sha256(payload))},
            "signature": annotations[ANN_SIGNATURE],
        },
    }


def trusted_root(ca: CA, ct_key, rekor_key, start: datetime) -> dict:
    since = {"start": start.strftime("%Y-%m-%dT%H:%M:%SZ")}  # open-ended windows

    def log(url, key):
        return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                "publicKey": {"rawBytes": b64(spki_der(key)),
                              "keyDetails": "PKIX_ECDSA_P256_SHA_256", "validFor": since},
                # The verifier looks keys up by this ID; it does not recompute it.
                "logId": {"keyId": b64(log_id(key))}}

    return {
        "mediaType": TRUSTED_ROOT,
        "tlogs": [log("https://rekor.warden.test", rekor_key)],
        "certificateAuthorities": [{
            "subject": {"organization": "warden-test", "commonName": "warden-test-fulcio"},
            "uri": "https://fulcio.warden.test",
            "certChain": {"certificates": [
                {"rawBytes": b64(c.public_bytes(Encoding.DER))} for c in ca.chain]},
            "validFor": since,
        }],
        "ctlogs": [log("https://ctfe.warden.test/test", ct_key)],
        "timestampAuthorities": [],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir")
    p.add_argument("--digest", required=True, help="sha256:HEX, the image manifest digest")
    p.add_argument("--issuer", default=DEFAULT_ISSUER, help="OIDC issuer in the certificate")
    p.add_argument("--san", default=DEFAULT_SAN, help="SAN: a URI, or an email address")
    p.add_argument("--seed", type=int, help="derive all keys and randomness from N")
    p.add_argument("--time", type=int, help="leaf notBefore, unix seconds (default: now - 60)")
    p.add_argument("--issuer-ext", choices=("both", "v2", "legacy"), default="both",
                   help="which Fulcio issuer extension(s) to write: .1.8 (v2), .1.1 (legacy)")
    p.add_argument("--legacy-sig", action="store_true",
                   help="also write a cosign 2 legacy keyless signature to OUTDIR/legacy/")
    p.add_argument("--docker-reference", help="REGISTRY/REPO in the legacy payload")
    p.add_argument("--legacy-bundle", action="store_true",
                   help="also write OUTDIR/legacy/converted.sigstore.json (implies --legacy-sig)")
    a = p.parse_args()
    a.legacy_sig |= a.legacy_bundle
    if a.legacy_sig and not a.docker_reference:
        sys.exit("sigstore_test_pki.py: --legacy-sig needs --docker-reference REGISTRY/REPO")
    algorithm, _, digest_hex = a.digest.partition(":")
    if algorithm != "sha256" or len(digest_hex) != 64 or digest_hex.strip("0123456789abcdef"):
        sys.exit(f"sigstore_test_pki.py: --digest must be sha256:<64 lowercase hex>: {a.digest!r}")

    # notBefore a minute ago, so the integrated time (2 s later) is not in the future;
    # sigstore-verify rejects integratedTime > now.
    t0 = a.time if a.time is not None else int(datetime.now(timezone.utc).timestamp()) - 60
    t = datetime.fromtimestamp(t0, timezone.utc)
    integrated_time = t0 + 2  # within the leaf's 10 minutes, as Fulcio + Rekor would be
    since = t - timedelta(days=1)  # every trust window opens a day before signing

    m = Material(a.seed)
    ca = CA(m, "warden-test-fulcio", t)
    ct_key, rekor_key = m.key("ctlog", ec.SECP256R1()), m.key("rekor", ec.SECP256R1())
    leaf, leaf_key = issue_leaf(m, ca, ct_key, t, a.issuer, a.san, a.issuer_ext)
    bundle = make_bundle(m, leaf, leaf_key, rekor_key, digest_hex, integrated_time)
    # Strangers: same shapes, other keys, each swapped in alone for a negative test.
    other_ca = CA(m, "other-fulcio", t)
    other_ct, other_rekor = (m.key(f"other-{n}", ec.SECP256R1()) for n in ("ctlog", "rekor"))

    entry = bundle["verificationMaterial"]["tlogEntries"][0]
    outputs = {
        "bundle.sigstore.json": bundle,
        "trusted_root.json": trusted_root(ca, ct_key, rekor_key, since),
        "other_trusted_root.json": trusted_root(other_ca, ct_key, rekor_key, since),
        "other_ctlog_trusted_root.json": trusted_root(ca, other_ct, rekor_key, since),
        "other_rekor_trusted_root.json": trusted_root(ca, ct_key, other_rekor, since),
        "info.json": {"digest": a.digest, "issuer": a.issuer, "san": a.san,
                      "not_before": t0, "integrated_time": integrated_time,
                      "log_index": int(entry["logIndex"]),
                      "tree_index": int(entry["inclusionProof"]["logIndex"]),
                      "tree_size": int(entry["inclusionProof"]["treeSize"])},
    }
    if a.legacy_sig:  # last, so the outputs above are the same with or without it
        payload, annotations = make_legacy(m, ca, leaf, leaf_key, rekor_key, digest_hex,
                                           a.docker_reference, integrated_time)
        outputs["legacy/payload.json"] = payload  # bytes: written as they are, no newline
        outputs["legacy/annotations.json"] = annotations
        if a.legacy_bundle:
            outputs["legacy/converted.sigstore.json"] = legacy_to_bundle(annotations, payload)
    for name, value in outputs.items():
        path = os.path.join(a.outdir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not isinstance(value, bytes):
            value = json.dumps(value, indent=2).encode() + b"\n"
        with open(path, "wb") as f:
            f.write(value)
    print(os.path.join(a.outdir, "bundle.sigstore.json"))


if __name__ == "__main__":
    main()
