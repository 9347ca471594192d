#!/usr/bin/env python3
"""Fails when a relative link in the repository's Markdown points at a file
that does not exist, or at a heading that the target file does not have.

The README and docs/ link into each other's sections by anchor (the README's
Performance section into docs/performance.md, for one); a renamed heading or a
moved section would otherwise leave links that lead nowhere. Anchors are made
as GitHub makes them: the heading's text in lower case, punctuation but hyphens
and underscores dropped, spaces as hyphens, and `-1`, `-2`… for repeats.
Links to other sites are not checked (CI stays off the network for this).

usage: check-links.py [FILE.md ...]   (default: every Markdown file git tracks,
                                       but the vendored crate's)
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#+)\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"```.*?```", re.S)


def slug(heading: str) -> str:
    text = heading.replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: str, cache: dict) -> set:
    if path not in cache:
        found, seen, fenced = set(), {}, False
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                if line.startswith("```"):
                    fenced = not fenced
                match = None if fenced else HEADING.match(line)
                if match:
                    name = slug(match.group(2))
                    repeat = seen.get(name, 0)
                    seen[name] = repeat + 1
                    found.add(name if repeat == 0 else f"{name}-{repeat}")
        cache[path] = found
    return cache[path]


def broken_links(files: list) -> list:
    cache, broken = {}, []
    for source in files:
        with open(source, encoding="utf-8") as f:
            text = FENCE.sub("", f.read())
        for match in LINK.finditer(text):
            target = match.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto: and the like
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(source), path)) if path else source
            if not os.path.exists(resolved):
                broken.append(f"{source}: `{target}`: no file {resolved}")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved, cache):
                broken.append(f"{source}: `{target}`: {resolved} has no heading whose anchor is #{anchor}")
    return broken


def main() -> int:
    files = sys.argv[1:]
    if not files:
        tracked = subprocess.run(["git", "ls-files", "*.md"], capture_output=True, text=True, check=True)
        files = [f for f in tracked.stdout.split() if not f.startswith("vendor/wasmtime/")]
    broken = broken_links(files)
    for line in broken:
        print(line, file=sys.stderr)
    print(f"{len(files)} Markdown files, {len(broken)} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
