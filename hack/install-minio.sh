#!/usr/bin/env bash
# Real MinIO server + mc client, built from the Go module proxy (no other downloads).
# MinIO's go.mod has no replace directives, so `go install module@version` works; MinIO tags
# (RELEASE.2025-...) are not semver, so the proxy serves pseudo-versions, pinned here.
#
# Usage: hack/install-minio.sh [DEST]
#   DEST defaults to ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/minio-<version>.
#   Idempotent: a second run only prints the paths. Prints `export RDF_BULKLOAD_MINIO=...`.
#   mc is built beside minio (e2e/local uses it to upload).
# Cold cost on 2 cores: ~3 min (minio) + ~40 s (mc). MinIO is AGPLv3, used only as a test service.
set -euo pipefail
MINIO_VERSION=${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}
MC_VERSION=${MC_VERSION:-v0.0.0-20250313080218-cf909e1063a9}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/minio-$MINIO_VERSION}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} CGO_ENABLED=0
mkdir -p "$DEST"; DEST=$(cd "$DEST" && pwd)

build() { # build <name> <module@version>: go install into a temp dir, then move into place atomically
  local name=$1 mod=$2 tmp
  [ -x "$DEST/$name" ] && return 0
  echo "building $mod (cached afterwards in $DEST)" >&2
  tmp=$(mktemp -d "$DEST/.build.XXXXXX")
  GOBIN=$tmp nice go install -trimpath -ldflags "-s -w" "$mod"
  mv "$tmp/$name" "$DEST/$name"; rmdir "$tmp"
}
build minio "github.com/minio/minio@$MINIO_VERSION"
build mc "github.com/minio/mc@$MC_VERSION"
"$DEST/minio" --version | head -1 >&2
echo "export RDF_BULKLOAD_MINIO=$DEST/minio"
