#!/usr/bin/env bash
# A real single-node Kubernetes cluster on this machine, for the cluster suite and for trying
# the operator without a cloud: etcd, kube-apiserver (service-account token signing),
# kube-controller-manager, kube-scheduler, kubelet on containerd + runc, a bridge pod network
# confined to the machine, kube-proxy (iptables) and CoreDNS for Services by name, a test-only
# hostpath CSI driver with the real external-provisioner, csi-snapshotter and
# snapshot-controller, and Argo Workflows installed from its own manifests.
#
#   hack/local-cluster.sh up        start it (idempotent; `up` after a crash cleans up first)
#   hack/local-cluster.sh down      stop everything and leave the machine as it was found
#   hack/local-cluster.sh status    what runs, and the node's state
#   hack/local-cluster.sh logs      tail every component's log
#   hack/local-cluster.sh ctr ...   the node's containerd (namespace k8s.io), e.g. `ctr images ls`
#
# Needs root (kubelet, containerd, mounts, iptables). Everything comes from package registries:
# Kubernetes and etcd from the Go module proxy (hack/install-kube.sh), the CSI sidecars, CoreDNS,
# Argo and the pause/argoexec/MinIO images likewise (hack/install-cluster-components.sh),
# containerd, runc, CNI plugins and iptables from Debian. All cached under $RDF_BULKLOAD_CACHE.
# Images in $IMAGES_DIR (default out/images, from `make images-oci`) are imported too, and the
# archives listed in $EXTRA_IMAGES (the cluster suite's test images).
#
# Network: pods live on the bridge $BRIDGE ($POD_CIDR); they have routes to the pod and Service
# ranges only, no masquerade, and a FORWARD rule drops anything from the bridge to any other
# interface: nothing a pod sends leaves the machine. The API server listens on 6443; clients use
# https://127.0.0.1:6443 (out/local-cluster/kubeconfig); pods use the `kubernetes` Service.
# DNS: CoreDNS answers cluster.local (and reverse zones) only; it forwards nothing.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STATE=${LOCAL_CLUSTER_STATE:-/var/lib/rdf-bulkload-cluster}   # etcd, containerd, kubelet, volumes
RUN=${LOCAL_CLUSTER_RUN:-/run/rdf-bulkload-cluster}            # sockets, pid files, containerd state
OUT=${LOCAL_CLUSTER_OUT:-$ROOT/out/local-cluster}               # kubeconfig and logs for the user
IMAGES_DIR=${IMAGES_DIR:-$ROOT/out/images}
NODE=${LOCAL_CLUSTER_NODE:-rdf-bulkload-node}
BRIDGE=rbl0
POD_CIDR=10.244.0.0/24
NODE_IP=10.244.0.1           # the bridge's address: the node's InternalIP, API server endpoint, DNS
SERVICE_CIDR=10.96.0.0/16
API_SERVICE_IP=10.96.0.1
CLUSTER_DOMAIN=cluster.local
CSI_DRIVER=hostpath.csi.test.rdf-bulkload.io
STORAGE_CLASS=local-hostpath
SNAPSHOT_CLASS=local-hostpath-snapshots
FW_CHAIN=RDF-BULKLOAD-ISOLATE
export PATH=/usr/sbin:/sbin:$PATH
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

PKI=$STATE/pki
ADMIN_KUBECONFIG=$STATE/admin.kubeconfig
CTR() { ctr --address "$RUN/containerd.sock" -n k8s.io "$@"; }

# --- binaries --------------------------------------------------------------------------------
resolve_binaries() {
  KUBE_BIN=$(bash "$ROOT/hack/install-kube.sh")
  eval "$(bash "$ROOT/hack/install-cluster-components.sh")"
  : "${RDF_BULKLOAD_CLUSTER_BIN:?}" "${RDF_BULKLOAD_CLUSTER_IMAGES:?}" "${RDF_BULKLOAD_ARGO_MANIFESTS:?}"
  SNAPSHOT_CRDS=$(bash "$ROOT/hack/fetch-test-crds.sh")
  # the project's own test-only CSI driver: a small Go build, cached by the Go build cache
  CSI_BIN=$STATE/bin/csi-hostpath-test
  mkdir -p "$STATE/bin"
  (cd "$ROOT/e2e/csi-hostpath" && go build -trimpath -o "$CSI_BIN" ./cmd/csi-hostpath-test)
  KUBECTL="$KUBE_BIN/kubectl --kubeconfig $ADMIN_KUBECONFIG"
  echo "$KUBE_BIN" >"$STATE/kube-bin"
}

