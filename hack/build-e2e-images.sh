#!/usr/bin/env bash
# The cluster suite's own test images, as OCI archives (no container engine):
#   OUT/sparql-poll.tar   localhost/rdf-bulkload-e2e/sparql-poll:local — e2e/cluster/sparql-poll,
#                         the SPARQL client that polls Fuseki through its Service during a
#                         handoff (static Go binary, user 65532, nothing else)
# Usage: hack/build-e2e-images.sh [OUT]   (default out/e2e-images). Prints the image refs as
# `export E2E_SPARQL_POLL_IMAGE=...` for eval. Rebuilt when the source is newer than the archive.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-$ROOT/out/e2e-images}
mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
POLL_REF=localhost/rdf-bulkload-e2e/sparql-poll:local
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)}
tar=$OUT/sparql-poll.tar
if [ ! -f "$tar" ] || [ -n "$(find "$ROOT/e2e/cluster/sparql-poll" "$ROOT/e2e/go.mod" -newer "$tar" -print -quit)" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/rdf-bulkload-e2e-images.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/rootfs/etc"
  printf 'nonroot:x:65532:65532:nonroot:/:/sbin/nologin\n' >"$work/rootfs/etc/passwd"
  (cd "$ROOT/e2e" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false \
    go build -trimpath -ldflags=-s -o "$work/rootfs/sparql-poll" ./cluster/sparql-poll)
  python3 "$ROOT/hack/oci-image.py" --rootfs "$work/rootfs" --out "$tar" --ref "$POLL_REF" \
    --entrypoint '["/sparql-poll"]' --user 65532:65532 >&2
fi
echo "export E2E_SPARQL_POLL_IMAGE=$POLL_REF"
