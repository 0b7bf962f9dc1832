#!/usr/bin/env bash
# Everything a single-node test Kubernetes cluster on this machine needs besides the Kubernetes
# binaries (hack/install-kube.sh) and a CSI driver: Debian packages for the node (containerd,
# runc, CNI plugins, ...), the cluster add-ons built from the Go module proxy (external-snapshotter,
# external-provisioner, external-resizer, a CoreDNS without forwarding, Argo Workflows), Argo's install manifests,
# and the images the node's containerd needs, as archives for `ctr -n k8s.io images import`
# (no container engine, no registry):
#
#   registry.k8s.io/pause:3.10                      /pause (k8s.io/kubernetes build/pause/linux/pause.c,
#                                                   gcc -static); user 65535:65535
#   quay.io/argoproj/argoexec:<argo>                /bin/argoexec (static); entrypoint argoexec; user unset
#                                                   (root), as upstream's image; + CA bundle, /etc/mime.types,
#                                                   /etc/ssh/ssh_known_hosts, /etc/nsswitch.conf
#   quay.io/argoproj/argoexec:<argo>-nonroot        the same with user 8737 (upstream's -nonroot variant)
#   quay.io/argoproj/workflow-controller:<argo>     /bin/workflow-controller; entrypoint workflow-controller;
#                                                   user 8737
#   quay.io/minio/minio:RELEASE.local               /usr/bin/minio + mc (hack/install-minio.sh); entrypoint
#                                                   /usr/bin/docker-entrypoint.sh, cmd minio (as upstream's
#                                                   image; busybox sh for the script); user 65532; works with
#                                                   a read-only root and emptyDirs at /data and /tmp
#
# Every piece is cached in a directory keyed by its version under $RDF_BULKLOAD_CACHE (default
# ~/.cache/rdf-bulkload) with a stamp; a warm run only checks the stamps (~1 s) and prints:
#   export RDF_BULKLOAD_CLUSTER_BIN=DIR        coredns csi-provisioner csi-resizer csi-snapshotter snapshot-controller
#                                              workflow-controller argoexec pause (symlinks into the cache)
#   export RDF_BULKLOAD_CLUSTER_IMAGES=DIR     pause.tar argoexec.tar argoexec-nonroot.tar
#                                              workflow-controller.tar minio.tar
#   export RDF_BULKLOAD_ARGO_MANIFESTS=DIR     install-controller.yaml: full CRDs + workflow-controller +
#                                              its RBAC, namespace argo, images pinned (apply with
#                                              --server-side into an existing namespace argo);
#                                              install.yaml: upstream's cluster install, which also has
#                                              argo-server (its image, quay.io/argoproj/argocli, is not
#                                              built); upstream/: the module's manifests/ tree
#                                              (base/crds/{full,minimal}, quick-start, ...)
#   export RDF_BULKLOAD_CNI_BIN=/usr/lib/cni, RDF_BULKLOAD_MINIO=..., and the image refs
#     (RDF_BULKLOAD_{PAUSE,ARGOEXEC,WORKFLOW_CONTROLLER,MINIO}_IMAGE)
# Each Go project is one throwaway module and one `go build` of all its main packages; modules
# with replace directives (external-snapshotter, external-provisioner, external-resizer) get them
# repeated there, a local `./dir` replacement becoming the published module at the same release.
# external-provisioner
# and external-resizer pin k8s.io/* to v0.33.0 and external-snapshotter to v0.37.0, so the
# snapshotter cannot share a module with them.
# CoreDNS is a custom main (CoreDNS's documented way to choose plugins at compile time) with only
# the plugins in $COREDNS_PLUGINS, in plugin.cfg order: no `forward`, so it answers only for the
# zones of its Corefile.
#
# Cold cost, measured on 2 cores with an empty Go build cache (modules already downloaded):
#   external-snapshotter 5 min 40 s; external-provisioner 2 min 15 s and CoreDNS 1 min 40 s (both
#   reuse packages the snapshotter build compiled); Argo (workflow-controller + argoexec + kustomize
#   for the manifests) 4 min 30 s; pause 1 s; Argo images 11 s; MinIO (hack/install-minio.sh) + its
#   image 2 min 40 s. Total 17 min; + Debian packages 35 s; + module downloads (~3 GB unpacked, much
#   of it shared with hack/install-kube.sh). Go build cache grows by ~6 GB, this cache by ~0.8 GB.
#   With install-kube.sh compiling on the same cores, external-snapshotter alone took 11 min.
#   Outputs are reproducible: two cold runs gave byte-identical binaries and image archives.
#
# Usage: hack/install-cluster-components.sh [--check]
#   --check: build/install nothing; list what is missing on stderr, exit 1 if anything is.
# Env:   SNAPSHOTTER_VERSION (v8.7.0), PROVISIONER_VERSION (v5.3.0), RESIZER_VERSION (v1.14.0), COREDNS_VERSION (v1.15.0; the
#        proxy serves v1.14.6-v1.15.0), ARGO_VERSION (default: the version in operator/go.mod),
#        K8S_VERSION (v1.37.1: source of pause.c), MINIO_VERSION/MC_VERSION (see install-minio.sh)
# Needs: go, python3, root (or sudo) for apt-get. Debian packages are installed only when missing;
# `apt-get update` runs only when a package has no candidate or an install fails. Services are not
# started by the install (the cluster runs its own containerd).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
SNAPSHOTTER_VERSION=${SNAPSHOTTER_VERSION:-v8.7.0}
PROVISIONER_VERSION=${PROVISIONER_VERSION:-v5.3.0}
RESIZER_VERSION=${RESIZER_VERSION:-v1.14.0}
COREDNS_VERSION=${COREDNS_VERSION:-v1.15.0}
ARGO_VERSION=${ARGO_VERSION:-$(awk '$1 == "github.com/argoproj/argo-workflows/v4" {print $2}' "$ROOT/operator/go.mod")}
K8S_VERSION=${K8S_VERSION:-v1.37.1}
COREDNS_PLUGINS=${COREDNS_PLUGINS:-reload bind ready health errors log loadbalance cache kubernetes loop}
PAUSE_REF=${PAUSE_IMAGE:-registry.k8s.io/pause:3.10}
MINIO_REF=${MINIO_IMAGE:-quay.io/minio/minio:RELEASE.local}
ARGOEXEC_REF=quay.io/argoproj/argoexec:$ARGO_VERSION
CONTROLLER_REF=quay.io/argoproj/workflow-controller:$ARGO_VERSION
DEBS="containerd runc containernetworking-plugins iptables busybox-static gcc libc6-dev ca-certificates media-types e2fsprogs"
OPTIONAL_DEBS="conntrack"
IMAGE_RECIPE=1   # bump when the image contents below change
BUSYBOX_APPLETS="sh mkdir ls cat cp mv rm ln env sleep id chroot wget"
CHECK=
case "${1:-}" in
  --check) CHECK=1 ;;
  "") ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
