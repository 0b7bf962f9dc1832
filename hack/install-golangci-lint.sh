#!/usr/bin/env bash
# golangci-lint, built from the Go module proxy with the local Go toolchain (a prebuilt binary
# cannot be downloaded here, and one built by the same toolchain understands the same language
# version), into a versioned cache directory. Idempotent: a present binary of the right version
# is kept.
#
# Usage: hack/install-golangci-lint.sh [DEST]
#   DEST defaults to ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/golangci-lint-<version>.
#   Prints the binary's path on stdout.
# Env: GOLANGCI_LINT_VERSION (v2.15.0).
set -euo pipefail
GOLANGCI_LINT_VERSION=${GOLANGCI_LINT_VERSION:-v2.15.0}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/golangci-lint-$GOLANGCI_LINT_VERSION}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} CGO_ENABLED=0
mkdir -p "$DEST"; DEST=$(cd "$DEST" && pwd)
if ! "$DEST/golangci-lint" version --short 2>/dev/null | grep -qx "${GOLANGCI_LINT_VERSION#v}"; then
  echo "install-golangci-lint: building golangci-lint $GOLANGCI_LINT_VERSION from the Go module proxy (cached in $DEST)" >&2
  tmp=$(mktemp -d "$DEST/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # The version string comes from ldflags (a module build has no VCS stamp).
  GOBIN=$tmp nice go install -trimpath \
    -ldflags "-s -w -X main.version=${GOLANGCI_LINT_VERSION#v}" \
    "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$GOLANGCI_LINT_VERSION"
  mv "$tmp/golangci-lint" "$DEST/golangci-lint"
fi
echo "$DEST/golangci-lint"
