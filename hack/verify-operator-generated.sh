#!/usr/bin/env bash
# Fails when the operator's generated files (CRD, RBAC role, deepcopy) do not match
# what controller-gen makes from the current sources. It compares against the
# working tree, not git, so it also works while editing; the files are left
# regenerated. Usage: hack/verify-operator-generated.sh  (run by `make verify`)
set -euo pipefail
cd "$(dirname "$0")/.."
generated=(operator/api/v1alpha1/zz_generated.deepcopy.go config/crd/bases config/rbac/role.yaml)
before=$(mktemp -d)
trap 'rm -rf "$before"' EXIT
for p in "${generated[@]}"; do
  mkdir -p "$before/$(dirname "$p")"
  if [ -e "$p" ]; then cp -r "$p" "$before/$p"; fi
done
make --no-print-directory -s generate manifests >/dev/null
stale=0
for p in "${generated[@]}"; do
  if ! diff -r -u "$before/$p" "$p" >&2 2>/dev/null; then
    diff -r -u "$before/$p" "$p" >&2 || true
    stale=1
  fi
done
if [ "$stale" = 1 ]; then
  echo "verify: generated files were stale (now regenerated; review and commit them)" >&2
  exit 1
fi
echo "verify: generated files are up to date"