[ -n "$ARGO_VERSION" ] || { echo "no argo-workflows/v4 version in operator/go.mod" >&2; exit 1; }

export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0
# the version lists of some modules are 403 (argo-workflows, external-provisioner): serve what was
# downloaded from the local module cache first
GOPROXY="file://$(go env GOMODCACHE)/cache/download,$(go env GOPROXY)"
export GOPROXY
mkdir -p "$CACHE"; CACHE=$(cd "$CACHE" && pwd)
log() { echo "install-cluster-components: $*" >&2; }
missing=()
t0=$SECONDS
# need NAME DIR STAMP: true if DIR/.stamp is STAMP; otherwise, with --check, records NAME as missing
need() {
  [ "$(cat "$2/.stamp" 2>/dev/null)" = "$3" ] && return 1
  [ -z "$CHECK" ] && return 0
  missing+=("$1"); return 1
}
done_stamp() { echo "$2" > "$1/.stamp"; log "$3 done in $((SECONDS - $4)) s"; }
moddir() { # moddir MODULE VERSION: download, print the module's directory
  local d
  d=$(go mod download -json "$1@$2" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -n "$d" ] || { log "cannot download $1@$2"; exit 1; }
  echo "$d"
}
# gomodule [--src SRCDIR] DIR MODULE VERSION IMPORT...: a throwaway module in DIR that requires
# MODULE@VERSION, repeats MODULE's replace directives, and imports the given packages from
# tools.go; --src: build MODULE from SRCDIR (a patched copy of its zip) instead
gomodule() {
  local src=
  if [ "$1" = --src ]; then src=$2; shift 2; fi
  local dir=$1 mod=$2 ver=$3 mdir; shift 3
  [ -f "$dir/go.sum" ] && return 0
  mdir=$(moddir "$mod" "$ver")
  mkdir -p "$dir"
  local name; name=$(basename "$dir"); name=${name%%-v[0-9]*}   # e.g. coredns: names a built main package
  printf 'module throwaway/%s\n\ngo 1.26.0\n\nrequire %s %s\n' "$name" "$mod" "$ver" > "$dir/go.mod"
  local -a reps
  mapfile -t reps < <(go mod edit -json "$mdir/go.mod" | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("Replace") or []:
    old, new = r["Old"], r["New"]
    lhs = old["Path"] + ("@" + old["Version"] if old.get("Version") else "")
    if new.get("Version"):
        print("-replace=%s=%s@%s" % (lhs, new["Path"], new["Version"]))
    else:   # a directory inside the module: the published module of the same release
        print("-replace=%s=%s@%s" % (lhs, old["Path"], sys.argv[1]))
' "$ver")
  [ -z "$src" ] || reps+=("-replace=$mod=$src")
  [ "${#reps[@]}" -eq 0 ] || (cd "$dir" && go mod edit "${reps[@]}")
  if [ "$#" -gt 0 ]; then
    { printf '//go:build tools\n\npackage tools\n\nimport (\n'; printf '\t_ "%s"\n' "$@"; printf ')\n'; } > "$dir/tools.go"
  fi
  (cd "$dir" && go mod tidy) || { rm -f "$dir/go.sum"; exit 1; }
}
gobuild() { # gobuild MODULEDIR OUTDIR LDFLAGS PKG...: one build of all PKGs, moved into OUTDIR at the end
  local m=$1 out=$2 ld=$3 tmp; shift 3
  tmp=$(mktemp -d "$out/.build.XXXXXX")
  (cd "$m" && nice go build -trimpath -ldflags "-s -w $ld" -o "$tmp/" "$@") || { rm -rf "$tmp"; exit 1; }
  local f; for f in "$tmp"/*; do mv -f "$f" "$out/"; done
  rmdir "$tmp"
}

# ---------------------------------------------------------------- Debian packages
deb_present() {
  case $1 in
    containerd) command -v containerd >/dev/null && command -v ctr >/dev/null ;;
    runc|iptables|conntrack|gcc) command -v "$1" >/dev/null ;;
    containernetworking-plugins) [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] ;;
    busybox-static) [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1 ;;
    *) [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = installed ] ;;
  esac
}
has_candidate() {
  local c; c=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
  [ -n "$c" ] && [ "$c" != "(none)" ]
}
install_debs() {
  local -a need_debs=() opt=() sudo=() p
  for p in $DEBS; do deb_present "$p" || need_debs+=("$p"); done
  for p in $OPTIONAL_DEBS; do deb_present "$p" || opt+=("$p"); done
  if [ $((${#need_debs[@]} + ${#opt[@]})) -eq 0 ]; then log "Debian packages present"; return; fi
  if [ -n "$CHECK" ]; then
    [ "${#need_debs[@]}" -eq 0 ] || missing+=("debian:${need_debs[*]}")
    [ "${#opt[@]}" -eq 0 ] || log "optional Debian packages missing: ${opt[*]}"
    return
  fi
  local t=$SECONDS updated=
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  for p in "${need_debs[@]}" "${opt[@]}"; do
    has_candidate "$p" && continue
    log "apt knows no candidate for $p: apt-get update"
    "${sudo[@]}" apt-get update -qq >&2; updated=1; break
  done
  local -a avail=("${need_debs[@]}")
  for p in "${opt[@]}"; do
    if has_candidate "$p"; then avail+=("$p"); else log "optional package $p unavailable, skipped"; fi
  done
  # keep package scripts from starting services (containerd): the cluster starts its own
  local policy=/usr/sbin/policy-rc.d own_policy=
  if ! [ -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"; own_policy=1
  fi
  local rc=0
  aptinstall() { "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; }
  log "apt-get install ${avail[*]}"
  if ! aptinstall "${avail[@]}"; then
    if [ -z "$updated" ]; then
      log "install failed: apt-get update and retry"
      "${sudo[@]}" apt-get update -qq >&2
      aptinstall "${avail[@]}" || rc=$?
    else
      rc=1
    fi
  fi
  [ -z "$own_policy" ] || "${sudo[@]}" rm -f "$policy"
  [ "$rc" = 0 ] || { log "apt-get install failed"; exit 1; }
  for p in $DEBS; do deb_present "$p" || { log "$p still missing after apt-get install"; exit 1; }; done
  log "Debian packages installed in $((SECONDS - t)) s"
}

# ---------------------------------------------------------------- external-snapshotter
SNAP_DIR=$CACHE/external-snapshotter-${SNAPSHOTTER_VERSION#v}
build_snapshotter() {
  local stamp="$SNAPSHOTTER_VERSION snapshot-controller csi-snapshotter" t=$SECONDS
  need external-snapshotter "$SNAP_DIR" "$stamp" || return 0
  local mod=github.com/kubernetes-csi/external-snapshotter/v8 m=$CACHE/build/external-snapshotter-$SNAPSHOTTER_VERSION
  mkdir -p "$SNAP_DIR"
  gomodule "$m" "$mod" "$SNAPSHOTTER_VERSION" "$mod/cmd/snapshot-controller" "$mod/cmd/csi-snapshotter"
  log "building snapshot-controller, csi-snapshotter $SNAPSHOTTER_VERSION (cold: ~6 min)"
  gobuild "$m" "$SNAP_DIR" "-X main.version=$SNAPSHOTTER_VERSION" "$mod/cmd/snapshot-controller" "$mod/cmd/csi-snapshotter"
  done_stamp "$SNAP_DIR" "$stamp" "external-snapshotter" "$t"
}

# ---------------------------------------------------------------- external-provisioner
PROV_DIR=$CACHE/external-provisioner-${PROVISIONER_VERSION#v}
build_provisioner() {
  local stamp="$PROVISIONER_VERSION csi-provisioner" t=$SECONDS
  need external-provisioner "$PROV_DIR" "$stamp" || return 0
  local mod=github.com/kubernetes-csi/external-provisioner/v5 m=$CACHE/build/external-provisioner-$PROVISIONER_VERSION
  mkdir -p "$PROV_DIR"
  gomodule "$m" "$mod" "$PROVISIONER_VERSION" "$mod/cmd/csi-provisioner"
  log "building csi-provisioner $PROVISIONER_VERSION (cold: ~2.5 min)"
  gobuild "$m" "$PROV_DIR" "-X main.version=$PROVISIONER_VERSION" "$mod/cmd/csi-provisioner"
  done_stamp "$PROV_DIR" "$stamp" "external-provisioner" "$t"
}

# ---------------------------------------------------------------- external-resizer
RESIZER_DIR=$CACHE/external-resizer-${RESIZER_VERSION#v}
build_resizer() {
  local stamp="$RESIZER_VERSION csi-resizer" t=$SECONDS
  need external-resizer "$RESIZER_DIR" "$stamp" || return 0
  local mod=github.com/kubernetes-csi/external-resizer m=$CACHE/build/external-resizer-$RESIZER_VERSION
  mkdir -p "$RESIZER_DIR"
  gomodule "$m" "$mod" "$RESIZER_VERSION" "$mod/cmd/csi-resizer"
  log "building csi-resizer $RESIZER_VERSION (cold: ~1 min after external-provisioner)"
  gobuild "$m" "$RESIZER_DIR" "-X main.version=$RESIZER_VERSION" "$mod/cmd/csi-resizer"
  done_stamp "$RESIZER_DIR" "$stamp" "external-resizer" "$t"
}

# ---------------------------------------------------------------- CoreDNS
COREDNS_DIR=$CACHE/coredns-${COREDNS_VERSION#v}
build_coredns() {
  local stamp="$COREDNS_VERSION $COREDNS_PLUGINS" t=$SECONDS
  need coredns "$COREDNS_DIR" "$stamp" || return 0
  local mod=github.com/coredns/coredns m mdir
  m=$CACHE/build/coredns-$COREDNS_VERSION-$(echo "$COREDNS_PLUGINS" | sha256sum | cut -c1-8)
  mdir=$(moddir "$mod" "$COREDNS_VERSION")
  mkdir -p "$COREDNS_DIR" "$m"
  if ! [ -f "$m/go.sum" ]; then
    # the wanted plugins in plugin.cfg's order (the order they run in); NAME:PKG lines, PKG either a
    # directory under plugin/ or a full import path
    local cfg; cfg=$(grep -v '^#' "$mdir/plugin.cfg" | awk -F: -v want=" $COREDNS_PLUGINS " 'index(want, " " $1 " ")')
    [ "$(echo "$cfg" | wc -l)" -eq "$(echo "$COREDNS_PLUGINS" | wc -w)" ] || { log "plugins not all in plugin.cfg: $COREDNS_PLUGINS"; exit 1; }
    {
      printf '// Command coredns is CoreDNS %s with only these plugins (written by\n' "$COREDNS_VERSION"
      printf '// hack/install-cluster-components.sh): %s.\npackage main\n\nimport (\n' "$COREDNS_PLUGINS"
      printf '\t"github.com/coredns/coredns/core/dnsserver"\n\t"github.com/coredns/coredns/coremain"\n\n'
      echo "$cfg" | awk -F: '{ p = ($2 ~ /\//) ? $2 : "github.com/coredns/coredns/plugin/" $2; print "\t_ \"" p "\"" }'
      printf ')\n\n// directives in execution order, a subset of plugin.cfg\nvar directives = []string{\n'
      echo "$cfg" | awk -F: '{ print "\t\"" $1 "\"," }'
      printf '}\n\nfunc main() {\n\tdnsserver.Directives = directives\n\tcoremain.Run()\n}\n'
    } > "$m/main.go"
    gofmt -w "$m/main.go"
    gomodule "$m" "$mod" "$COREDNS_VERSION"
  fi
  log "building coredns $COREDNS_VERSION with $COREDNS_PLUGINS (cold: ~2 min)"
  gobuild "$m" "$COREDNS_DIR" "-X github.com/coredns/coredns/coremain.GitCommit=custom" .
  done_stamp "$COREDNS_DIR" "$stamp" "coredns" "$t"
}

# ---------------------------------------------------------------- Argo Workflows
ARGO_DIR=$CACHE/argo-workflows-${ARGO_VERSION#v}
ARGO_MOD=github.com/argoproj/argo-workflows/v4
ARGO_ZIP_SYMLINKS="workflow/executor/osspecific/signal_linux.go=signal_darwin.go"   # PATH=TARGET
build_argo() {
  local stamp="$ARGO_VERSION workflow-controller argoexec manifests" t=$SECONDS
  need argo-workflows "$ARGO_DIR" "$stamp" || return 0
  local m=$CACHE/build/argo-workflows-$ARGO_VERSION adir info commit date ld
  local kz=sigs.k8s.io/kustomize/kustomize/v5   # in argo's module graph: renders the manifests
  adir=$(moddir "$ARGO_MOD" "$ARGO_VERSION")
  mkdir -p "$ARGO_DIR/bin" "$ARGO_DIR/tools" "$m"
  # Module zips leave out symlinks, and argoexec's Linux signal handling is one in the repository
  # (workflow/executor/osspecific/signal_linux.go -> signal_darwin.go): without it argoexec fails
  # with "undefined: Setpgid". Build from a copy of the module with the link put back.
  if ! [ -f "$m/src/go.mod" ]; then
    rm -rf "$m/src.tmp"; cp -r "$adir" "$m/src.tmp"; chmod -R u+w "$m/src.tmp"
    rm -rf "$m/src.tmp/manifests" "$m/src.tmp/docs"
    local l
    for l in $ARGO_ZIP_SYMLINKS; do
      [ -e "$m/src.tmp/${l%%=*}" ] || ln -s "${l#*=}" "$m/src.tmp/${l%%=*}"
    done
    mv "$m/src.tmp" "$m/src"
  fi
  gomodule --src ./src "$m" "$ARGO_MOD" "$ARGO_VERSION" "$ARGO_MOD/cmd/workflow-controller" "$ARGO_MOD/cmd/argoexec" "$kz"
  # the Makefile's version stamps; the commit comes from the proxy's .info. They make the
  # controller's default executor image quay.io/argoproj/argoexec:$ARGO_VERSION.
  info=$(go mod download -json "$ARGO_MOD@$ARGO_VERSION" | sed -n 's/^\s*"Info": "\(.*\)",$/\1/p')
  commit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("Origin", {}).get("Hash", ""))' "$info")
  date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' "$info")
  ld="-X $ARGO_MOD.version=$ARGO_VERSION -X $ARGO_MOD.buildDate=$date -X $ARGO_MOD.gitTag=$ARGO_VERSION"
  [ -z "$commit" ] || ld="$ld -X $ARGO_MOD.gitCommit=$commit -X $ARGO_MOD.gitTreeState=clean"
  log "building workflow-controller, argoexec $ARGO_VERSION and kustomize (cold: ~4.5 min)"
  gobuild "$m" "$ARGO_DIR/bin" "$ld" "$ARGO_MOD/cmd/workflow-controller" "$ARGO_MOD/cmd/argoexec" "$kz"
  mv -f "$ARGO_DIR/bin/kustomize" "$ARGO_DIR/tools/kustomize"

  # manifests: the module's manifests/ tree (without the two large database quick-starts) and two
  # renderings with the images pinned to this version (upstream's files say :latest)
  local man=$ARGO_DIR/manifests
  rm -rf "$man"; mkdir -p "$man"
  cp -r "$adir/manifests" "$man/upstream"; chmod -R u+w "$man/upstream"
  rm -f "$man/upstream/quick-start-mysql.yaml" "$man/upstream/quick-start-postgres.yaml"
  local images
  images=$(printf 'images:\n- name: quay.io/argoproj/workflow-controller\n  newTag: %s\n- name: quay.io/argoproj/argocli\n  newTag: %s\n' "$ARGO_VERSION" "$ARGO_VERSION")
  mkdir -p "$man/overlays/install" "$man/overlays/controller"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../../upstream/cluster-install\n%s\n' "$images" \
    > "$man/overlays/install/kustomization.yaml"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: argo\nresources:\n- ../../upstream/base/crds/full\n- ../../upstream/base/workflow-controller\n- ../../upstream/cluster-install-no-crds/workflow-controller-rbac\n%s\n' "$images" \
    > "$man/overlays/controller/kustomization.yaml"
  "$ARGO_DIR/tools/kustomize" build "$man/overlays/install" > "$man/install.yaml"
  "$ARGO_DIR/tools/kustomize" build "$man/overlays/controller" > "$man/install-controller.yaml"
  done_stamp "$ARGO_DIR" "$stamp" "argo-workflows" "$t"
}

# ---------------------------------------------------------------- pause
PAUSE_DIR=$CACHE/pause-k8s-${K8S_VERSION#v}
build_pause() {
  local stamp="$K8S_VERSION $PAUSE_REF $IMAGE_RECIPE" t=$SECONDS
  need pause "$PAUSE_DIR" "$stamp" || return 0
  local kdir tag w
  kdir=$(moddir k8s.io/kubernetes "$K8S_VERSION")
  tag=$(sed -n 's/^TAG ?= *//p' "$kdir/build/pause/Makefile")
  mkdir -p "$PAUSE_DIR"; w=$(mktemp -d "$PAUSE_DIR/.build.XXXXXX")
  mkdir -p "$w/rootfs"
  nice gcc -O2 -Wall -static -s -DVERSION="v$tag-k8s-$K8S_VERSION" -o "$w/rootfs/pause" "$kdir/build/pause/linux/pause.c"
  # upstream's image: FROM scratch, /pause, USER 65535:65535, ENTRYPOINT ["/pause"]
  nice python3 "$ROOT/hack/oci-image.py" --rootfs "$w/rootfs" --out "$PAUSE_DIR/pause.tar" --ref "$PAUSE_REF" \
    --entrypoint '["/pause"]' --user 65535:65535 --label "org.opencontainers.image.version=$tag" >&2
  mv -f "$w/rootfs/pause" "$PAUSE_DIR/pause"; rm -rf "$w"
  done_stamp "$PAUSE_DIR" "$stamp" "pause" "$t"
}

# ---------------------------------------------------------------- images
# base_rootfs DIR: what a distroless static base has: passwd/group (root, nobody, nonroot 65532),
# CA bundle (from the installed ca-certificates), /tmp, /home/nonroot
base_rootfs() {
  local r=$1
  mkdir -p "$r/etc/ssl/certs" "$r/tmp" "$r/home/nonroot" "$r/root" "$r/usr/share/rdf-bulkload"
  chmod 1777 "$r/tmp"; chmod 700 "$r/root"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\ntty:x:5:\nstaff:x:50:\nnonroot:x:65532:\n' > "$r/etc/group"
  find /usr/share/ca-certificates -name '*.crt' | LC_ALL=C sort | xargs cat > "$r/etc/ssl/certs/ca-certificates.crt"
  dpkg-query -W -f='${Package} ${Version}\n' ca-certificates > "$r/usr/share/rdf-bulkload/debian-packages.txt"
}
STATIC_PATH=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CERT_ENV=SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
ARGO_IMAGES=$ARGO_DIR/images
build_argo_images() {
  local stamp t=$SECONDS
  stamp="$ARGO_VERSION $IMAGE_RECIPE $(stat -c %s:%Y "$ARGO_DIR/bin/argoexec" "$ARGO_DIR/bin/workflow-controller" 2>/dev/null | tr '\n' ' ' || true)"
  need argo-images "$ARGO_IMAGES" "$stamp" || return 0
  local adir w r
  adir=$(moddir "$ARGO_MOD" "$ARGO_VERSION")
  mkdir -p "$ARGO_IMAGES"; w=$(mktemp -d "$ARGO_IMAGES/.build.XXXXXX")
  # upstream's Dockerfile: distroless static + hack/ssh_known_hosts, hack/nsswitch.conf (+ /etc/mime.types
  # for argoexec); the binary in /bin, found through PATH (the controller runs `argoexec init|wait`
  # and the init container copies `exec.LookPath("argoexec")` into /var/run/argo)
  for r in exec exec-nonroot controller; do
    base_rootfs "$w/$r"
    install -D -m 0644 "$adir/hack/ssh_known_hosts" "$w/$r/etc/ssh/ssh_known_hosts"
    install -D -m 0644 "$adir/hack/nsswitch.conf" "$w/$r/etc/nsswitch.conf"
  done
  for r in exec exec-nonroot; do
    install -D -m 0644 /etc/mime.types "$w/$r/etc/mime.types"
    dpkg-query -W -f='${Package} ${Version}\n' media-types >> "$w/$r/usr/share/rdf-bulkload/debian-packages.txt"
    install -D -m 0755 "$ARGO_DIR/bin/argoexec" "$w/$r/bin/argoexec"
  done
  install -D -m 0755 "$ARGO_DIR/bin/workflow-controller" "$w/controller/bin/workflow-controller"
  local -a common=(--env "$STATIC_PATH" --env "$CERT_ENV" --label "org.opencontainers.image.version=$ARGO_VERSION"
                   --label org.opencontainers.image.source=https://github.com/argoproj/argo-workflows)
  nice python3 "$ROOT/hack/oci-image.py" --rootfs "$w/exec" --out "$w/argoexec.tar" --ref "$ARGOEXEC_REF" \
    --entrypoint '["argoexec"]' --user '' --owner home/nonroot=65532:65532 "${common[@]}" >&2
  nice python3 "$ROOT/hack/oci-image.py" --rootfs "$w/exec-nonroot" --out "$w/argoexec-nonroot.tar" --ref "$ARGOEXEC_REF-nonroot" \
    --entrypoint '["argoexec"]' --user 8737 --owner home/nonroot=65532:65532 --owner bin/argoexec=8737:8737 "${common[@]}" >&2
  nice python3 "$ROOT/hack/oci-image.py" --rootfs "$w/controller" --out "$w/workflow-controller.tar" --ref "$CONTROLLER_REF" \
    --entrypoint '["workflow-controller"]' --user 8737 --owner home/nonroot=65532:65532 \
    --owner bin/workflow-controller=8737:8737 "${common[@]}" >&2
  mv -f "$w"/*.tar "$ARGO_IMAGES/"; rm -rf "$w"
  done_stamp "$ARGO_IMAGES" "$stamp" "Argo images" "$t"
}

MINIO_ENV=
build_minio_image() {
  local t=$SECONDS minio mc key dir mdir w r
  if [ -n "$CHECK" ]; then
    # install-minio.sh has no check mode: look for its default destination
    for dir in "$CACHE"/minio-image-*/; do [ -f "$dir/.stamp" ] && return 0; done
    missing+=(minio-image); return 0
  fi
  MINIO_ENV=$(bash "$ROOT/hack/install-minio.sh")
  minio=$(echo "$MINIO_ENV" | sed -n 's/^export RDF_BULKLOAD_MINIO=//p')
  mc=$(dirname "$minio")/mc
  if ! [ -x "$minio" ] || ! [ -x "$mc" ]; then log "install-minio.sh gave no minio/mc"; exit 1; fi
  key=$(stat -L -c %s:%Y "$minio" "$mc" | sha256sum | cut -c1-12)   # the binaries' size and mtime
  MINIO_IMAGE_DIR=$CACHE/minio-image-$key
  need minio-image "$MINIO_IMAGE_DIR" "$MINIO_REF $IMAGE_RECIPE" || return 0
  mdir=$(moddir github.com/minio/minio "${MINIO_VERSION:-$(basename "$(dirname "$minio")" | sed 's/^minio-//')}")
  mkdir -p "$MINIO_IMAGE_DIR"; w=$(mktemp -d "$MINIO_IMAGE_DIR/.build.XXXXXX"); r=$w/rootfs
  # upstream's Dockerfile.release: /usr/bin/{minio,mc,docker-entrypoint.sh}, /licenses, ENTRYPOINT the
  # script, CMD minio. Its base has a shell (the script and the quick-start's `mkdir -p` postStart
  # hook need one): busybox-static here. ~/.minio is not needed: minio ignores EROFS creating it.
  base_rootfs "$r"
  mkdir -p "$r/data" "$r/bin" "$r/usr/bin" "$r/licenses"
  install -m 0755 "$minio" "$r/usr/bin/minio"; install -m 0755 "$mc" "$r/usr/bin/mc"
  install -m 0755 "$mdir/dockerscripts/docker-entrypoint.sh" "$r/usr/bin/docker-entrypoint.sh"
  install -m 0644 "$mdir/LICENSE" "$mdir/CREDITS" "$r/licenses/"
  install -m 0755 /bin/busybox "$r/bin/busybox"
  for a in $BUSYBOX_APPLETS; do ln -s busybox "$r/bin/$a"; done
  dpkg-query -W -f='${Package} ${Version}\n' busybox-static >> "$r/usr/share/rdf-bulkload/debian-packages.txt"
  nice python3 "$ROOT/hack/oci-image.py" --rootfs "$r" --out "$MINIO_IMAGE_DIR/minio.tar" --ref "$MINIO_REF" \
    --entrypoint '["/usr/bin/docker-entrypoint.sh"]' --cmd '["minio"]' --user 65532:65532 \
    --owner home/nonroot=65532:65532 --owner data=65532:65532 \
    --env PATH=/usr/bin:/bin --env "$CERT_ENV" --env MC_CONFIG_DIR=/tmp/.mc \
    --env MINIO_ACCESS_KEY_FILE=access_key --env MINIO_SECRET_KEY_FILE=secret_key \
    --env MINIO_ROOT_USER_FILE=access_key --env MINIO_ROOT_PASSWORD_FILE=secret_key \
    --env MINIO_KMS_SECRET_KEY_FILE=kms_master_key --env MINIO_CONFIG_ENV_FILE=config.env \
    --label org.opencontainers.image.title=minio --label org.opencontainers.image.source=https://github.com/minio/minio >&2
  rm -rf "$w"
  done_stamp "$MINIO_IMAGE_DIR" "$MINIO_REF $IMAGE_RECIPE" "MinIO image" "$t"
}

install_debs
build_snapshotter
build_provisioner
build_resizer
build_coredns
build_argo
build_pause
build_argo_images
build_minio_image

if [ -n "$CHECK" ]; then
  if [ "${#missing[@]}" -gt 0 ]; then log "missing: ${missing[*]}"; exit 1; fi
  log "all present"; exit 0
fi

# one directory of binaries and one of image archives (symlinks into the versioned directories)
OUT=$CACHE/cluster-components-$(echo "$SNAP_DIR $PROV_DIR $RESIZER_DIR $COREDNS_DIR $ARGO_DIR $PAUSE_DIR $MINIO_IMAGE_DIR $PAUSE_REF $MINIO_REF" | sha256sum | cut -c1-12)
mkdir -p "$OUT/bin" "$OUT/images"
for f in "$SNAP_DIR/snapshot-controller" "$SNAP_DIR/csi-snapshotter" "$PROV_DIR/csi-provisioner" "$RESIZER_DIR/csi-resizer" "$COREDNS_DIR/coredns" \
         "$ARGO_DIR/bin/workflow-controller" "$ARGO_DIR/bin/argoexec" "$PAUSE_DIR/pause"; do
  ln -sfn "$f" "$OUT/bin/$(basename "$f")"
done
for f in "$PAUSE_DIR/pause.tar" "$ARGO_IMAGES/argoexec.tar" "$ARGO_IMAGES/argoexec-nonroot.tar" \
         "$ARGO_IMAGES/workflow-controller.tar" "$MINIO_IMAGE_DIR/minio.tar"; do
  ln -sfn "$f" "$OUT/images/$(basename "$f")"
done
log "done in $((SECONDS - t0)) s"
cat <<EOF
export RDF_BULKLOAD_CLUSTER_BIN=$OUT/bin
export RDF_BULKLOAD_CLUSTER_IMAGES=$OUT/images
export RDF_BULKLOAD_ARGO_MANIFESTS=$ARGO_DIR/manifests
export RDF_BULKLOAD_CNI_BIN=/usr/lib/cni
$MINIO_ENV
export RDF_BULKLOAD_PAUSE_IMAGE=$PAUSE_REF
export RDF_BULKLOAD_ARGOEXEC_IMAGE=$ARGOEXEC_REF
export RDF_BULKLOAD_WORKFLOW_CONTROLLER_IMAGE=$CONTROLLER_REF
export RDF_BULKLOAD_MINIO_IMAGE=$MINIO_REF
EOF
