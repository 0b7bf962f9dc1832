#!/usr/bin/env bash
# helm, built from the Go module proxy (the recipe of shared/tools/k8s/install-tools.sh), into a
# versioned cache directory. Idempotent: a present binary of the right version is kept.
#
# Usage: hack/install-helm.sh [DEST]
#   DEST defaults to ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/helm-<version>.
#   Prints the binary's path on stdout. Cold cost on 2 cores: ~2 min.
# Env: HELM_VERSION (v3.22.0). The version string comes from ldflags (without it helm
#      reports its module default).
set -euo pipefail
HELM_VERSION=${HELM_VERSION:-v3.22.0}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/helm-$HELM_VERSION}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} CGO_ENABLED=0
mkdir -p "$DEST"; DEST=$(cd "$DEST" && pwd)
if ! "$DEST/helm" version --short 2>/dev/null | grep -q "^${HELM_VERSION}"; then
  echo "install-helm: building helm $HELM_VERSION from the Go module proxy (cached in $DEST)" >&2
  tmp=$(mktemp -d "$DEST/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  GOBIN=$tmp nice go install -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
  mv "$tmp/helm" "$DEST/helm"
fi
echo "$DEST/helm"
