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

# The OAuth overlay: its ConfigMap, and the Deployment as kustomize would patch
# it (its JSON 6902 patch applied with the jsonpatch package), both validated
# like the rest; the access policy itself is parsed by `warden serve` at start.
if [[ $# -eq 0 ]]; then
    "$venv/bin/pip" install --quiet --disable-pip-version-check "jsonpatch==1.33"
    patched="$venv/deployment-oauth.yaml"
    "$venv/bin/python" - "$here" "$patched" <<'PY'
import os, sys, yaml, jsonpatch
here, out = sys.argv[1], sys.argv[2]
overlay = yaml.safe_load(open(os.path.join(here, "oauth", "kustomization.yaml")))
missing = [r for r in overlay.get("resources", []) if not os.path.exists(os.path.join(here, "oauth", r))]
if overlay.get("kind") != "Kustomization" or missing:
    sys.exit(f"oauth/kustomization.yaml: not a Kustomization, or names missing files: {missing}")
deployment = yaml.safe_load(open(os.path.join(here, "deployment.yaml")))
patch = jsonpatch.JsonPatch(yaml.safe_load(open(os.path.join(here, "oauth", "deployment-patch.yaml"))))
patched = patch.apply(deployment)
args = patched["spec"]["template"]["spec"]["containers"][0]["args"]
assert "--oauth-issuer" in args and "--token-file" not in args, args
# What was pulled under a trust policy is served under the same one.
pull = next(c for c in patched["spec"]["template"]["spec"]["initContainers"] if c["name"] == "pull")["args"]
for served in (args, deployment["spec"]["template"]["spec"]["containers"][0]["args"]):
    assert "--require-signature" in served and "--require-signature" in pull, (served, pull)
    assert served[served.index("--trust") + 1] == pull[pull.index("--trust") + 1], (served, pull)
yaml.safe_dump(patched, open(out, "w"))
print(f"OK: oauth overlay patches the Deployment ({out})")
PY
    files+=("$here/oauth/access-configmap.yaml" "$patched")
fi

echo "kubernetes-validate $TOOL_VERSION, Kubernetes $KUBERNETES_VERSION, strict"
"$venv/bin/kubernetes-validate" --strict --kubernetes-version "$KUBERNETES_VERSION" "${files[@]}"