# --- processes: one pid file each, started in their own session ------------------------------
start() { # start NAME CMD...: run in the background, log to $OUT/logs/NAME.log
  local name=$1; shift
  if alive "$name"; then return 0; fi
  setsid "$@" >>"$OUT/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$RUN/$name.pid"
}
alive() { [ -f "$RUN/$1.pid" ] && kill -0 "$(cat "$RUN/$1.pid")" 2>/dev/null; }
wait_for() { # wait_for WHAT SECONDS CMD...
  local what=$1 secs=$2; shift 2
  for _ in $(seq "$secs"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  die "$what not ready after ${secs}s (logs: $OUT/logs/)"
}
COMPONENTS="etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy coredns csi-driver csi-provisioner csi-snapshotter snapshot-controller"

# --- PKI and kubeconfigs ---------------------------------------------------------------------
pki() {
  [ -f "$PKI/.complete" ] && return 0
  rm -rf "$PKI"; mkdir -p "$PKI"; cd "$PKI"
  openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 30 -subj "/CN=rdf-bulkload-local-ca" 2>/dev/null
  cert() { # cert NAME SUBJECT [SAN]
    local ext=""
    openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
    if [ -n "${3:-}" ]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$3" >"$1.ext"; ext="-extfile $1.ext"
    else printf 'extendedKeyUsage=clientAuth\n' >"$1.ext"; ext="-extfile $1.ext"; fi
    # shellcheck disable=SC2086
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 30 $ext 2>/dev/null
  }
  cert apiserver "/CN=kube-apiserver" \
    "IP:127.0.0.1,IP:$NODE_IP,IP:$API_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN"
  cert admin "/O=system:masters/CN=kubernetes-admin"
  cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  cert kubelet "/CN=$NODE" "IP:$NODE_IP,IP:127.0.0.1,DNS:$NODE"
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  rm -f ./*.csr ./*.ext ./*.srl
  touch .complete
  cd - >/dev/null
}
kubeconfig() { # kubeconfig FILE CERTNAME
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: rdf-bulkload-local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")}
users:
- name: $2
  user: {client-certificate-data: $(base64 -w0 "$PKI/$2.crt"), client-key-data: $(base64 -w0 "$PKI/$2.key")}
contexts:
- name: rdf-bulkload-local
  context: {cluster: rdf-bulkload-local, user: $2}
current-context: rdf-bulkload-local
EOF
  chmod 600 "$1"
}

# --- network ----------------------------------------------------------------------------------
network_up() {
  # remember the sysctls we change, to put them back on `down`
  [ -f "$STATE/sysctl.saved" ] || {
    echo "net.ipv4.ip_forward=$(sysctl -n net.ipv4.ip_forward)"
    echo "net.bridge.bridge-nf-call-iptables=$(sysctl -n net.bridge.bridge-nf-call-iptables)"
  } >"$STATE/sysctl.saved"
  sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$NODE_IP/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  # Confinement: nothing from the pod bridge is forwarded to another interface.
  iptables -N "$FW_CHAIN" 2>/dev/null || iptables -F "$FW_CHAIN"
  iptables -A "$FW_CHAIN" -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
  iptables -C FORWARD -j "$FW_CHAIN" 2>/dev/null || iptables -I FORWARD 1 -j "$FW_CHAIN"
  mkdir -p "$STATE/net.d"
  cat >"$STATE/net.d/10-rdf-bulkload.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "rdf-bulkload-local", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$STATE/cni-ipam", "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$NODE_IP"}]],
            "routes": [{"dst": "$POD_CIDR"}, {"dst": "$SERVICE_CIDR"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
}

# --- the control plane ------------------------------------------------------------------------
control_plane_up() {
  start etcd "$KUBE_BIN/etcd" --name local --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster local=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
  wait_for etcd 60 curl -sf http://127.0.0.1:2381/health
  start kube-apiserver "$KUBE_BIN/kube-apiserver" \
    --etcd-servers http://127.0.0.1:2379 --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$NODE_IP" \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/kubelet-client.crt" --kubelet-client-key "$PKI/kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --allow-privileged=false --profiling=false
  wait_for kube-apiserver 120 curl -sfk https://127.0.0.1:6443/readyz
  local k=(--kubeconfig "$ADMIN_KUBECONFIG" --authentication-kubeconfig "$ADMIN_KUBECONFIG"
    --authorization-kubeconfig "$ADMIN_KUBECONFIG" --leader-elect=false --bind-address 127.0.0.1 --profiling=false)
  start kube-controller-manager "$KUBE_BIN/kube-controller-manager" "${k[@]}" \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false
  start kube-scheduler "$KUBE_BIN/kube-scheduler" "${k[@]}"
}

# --- the node -----------------------------------------------------------------------------------
node_up() {
  mkdir -p "$STATE/containerd" "$RUN/containerd"
  containerd config default >"$STATE/containerd.toml"
  sed -i -e "s#^root = .*#root = \"$STATE/containerd\"#" -e "s#^state = .*#state = \"$RUN/containerd\"#" \
    -e 's#restrict_oom_score_adj = false#restrict_oom_score_adj = true#' \
    -e 's#sandbox_image = .*#sandbox_image = "registry.k8s.io/pause:3.10"#' \
    -e 's#bin_dir = "/opt/cni/bin"#bin_dir = "/usr/lib/cni"#' -e "s#conf_dir = \"/etc/cni/net.d\"#conf_dir = \"$STATE/net.d\"#" \
    "$STATE/containerd.toml"
  # containerd's gRPC socket, its debug socket and its ttrpc socket all live under $RUN
  sed -i -e "s#/run/containerd/containerd.sock#$RUN/containerd.sock#" -e "s#/run/containerd/debug.sock#$RUN/containerd-debug.sock#" \
    "$STATE/containerd.toml"
  start containerd containerd --config "$STATE/containerd.toml" --address "$RUN/containerd.sock"
  wait_for containerd 30 test -S "$RUN/containerd.sock"
  import_images
  cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$RUN/containerd.sock
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $PKI/ca.crt}}
authorization: {mode: Webhook}
clusterDNS: [$NODE_IP]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: ""
failSwapOn: false
enforceNodeAllocatable: []
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "200Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
EOF
  start kubelet "$KUBE_BIN/kubelet" --config "$STATE/kubelet.yaml" --kubeconfig "$ADMIN_KUBECONFIG" \
    --hostname-override "$NODE" --node-ip "$NODE_IP" --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet-pki" --v=1
  wait_for "node $NODE" 120 sh -c "$KUBECTL get node $NODE -o jsonpath='{.status.conditions[?(@.type==\"Ready\")].status}' | grep -qx True"
  start kube-proxy "$KUBE_BIN/kube-proxy" --kubeconfig "$ADMIN_KUBECONFIG" --hostname-override "$NODE" \
    --proxy-mode iptables --cluster-cidr "$POD_CIDR" --bind-address "$NODE_IP" \
    --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256 --conntrack-max-per-core 0
  cat >"$STATE/Corefile" <<EOF
$CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    health 127.0.0.1:18080
    ready 127.0.0.1:18181
    kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
        kubeconfig $ADMIN_KUBECONFIG
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 30
    loadbalance
}
EOF
  start coredns "$RDF_BULKLOAD_CLUSTER_BIN/coredns" -conf "$STATE/Corefile"
  wait_for coredns 60 curl -sf http://127.0.0.1:18181/ready
}

import_images() {
  local f
  # shellcheck disable=SC2086 # EXTRA_IMAGES is a list of archives
  for f in "$RDF_BULKLOAD_CLUSTER_IMAGES"/*.tar "$IMAGES_DIR"/*.tar ${EXTRA_IMAGES:-}; do
    [ -f "$f" ] || continue
    CTR images import --no-unpack "$f" >/dev/null 2>>"$OUT/logs/images.log" || die "importing $f failed (see $OUT/logs/images.log)"
    log "imported $(basename "$f")"
  done
}

# --- storage: CSI driver, sidecars, snapshot controller ------------------------------------------
storage_up() {
  $KUBECTL apply --server-side -f "$SNAPSHOT_CRDS" >/dev/null
  mkdir -p "$RUN/csi" "$STATE/csi-data"
  start csi-driver "$CSI_BIN" --endpoint "unix://$RUN/csi/csi.sock" --node-id "$NODE" --data-dir "$STATE/csi-data" \
    --kubelet-registration-dir "$STATE/kubelet/plugins_registry"
  wait_for "CSI driver socket" 30 test -S "$RUN/csi/csi.sock"
  local s=(--csi-address "$RUN/csi/csi.sock" --kubeconfig "$ADMIN_KUBECONFIG" --leader-election=false)
  start csi-provisioner "$RDF_BULKLOAD_CLUSTER_BIN/csi-provisioner" "${s[@]}" --feature-gates Topology=true \
    --extra-create-metadata --node-deployment=false
  start csi-snapshotter "$RDF_BULKLOAD_CLUSTER_BIN/csi-snapshotter" "${s[@]}" --extra-create-metadata
  start snapshot-controller "$RDF_BULKLOAD_CLUSTER_BIN/snapshot-controller" --kubeconfig "$ADMIN_KUBECONFIG" --leader-election=false
  $KUBECTL apply -f - >/dev/null <<EOF
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $CSI_DRIVER}
spec: {attachRequired: false, podInfoOnMount: false, fsGroupPolicy: File, volumeLifecycleModes: [Persistent]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $STORAGE_CLASS
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: $CSI_DRIVER
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: $SNAPSHOT_CLASS
  annotations: {snapshot.storage.kubernetes.io/is-default-class: "true"}
driver: $CSI_DRIVER
deletionPolicy: Delete
EOF
  wait_for "CSI driver registration" 60 sh -c "$KUBECTL get csinode $NODE -o jsonpath='{.spec.drivers[*].name}' | grep -q $CSI_DRIVER"
}

# --- Argo Workflows, as a user installs it -------------------------------------------------------
argo_up() {
  $KUBECTL create namespace argo --dry-run=client -o yaml | $KUBECTL apply -f - >/dev/null
  $KUBECTL -n argo apply --server-side -f "$RDF_BULKLOAD_ARGO_MANIFESTS/install-controller.yaml" >/dev/null
  # shellcheck disable=SC2086 # KUBECTL is a command line
  wait_for "Argo workflow-controller" 300 $KUBECTL -n argo rollout status deployment/workflow-controller --timeout 1s
}

# --- commands ---------------------------------------------------------------------------------
up() {
  [ "$(id -u)" = 0 ] || die "needs root (kubelet, containerd, mounts, iptables)"
  if [ -d "$RUN" ] && ! alive kube-apiserver; then log "stale state from an earlier run: cleaning up first"; down; fi
  mkdir -p "$STATE" "$RUN" "$OUT/logs"
  resolve_binaries
  pki
  kubeconfig "$ADMIN_KUBECONFIG" admin
  network_up
  control_plane_up
  node_up
  storage_up
  argo_up
  cp "$ADMIN_KUBECONFIG" "$OUT/kubeconfig"
  log "up. Use it with:"
  log "  export KUBECONFIG=$OUT/kubeconfig"
  log "  $KUBE_BIN/kubectl get nodes"
  log "storage class $STORAGE_CLASS (WaitForFirstConsumer), snapshot class $SNAPSHOT_CLASS; logs in $OUT/logs"
}

down() {
  local c pid
  # kubelet first, so that it does not restart what is stopped below
  for c in kubelet kube-proxy coredns csi-provisioner csi-snapshotter snapshot-controller kube-scheduler kube-controller-manager; do
    stop_component "$c"
  done
  if [ -S "$RUN/containerd.sock" ]; then
    for pid in $(CTR tasks ls -q 2>/dev/null); do CTR tasks kill -s KILL "$pid" 2>/dev/null || true; done
    sleep 1
    for pid in $(CTR tasks ls -q 2>/dev/null); do CTR tasks delete -f "$pid" 2>/dev/null || true; done
    for pid in $(CTR containers ls -q 2>/dev/null); do CTR containers delete "$pid" 2>/dev/null || true; done
  fi
  stop_component containerd
  # shims of pod sandboxes outlive containerd
  for f in "$RUN"/containerd/io.containerd.runtime.v2.task/k8s.io/*/shim.pid; do
    if [ -f "$f" ]; then kill -9 "$(cat "$f")" 2>/dev/null || true; fi
  done
  stop_component csi-driver
  stop_component kube-apiserver
  stop_component etcd
  # anything else still running that names our state (a crash may have lost a pid file)
  pkill -9 -f -- "$STATE/" 2>/dev/null || true
  pkill -9 -f -- "$RUN/" 2>/dev/null || true
  # mounts: volumes, pod directories, containerd snapshots, network namespaces
  grep -E " ($STATE|$RUN)[/ ]" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done || true
  for n in /var/run/netns/cni-*; do
    [ -e "$n" ] || continue
    if ip netns exec "$(basename "$n")" ip -br addr 2>/dev/null | grep -q "10\.244\.0\."; then ip netns del "$(basename "$n")" 2>/dev/null || true; fi
  done
  # kube-proxy's own cleanup first; the loop below removes what any component left
  KUBE_BIN=$(cat "$STATE/kube-bin" 2>/dev/null || true)
  if [ -n "$KUBE_BIN" ] && [ -x "$KUBE_BIN/kube-proxy" ]; then "$KUBE_BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true; fi
  # iptables: kube-proxy's, the kubelet's (KUBE-*), the portmap plugin's (CNI-*) and our
  # isolation chain, in every table, for IPv4 and IPv6
  local ipt t r ch
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in filter nat mangle raw; do
      "$ipt" -t "$t" -S 2>/dev/null | grep -E -- "-j (KUBE-|CNI-|$FW_CHAIN)" | grep -vE "^-A (KUBE-|CNI-|$FW_CHAIN)" |
        sed 's/^-A/-D/' | while read -r r; do eval "\"$ipt\" -t $t $r" 2>/dev/null || true; done || true
      for ch in $("$ipt" -t "$t" -S 2>/dev/null | awk -v fw="$FW_CHAIN" '$1 == "-N" && ($2 ~ /^(KUBE-|CNI-)/ || $2 == fw) {print $2}'); do
        "$ipt" -t "$t" -F "$ch" 2>/dev/null || true
      done
      for ch in $("$ipt" -t "$t" -S 2>/dev/null | awk -v fw="$FW_CHAIN" '$1 == "-N" && ($2 ~ /^(KUBE-|CNI-)/ || $2 == fw) {print $2}'); do
        "$ipt" -t "$t" -X "$ch" 2>/dev/null || true
      done
    done
  done
  ip link del "$BRIDGE" 2>/dev/null || true
  if [ -f "$STATE/sysctl.saved" ]; then
    while read -r kv; do sysctl -qw "$kv" || true; done <"$STATE/sysctl.saved"
  fi
  # the kubelet's and containerd's cgroups (cgroupfs driver), once empty
  for h in /sys/fs/cgroup/*/; do
    for c in kubepods k8s.io; do
      if [ -d "$h$c" ]; then find "$h$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true; fi
    done
  done
  rm -rf "$STATE" "$RUN" "$OUT/kubeconfig"
  log "down: processes, mounts, bridge $BRIDGE, iptables rules and $STATE removed"
}

stop_component() {
  local name=$1 pid
  [ -f "$RUN/$name.pid" ] || return 0
  pid=$(cat "$RUN/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$RUN/$name.pid"
}

status() {
  local c state
  for c in $COMPONENTS; do
    if alive "$c"; then state="running (pid $(cat "$RUN/$c.pid"))"; else state="stopped"; fi
    printf '%-24s %s\n' "$c" "$state"
  done
  if alive kube-apiserver && [ -f "$ADMIN_KUBECONFIG" ]; then
    "$(cat "$STATE/kube-bin")/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" get nodes -o wide || true
  fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  logs) tail -n 50 "$OUT"/logs/*.log ;;
  ctr) shift; CTR "$@" ;;
  *) echo "usage: $0 up|down|status|logs|ctr ARGS..." >&2; exit 2 ;;
esac
