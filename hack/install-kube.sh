#!/usr/bin/env bash
# Builds the Kubernetes components (kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kube-proxy, kubectl) and etcd from the Go module proxy into one versioned cache
# directory and prints that directory. The same binaries back envtest (KUBEBUILDER_ASSETS needs
# kube-apiserver + etcd) and the local cluster (hack/local-cluster.sh): built once, in one
# `go build` of all the main packages, which shares the compilation of their common packages.
# Idempotent: a directory whose stamp matches is kept, so a warm run takes < 1 s.
# Cold: ~12-16 min for the Kubernetes components, etcd ~2-3 min on 2 cores.
#
# Usage: hack/install-kube.sh [DEST]
#   DEST defaults to $RDF_BULKLOAD_CACHE/kube-<k8s>-etcd-<etcd>
# Env:   K8S_VERSION (v1.37.1; the proxy refuses some patch versions, e.g. v1.37.2)
#        ETCD_VERSION (v3.7.3)
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/kube-${K8S_VERSION#v}-etcd-${ETCD_VERSION#v}}
WORK=$CACHE/build/kube-${K8S_VERSION#v}
COMPONENTS="kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
mkdir -p "$DEST" "$WORK"
DEST=$(cd "$DEST" && pwd)
log() { echo "install-kube: $*" >&2; }

minor=$(echo "$K8S_VERSION" | cut -d. -f2)
patch=$(echo "$K8S_VERSION" | cut -d. -f3)

stamp="$K8S_VERSION $COMPONENTS"
if [ "$(cat "$DEST/.kube-stamp" 2>/dev/null)" = "$stamp" ]; then
  log "Kubernetes $K8S_VERSION components present"
else
  m="$WORK/module"; mkdir -p "$m"; cd "$m"
  if ! [ -f go.sum ]; then
    kdir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
    [ -n "$kdir" ] || { log "cannot download k8s.io/kubernetes@$K8S_VERSION"; exit 1; }
    # k8s.io/kubernetes points its staging modules at ./staging with replace directives, which a
    # consumer module cannot see: map each to the published k8s.io/<name> v0.<minor>.<patch>.
    {
      printf 'module kubebuild\n\ngo 1.26.0\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
      grep -E '=> \./staging/src/' "$kdir/go.mod" | awk -v v="v0.$minor.$patch" '{print "\t" $1 " => " $1 " " v}'
      printf ')\n'
    } > go.mod.new
    mv go.mod.new go.mod
    {
      printf '//go:build tools\n\npackage tools\n\nimport (\n'
      for c in $COMPONENTS; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
      printf ')\n'
    } > tools.go
    go mod tidy
  fi
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  log "building $COMPONENTS $K8S_VERSION (cold: 12-16 min on 2 cores)"
  tmp=$(mktemp -d "$DEST/.build.XXXXXX")
  pkgs=(); for c in $COMPONENTS; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  nice go build -trimpath -ldflags "$ld" -o "$tmp/" "${pkgs[@]}"
  for c in $COMPONENTS; do mv "$tmp/$c" "$DEST/$c"; done
  rmdir "$tmp"
  echo "$stamp" > "$DEST/.kube-stamp"
fi

# (the version is read whole first: `grep -q` closing the pipe early fails it under pipefail)
etcd_version=$("$DEST/etcd" --version 2>/dev/null || true)
if grep -q "etcd Version: ${ETCD_VERSION#v}$" <<<"$etcd_version"; then
  log "etcd $ETCD_VERSION present"
else
  m="$WORK/etcd-$ETCD_VERSION"; mkdir -p "$m"; cd "$m"
  # The etcd server module has replace directives, so `go install` refuses it; build its main
  # package from a module that requires it instead.
  if ! [ -f go.sum ]; then
    printf 'module etcdbuild\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' > tools.go
    go mod tidy
  fi
  log "building etcd $ETCD_VERSION (cold: 2-3 min)"
  nice go build -trimpath -ldflags "-s -w" -o "$DEST/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "$DEST/etcd.tmp" "$DEST/etcd"
fi
echo "$DEST"
