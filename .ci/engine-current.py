#!/usr/bin/env python3
"""Fails when Warden's engine is behind the newest release of its Wasmtime line.

For each lockfile (the root and the fuzz workspace) it asks cargo, without
writing anything (`cargo update --dry-run -p NAME@VERSION` for every locked
Wasmtime-family crate: wasmtime*, cranelift*, winch*, pulley*), whether any
of them can move to a newer release that the registry offers and that still
matches the manifests (the same major line). If one can, it fails and prints
the one command that updates it. It also fails when the locked `wasmtime`
release has been yanked, or when the registry's index cannot be read.

It also reads the registry's index for `wasmtime` itself and reports the
newest release of the line and the newest overall. A newer release of the line
that cargo cannot build from this registry (a crate it pins exactly is missing
there) is printed as a warning with cargo's reason, not a failure: there is
nothing to adopt yet. The policy (README, Security): a new patch release of
the line is adopted within a week; a new LTS line within its support overlap.
"""

import json
import re
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKSPACES = [ROOT, ROOT / "fuzz"]
FAMILY = re.compile(r"^(wasmtime|cranelift|winch|pulley)")
INDEX = "https://index.crates.io/wa/sm/wasmtime"


def locked_packages(workspace: Path) -> list[tuple[str, str]]:
    """Every Wasmtime-family crate from the registry in the lockfile, as
    (name, version): a crate locked at two versions appears twice."""
    lock = tomllib.loads((workspace / "Cargo.lock").read_text())
    return sorted(
        (p["name"], p["version"])
        for p in lock["package"]
        if FAMILY.match(p["name"]) and p.get("source", "").startswith("registry+")
    )


def locked(workspace: Path) -> dict[str, str]:
    return dict(locked_packages(workspace))


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("+")[0].split("-")[0].split("."))


def dry_run(workspace: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["cargo", "update", "--dry-run", "--manifest-path", str(workspace / "Cargo.toml"), *args],
        capture_output=True,
        text=True,
        cwd=workspace,
    )


def published_releases() -> tuple[list[str], set[str]]:
    """The registry's releases of `wasmtime` (not pre-releases), and which
    of them are yanked."""
    with urllib.request.urlopen(INDEX, timeout=60) as response:
        lines = response.read().decode().splitlines()
    releases = [json.loads(line) for line in lines if line.strip()]
    stable = [r for r in releases if "-" not in r["vers"]]
    return [r["vers"] for r in stable if not r.get("yanked")], {r["vers"] for r in stable if r.get("yanked")}


def main() -> int:
    behind = []
    for workspace in WORKSPACES:
        packages = locked_packages(workspace)
        before = dict(packages)
        if "wasmtime" not in before:
            print(f"{workspace}: no wasmtime from the registry in Cargo.lock")
            return 1
        args = [arg for name, version in packages for arg in ("-p", f"{name}@{version}")]
        result = dry_run(workspace, *args)
        if result.returncode != 0:
            print(f"`cargo update --dry-run` failed in {workspace}:\n{result.stderr}")
            return 1
        moves = [
            line.strip()
            for line in result.stderr.splitlines()
            if re.match(r"\s*Updating ", line) and FAMILY.match(line.split()[1])
        ]
        name = workspace.relative_to(ROOT) if workspace != ROOT else Path(".")
        if moves:
            behind.append((workspace, args, moves))
        print(f"{name}: wasmtime {before['wasmtime']}, " + ("behind" if moves else "the newest this registry builds"))

    line = version_key(locked(ROOT)["wasmtime"])[0]
    try:
        releases, yanked = published_releases()
    except (OSError, ValueError) as error:
        print(f"cannot read the registry's index for wasmtime ({INDEX}): {error}")
        print("this check needs the registry; run it again when the index can be reached")
        return 1
    for workspace in WORKSPACES:
        version = locked(workspace)["wasmtime"]
        if version in yanked:
            print(f"wasmtime {version} in {workspace / 'Cargo.lock'} has been yanked: update it now")
            return 1
    newest_in_line = max((v for v in releases if version_key(v)[0] == line), key=version_key)
    newest = max(releases, key=version_key)
    print(f"published: newest {line}.x is {newest_in_line}; newest overall is {newest}")

    if behind:
        print("\nWasmtime is behind the newest release of its line. Update it with:\n")
        for workspace, args, moves in behind:
            manifest = "" if workspace == ROOT else f" --manifest-path {workspace.relative_to(ROOT)}/Cargo.toml"
            names = sorted({move.split()[1] for move in moves})
            print(f"    cargo update{manifest} " + " ".join(f"-p {name}" for name in names))
            for move in moves:
                print(f"        ({move})")
        print("\nthen run `cargo test` and commit Cargo.lock and fuzz/Cargo.lock.")
        return 1

    current = locked(ROOT)["wasmtime"]
    if version_key(newest_in_line) > version_key(current):
        why = dry_run(ROOT, "-p", "wasmtime", "--precise", newest_in_line)
        reason = [l.strip() for l in why.stderr.splitlines() if l.strip()][:3]
        print(
            f"\nWARNING: wasmtime {newest_in_line} is published, but cargo cannot build it from this registry "
            f"(Cargo.lock stays at {current}):\n    " + "\n    ".join(reason)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
