#!/usr/bin/env bash
# Real Prometheus server + promtool, built from the Go module proxy (no other downloads), and an
# OCI image archive of the server for the local cluster's containerd (`ctr -n k8s.io images import`).
# Prometheus 3.x is published as the Go module github.com/prometheus/prometheus v0.3MM.P
# (= Prometheus 3.MM.P); its go.mod has no replace directives, so both commands come from ONE
# `go install pkg@version pkg@version`. Built without the `builtinassets` tag: no web UI (the
# HTTP API, which the tests use, is complete without it); with `remove_all_sd,enable_kubernetes_sd`:
# of the service discoveries only Kubernetes' (and static, file, http), which the cluster suite uses;
# the cloud SDKs of the others are about half the build.
#
# Usage: hack/install-prometheus.sh [DEST]
#   DEST defaults to ${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}/prometheus-<module version>.
#   Idempotent: a stamp file records what was built; a warm run only prints (~0.1 s). Prints:
#     export PROMETHEUS=DEST/prometheus PROMTOOL=DEST/promtool
#     export PROMETHEUS_IMAGE_TAR=DEST/prometheus.tar PROMETHEUS_IMAGE=quay.io/prometheus/prometheus:v<3.x.y>-local
#   The image is upstream's layout (Dockerfile of the release) without busybox: /bin/prometheus,
#   /bin/promtool, /etc/prometheus/prometheus.yml, /prometheus (owned by nobody, the workdir),
#   user 65534:65534 (nobody), entrypoint /bin/prometheus, cmd --config.file=/etc/prometheus/
#   prometheus.yml --storage.tsdb.path=/prometheus. No CA bundle (it scrapes in-cluster only; the
#   operator's HTTPS endpoint is reached with the service account's CA file).
# Cold cost with an empty Go build cache (module cache warm): about 3 min on 2 idle cores, 1.3 GB
#   peak RSS; binaries 76 + 54 MB. Warm: ~0.1 s.
# Env: PROMETHEUS_VERSION (module version, v0.316.0), PROMETHEUS_IMAGE (image ref).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROMETHEUS_VERSION=${PROMETHEUS_VERSION:-v0.316.0}
CACHE=${RDF_BULKLOAD_CACHE:-$HOME/.cache/rdf-bulkload}
DEST=${1:-$CACHE/prometheus-$PROMETHEUS_VERSION}
RECIPE=2   # bump when the build flags or the image contents below change
MOD=github.com/prometheus/prometheus
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=${GOFLAGS:--buildvcs=false} CGO_ENABLED=0
mkdir -p "$DEST"; DEST=$(cd "$DEST" && pwd)
log() { echo "install-prometheus: $*" >&2; }

mdir=
moddir() { # the module's directory in the module cache (downloads it)
  [ -n "$mdir" ] && return 0
  mdir=$(go mod download -json "$MOD@$PROMETHEUS_VERSION" | sed -n 's/^\s*"Dir": "\(.*\)",$/\1/p')
  [ -n "$mdir" ] || { log "cannot download $MOD@$PROMETHEUS_VERSION"; exit 1; }
}
# the application version (3.x.y) is the module's VERSION file; cached in the stamp for warm runs
APP_VERSION=$(sed -n 2p "$DEST/.stamp" 2>/dev/null || true)
STAMP_HEAD="$PROMETHEUS_VERSION $RECIPE"
if [ "$(sed -n 1p "$DEST/.stamp" 2>/dev/null)" != "$STAMP_HEAD" ] || ! [ -x "$DEST/prometheus" ] ||
   ! [ -x "$DEST/promtool" ] || ! [ -f "$DEST/prometheus.tar" ]; then
  t0=$SECONDS
  moddir
  APP_VERSION=$(tr -d '[:space:]' < "$mdir/VERSION")
  info=$(go mod download -json "$MOD@$PROMETHEUS_VERSION" | sed -n 's/^\s*"Info": "\(.*\)",$/\1/p')
  rev=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("Origin", {}).get("Hash", ""))' "$info")
  date=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Time"])' "$info")
  rm -f "$DEST/.stamp"
  tmp=$(mktemp -d "$DEST/.build.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  log "building prometheus + promtool $APP_VERSION ($MOD@$PROMETHEUS_VERSION; cold: ~3-8 min) into $DEST"
  # .promu.yml's tags minus builtinassets, and its version ldflags
  v=github.com/prometheus/common/version
  GOBIN=$tmp nice go install -trimpath -tags netgo,remove_all_sd,enable_kubernetes_sd \
    -ldflags "-s -w -X $v.Version=$APP_VERSION -X $v.Revision=$rev -X $v.Branch=HEAD -X $v.BuildUser=rdf-bulkload -X $v.BuildDate=$date" \
    "$MOD/cmd/prometheus@$PROMETHEUS_VERSION" "$MOD/cmd/promtool@$PROMETHEUS_VERSION"
  log "binaries built in $((SECONDS - t0)) s"

  r=$tmp/rootfs
  mkdir -p "$r/bin" "$r/etc/prometheus" "$r/prometheus" "$r/tmp"
  chmod 1777 "$r/tmp"; chmod 775 "$r/prometheus"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/home:/sbin/nologin\n' > "$r/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' > "$r/etc/group"
  install -m 0755 "$tmp/prometheus" "$tmp/promtool" "$r/bin/"
  install -m 0644 "$mdir/documentation/examples/prometheus.yml" "$r/etc/prometheus/prometheus.yml"
  install -m 0644 "$mdir/LICENSE" "$mdir/NOTICE" "$r/"
  REF=${PROMETHEUS_IMAGE:-quay.io/prometheus/prometheus:v$APP_VERSION-local}
  nice python3 "$ROOT/hack/oci-image.py" --rootfs "$r" --out "$tmp/prometheus.tar" --ref "$REF" \
    --entrypoint '["/bin/prometheus"]' --cmd '["--config.file=/etc/prometheus/prometheus.yml","--storage.tsdb.path=/prometheus"]' \
    --user 65534:65534 --workdir /prometheus --owner prometheus=65534:65534 --owner etc/prometheus=65534:65534 \
    --label "org.opencontainers.image.version=$APP_VERSION" --label org.opencontainers.image.title=Prometheus \
    --label org.opencontainers.image.source=https://github.com/prometheus/prometheus >&2
  mv -f "$tmp/prometheus" "$tmp/promtool" "$tmp/prometheus.tar" "$DEST/"
  printf '%s\n%s\n%s\n' "$STAMP_HEAD" "$APP_VERSION" "$REF" > "$DEST/.stamp"
  log "done in $((SECONDS - t0)) s"
fi
REF=$(sed -n 3p "$DEST/.stamp")
if [ -n "${PROMETHEUS_IMAGE:-}" ] && [ "$PROMETHEUS_IMAGE" != "$REF" ]; then
  log "the archive is tagged $REF, not PROMETHEUS_IMAGE=$PROMETHEUS_IMAGE: remove $DEST/.stamp to rebuild"; exit 1
fi
echo "export PROMETHEUS=$DEST/prometheus PROMTOOL=$DEST/promtool"
echo "export PROMETHEUS_IMAGE_TAR=$DEST/prometheus.tar PROMETHEUS_IMAGE=$REF"
