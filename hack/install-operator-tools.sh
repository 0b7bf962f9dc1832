#!/usr/bin/env bash
# Installs the operator's code generators from the Go module proxy into a versioned cache
# directory and prints that directory. Idempotent: present binaries are kept.
#
# Usage: hack/install-operator-tools.sh [DEST]
#   DEST defaults to $RDF_BULKLOAD_CACHE/operator-tools-<controller-tools version>
# Env:   CONTROLLER_TOOLS_VERSION (v0.23.0), KUSTOMIZE_VERSION (v5.8.2; v5.8.3 needs Go 1.27)
set -euo pipefail
CONTROLLER_TOOLS_VERSION=${CONTROLLER_TOOLS_VERSION:-v0.23.0}
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.8.2}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/operator-tools-$CONTROLLER_TOOLS_VERSION}
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)

if "$DEST/controller-gen" --version 2>/dev/null | grep -q "${CONTROLLER_TOOLS_VERSION}$"; then
  echo "install-operator-tools: controller-gen $CONTROLLER_TOOLS_VERSION present" >&2
else
  echo "install-operator-tools: building controller-gen $CONTROLLER_TOOLS_VERSION" >&2
  GOBIN=$DEST nice go install -trimpath -ldflags "-s -w" \
    "sigs.k8s.io/controller-tools/cmd/controller-gen@$CONTROLLER_TOOLS_VERSION"
fi
if "$DEST/kustomize" version 2>/dev/null | grep -q "${KUSTOMIZE_VERSION}$"; then
  echo "install-operator-tools: kustomize $KUSTOMIZE_VERSION present" >&2
else
  echo "install-operator-tools: building kustomize $KUSTOMIZE_VERSION" >&2
  GOBIN=$DEST nice go install -trimpath -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$KUSTOMIZE_VERSION" \
    "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION"
fi
echo "$DEST"
