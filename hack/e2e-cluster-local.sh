#!/usr/bin/env bash
# `make e2e-cluster-local`: bring up the local cluster (hack/local-cluster.sh, LOCAL_CLUSTER_NODES
# nodes, default 2), run the cluster suite (e2e/cluster) against it, and take the cluster down
# again, also when the suite fails (the suite prints the operator log, events, workflows and pod
# logs of a failed run itself).
# E2E_KEEP_CLUSTER=1 leaves the cluster up for a look (then: hack/local-cluster.sh down).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${LOCAL_CLUSTER_OUT:-$ROOT/out/local-cluster}
teardown() {
  local rc=$?
  if [ "${E2E_KEEP_CLUSTER:-}" = 1 ]; then
    echo "e2e-cluster-local: E2E_KEEP_CLUSTER=1: the cluster stays up (KUBECONFIG=$OUT/kubeconfig)" >&2
  else
    bash "$ROOT/hack/local-cluster.sh" down || rc=1
  fi
  exit "$rc"
}
trap teardown EXIT
# the suite's own test images (the SPARQL poller, Prometheus), imported with the project's
eval "$(bash "$ROOT/hack/build-e2e-images.sh" "$ROOT/out/e2e-images")"
eval "$(bash "$ROOT/hack/install-prometheus.sh")"
export E2E_SPARQL_POLL_IMAGE E2E_PROMETHEUS_IMAGE=$PROMETHEUS_IMAGE
# the API server's audit log (hack/local-cluster.sh): the suite fails on any request refused to
# the operator
export E2E_AUDIT_LOG=$OUT/audit.log
start=$(date +%s)
EXTRA_IMAGES="$ROOT/out/e2e-images/sparql-poll.tar $PROMETHEUS_IMAGE_TAR" bash "$ROOT/hack/local-cluster.sh" up
echo "e2e-cluster-local: cluster up in $(($(date +%s) - start)) s" >&2
bash "$ROOT/hack/local-cluster.sh" check
# "a new operator image" for the upgrade scenario: the same image under a second tag
operator=${E2E_OPERATOR_IMAGE:-ghcr.io/rdf-bulkload/rdf-bulkload-operator:0.1.0}
export E2E_OPERATOR_UPGRADE_IMAGE=$operator-upgrade
for n in $(seq "${LOCAL_CLUSTER_NODES:-2}"); do
  bash "$ROOT/hack/local-cluster.sh" ctr -n "$n" images tag --force "$operator" "$E2E_OPERATOR_UPGRADE_IMAGE" >/dev/null
done
# the node is this machine: the suite may SIGKILL a loader process as the OOM killer would
export E2E_NODE_LOCAL=1
# the storage kinds of the local cluster's CSI driver (TestStorageKinds; two nodes)
if [ "${LOCAL_CLUSTER_NODES:-2}" -ge 2 ]; then
  export E2E_LOCAL_STORAGE_CLASS=${E2E_LOCAL_STORAGE_CLASS:-local-hostpath} E2E_LOCAL_SNAPSHOT_CLASS=${E2E_LOCAL_SNAPSHOT_CLASS:-local-hostpath-snapshots}
  export E2E_NETWORK_STORAGE_CLASS=${E2E_NETWORK_STORAGE_CLASS:-network-hostpath} E2E_NETWORK_SNAPSHOT_CLASS=${E2E_NETWORK_SNAPSHOT_CLASS:-network-hostpath-snapshots}
  export E2E_NO_SNAPSHOTS_STORAGE_CLASS=${E2E_NO_SNAPSHOTS_STORAGE_CLASS:-no-snapshots-hostpath}
  export E2E_SIZED_STORAGE_CLASS=${E2E_SIZED_STORAGE_CLASS:-local-hostpath-sized}
  # the suite stops a node (and starts it again) with `$E2E_NODE_CONTROL node-stop|node-start NAME`
  export E2E_NODE_CONTROL="bash $ROOT/hack/local-cluster.sh"
  # MinIO, the operator and the chart's Fuseki stay on node 1: node-lost stops node 2
  export E2E_INFRA_NODE=rdf-bulkload-node-1
fi
KUBECONFIG=$OUT/kubeconfig E2E_IMAGE_PULL_POLICY=Never E2E_MINIO_IMAGE=${E2E_MINIO_IMAGE:-quay.io/minio/minio:RELEASE.local} \
  E2E_STORAGE_CLASS=${E2E_STORAGE_CLASS:-local-hostpath} E2E_SNAPSHOT_CLASS=${E2E_SNAPSHOT_CLASS:-local-hostpath-snapshots} \
  make -C "$ROOT" --no-print-directory e2e-cluster
