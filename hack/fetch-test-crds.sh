#!/usr/bin/env bash
# Copies the third-party CRDs the operator's envtest suite installs (Argo Workflow,
# VolumeSnapshot) out of their Go module zips (Go module proxy only) into a
# versioned cache directory and prints that directory. Idempotent.
#
# Usage: hack/fetch-test-crds.sh [DEST]
#   DEST defaults to $RDF_BULKLOAD_CACHE/test-crds-argo-<v>-snapshotter-<v>
# The Argo CRD is the schema-less "minimal" one: envtest installs it in seconds,
# and the operator writes typed Workflows anyway.
set -euo pipefail
ARGO_VERSION=${ARGO_VERSION:-v4.0.7}
SNAPSHOTTER_VERSION=${SNAPSHOTTER_VERSION:-v8.7.0}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/test-crds-argo-$ARGO_VERSION-snapshotter-$SNAPSHOTTER_VERSION}
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

moddir() { go mod download -json "$1" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p'; }

if [ -f "$DEST/.complete" ]; then echo "$DEST"; exit 0; fi
mkdir -p "$DEST"
argo=$(moddir "github.com/argoproj/argo-workflows/v4@$ARGO_VERSION")
snap=$(moddir "github.com/kubernetes-csi/external-snapshotter/client/v8@$SNAPSHOTTER_VERSION")
if [ -z "$argo" ] || [ -z "$snap" ]; then echo "fetch-test-crds: cannot download the modules" >&2; exit 1; fi
install -m 0644 "$argo/manifests/base/crds/minimal/argoproj.io_workflows.yaml" "$DEST/"
install -m 0644 "$snap"/config/crd/snapshot.storage.k8s.io_volumesnapshot*.yaml "$DEST/"
touch "$DEST/.complete"
echo "$DEST"
