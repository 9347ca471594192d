#!/usr/bin/env bash
# Validates every manifest in deploy/kubernetes against the OpenAPI schemas of
# one pinned Kubernetes version, in strict mode (an unknown or misspelt field
# is an error), with kubernetes-validate from PyPI. It ships the schemas, so
# after the install nothing is fetched. Exits non-zero on any invalid manifest.
#
#   bash deploy/kubernetes/validate.sh            # the manifests here
#   bash deploy/kubernetes/validate.sh FILE...    # other files (e.g. a copy)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

TOOL_VERSION=1.37.0       # kubernetes-validate on PyPI
KUBERNETES_VERSION=1.33.0 # the API the manifests are written for (preStop `sleep` needs >= 1.30)

venv="${CARGO_TARGET_DIR:-$repo/target}/kubernetes-validate-$TOOL_VERSION"
if [[ ! -x "$venv/bin/kubernetes-validate" ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$TOOL_VERSION"
fi

if [[ $# -gt 0 ]]; then
    files=("$@")
else
    files=()
    while IFS= read -r file; do files+=("$file"); done < <(find "$here" -maxdepth 1 -name '*.yaml' ! -name kustomization.yaml | sort)
fi

# kustomization.yaml is kustomize's own kind, not an API object: check that it
# parses and names only files that exist.
kustomization="$here/kustomization.yaml"
if [[ $# -eq 0 ]]; then
    "$venv/bin/python" - "$kustomization" <<'PY'
import os, sys, yaml
path = sys.argv[1]
doc = yaml.safe_load(open(path))
missing = [r for r in doc.get("resources", []) if not os.path.exists(os.path.join(os.path.dirname(path), r))]
if doc.get("kind") != "Kustomization" or missing:
    sys.exit(f"{path}: not a Kustomization, or names missing files: {missing}")
print(f"OK: {path} (resources: {', '.join(doc['resources'])})")
PY
fi

echo "kubernetes-validate $TOOL_VERSION, Kubernetes $KUBERNETES_VERSION, strict"
"$venv/bin/kubernetes-validate" --strict --kubernetes-version "$KUBERNETES_VERSION" "${files[@]}"
