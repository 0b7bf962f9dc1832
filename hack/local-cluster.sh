#!/usr/bin/env bash
# A real two-node Kubernetes cluster on this machine, for the cluster suite and for trying the
# operator without a cloud: etcd, kube-apiserver (service-account token signing),
# kube-controller-manager, kube-scheduler; per node a kubelet on its own containerd + runc, its own
# pod bridge and pod range, kube-proxy (iptables); CoreDNS for Services by name; a test-only
# hostpath CSI driver serving three kinds of storage (e2e/csi-hostpath) with the real
# external-provisioner, csi-snapshotter and snapshot-controller; Argo Workflows installed from its
# own manifests.
#
#   hack/local-cluster.sh up [--nodes N]  start it (N = 1 or 2, default $LOCAL_CLUSTER_NODES or 2;
#                                         idempotent; `up` after a crash cleans up first)
#   hack/local-cluster.sh down            stop everything of every node, leave the machine as found
#   hack/local-cluster.sh status          what runs, and the nodes' state
#   hack/local-cluster.sh check           pods on every node reach a Service by name; every
#                                         StorageClass provisions and mounts a volume
#   hack/local-cluster.sh logs            tail every component's log
#   hack/local-cluster.sh ctr [-n I] ...  node I's containerd (default 1; namespace k8s.io)
#   hack/local-cluster.sh node-stop I|NAME  stop node I's kubelet, kube-proxy, containerd and pods
#                                         (a node lost; its CSI node plugins stay, as its disks would)
#   hack/local-cluster.sh node-start I|NAME start a stopped node again
#
# Needs root (kubelet, containerd, mounts, iptables, network namespaces). Everything comes from
# package registries: Kubernetes and etcd from the Go module proxy (hack/install-kube.sh), the CSI
# sidecars, CoreDNS, Argo and the pause/argoexec/MinIO images likewise
# (hack/install-cluster-components.sh), containerd, runc, CNI plugins and iptables from Debian. All
# cached under $RDF_BULKLOAD_CACHE. Images in $IMAGES_DIR (default out/images, from `make
# images-oci`) are imported into every node's containerd, and the archives listed in $EXTRA_IMAGES
# (the cluster suite's test images).
#
# Nodes: rdf-bulkload-node-1 runs in the host's network namespace; rdf-bulkload-node-2 runs its
# kubelet, containerd and kube-proxy in the network namespace rbl-n2 (nsenter --net: the host's
# mount namespace, so the kubelet, containerd and the CSI node plugins see each other's mounts),
# with its own root, state dir and socket, kubelet root dir, certificate, cgroup root and pod logs.
#
# Network: node 1's pods live on the bridge rbl0 (10.244.0.0/24, the bridge 10.244.0.1 is node 1's
# address, the API server endpoint and the DNS server); node 2's netns hangs off rbl0 by a veth
# (10.244.0.2, its node address) and its pods live on its own bridge rbl1 (10.244.1.0/24). Routes
# join the pod ranges (10.244.0.0/16) and reach the Service range only; no default route, no
# masquerade, and a FORWARD rule drops anything from rbl0 to any other interface: nothing a pod or
# node 2 sends leaves the machine. Clients use https://127.0.0.1:6443 (out/local-cluster/kubeconfig).
# DNS: CoreDNS answers cluster.local (and reverse zones) only; it forwards nothing.
#
# Storage (StorageClass → CSI driver, e2e/csi-hostpath/README.md):
#   local-hostpath (default)  hostpath.csi.test.rdf-bulkload.io  node-local, like TopoLVM;
#                             VolumeSnapshotClass local-hostpath-snapshots (snapshots stay on the node)
#   local-hostpath-sized      the same driver, each volume an ext4 filesystem of its size (a full
#                             one fails with ENOSPC), expandable while unused (csi-resizer)
#   network-hostpath          network.csi.test.rdf-bulkload.io   any node, one at a time, like EBS;
#                             VolumeSnapshotClass network-hostpath-snapshots (cluster-wide)
#   no-snapshots-hostpath     nosnap.csi.test.rdf-bulkload.io    node-local without snapshots, like
#                             local-path: no csi-snapshotter, no VolumeSnapshotClass
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
STATE=${LOCAL_CLUSTER_STATE:-/var/lib/rdf-bulkload-cluster}   # etcd, containerd, kubelet, volumes
RUN=${LOCAL_CLUSTER_RUN:-/run/rdf-bulkload-cluster}            # sockets, pid files, containerd state
OUT=${LOCAL_CLUSTER_OUT:-$ROOT/out/local-cluster}               # kubeconfig and logs for the user
IMAGES_DIR=${IMAGES_DIR:-$ROOT/out/images}
NODE_PREFIX=${LOCAL_CLUSTER_NODE:-rdf-bulkload-node}
NODES=${LOCAL_CLUSTER_NODES:-2}
BRIDGE=rbl0                  # node 1's pod bridge, which node 2's netns hangs off
API_IP=10.244.0.1            # rbl0's address: node 1's InternalIP, the API server endpoint, DNS
CLUSTER_CIDR=10.244.0.0/16   # every node's pod range
SERVICE_CIDR=10.96.0.0/16
API_SERVICE_IP=10.96.0.1
CLUSTER_DOMAIN=cluster.local
CSI_MODES="local network no-snapshots"
FW_CHAIN=RDF-BULKLOAD-ISOLATE
export PATH=/usr/sbin:/sbin:$PATH
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

log() { echo "local-cluster: $*" >&2; }
die() { log "$*"; exit 1; }

PKI=$STATE/pki
ADMIN_KUBECONFIG=$STATE/admin.kubeconfig

# node_vars I: the names and addresses of node I (1 or 2)
node_vars() {
  N=$1
  NODE=$NODE_PREFIX-$N
  NSTATE=$STATE/n$N NRUN=$RUN/n$N
  NODE_POD_CIDR=10.244.$((N - 1)).0/24 NODE_GW=10.244.$((N - 1)).1
  if [ "$N" = 1 ]; then
    NODE_IP=$API_IP NODE_BRIDGE=$BRIDGE NETNS='' IN_NS=() CGROUP_ROOT=/
  else
    NODE_IP=10.244.0.$N NODE_BRIDGE=rbl$((N - 1)) NETNS=rbl-n$N IN_NS=(nsenter "--net=/var/run/netns/rbl-n$N") CGROUP_ROOT=/rbl-n$N
  fi
}
CTR() { # CTR [-n I] ARGS...: node I's containerd
  local n=1
  if [ "${1:-}" = -n ]; then n=$2; shift 2; fi
  ctr --address "$RUN/n$n/containerd.sock" -n k8s.io "$@"
}
csi_driver_name() { # the driver of a mode, as e2e/csi-hostpath names it
  case $1 in local) echo hostpath.csi.test.rdf-bulkload.io ;; network) echo network.csi.test.rdf-bulkload.io ;;
    no-snapshots) echo nosnap.csi.test.rdf-bulkload.io ;; esac
}
storage_class() { case $1 in local) echo local-hostpath ;; network) echo network-hostpath ;; no-snapshots) echo no-snapshots-hostpath ;; esac; }

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

resolve_images_env() { eval "$(bash "$ROOT/hack/install-cluster-components.sh")"; }

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
# what runs: the control plane, then per node (suffix -nI), then per CSI mode
components() {
  local n m
  echo etcd kube-apiserver kube-controller-manager kube-scheduler coredns snapshot-controller
  for n in $(seq "$(cat "$STATE/nodes" 2>/dev/null || echo "$NODES")"); do echo "containerd-n$n kubelet-n$n kube-proxy-n$n"; done
  for m in $CSI_MODES; do
    echo "csi-$m-controller csi-$m-provisioner"
    [ "$m" != local ] || echo "csi-$m-resizer"
    [ "$m" = no-snapshots ] || echo "csi-$m-snapshotter"
    for n in $(seq "$(cat "$STATE/nodes" 2>/dev/null || echo "$NODES")"); do echo "csi-$m-n$n"; done
  done
}

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
    "IP:127.0.0.1,IP:$API_IP,IP:$API_SERVICE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.$CLUSTER_DOMAIN"
  cert admin "/O=system:masters/CN=kubernetes-admin"
  cert kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
  local n
  for n in 1 2; do
    node_vars "$n"
    cert "kubelet-n$n" "/CN=$NODE" "IP:$NODE_IP,IP:127.0.0.1,DNS:$NODE"
  done
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  rm -f ./*.csr ./*.ext ./*.srl
  touch .complete
  cd - >/dev/null
}
kubeconfig() { # kubeconfig FILE CERTNAME [SERVER]
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: rdf-bulkload-local
  cluster: {server: "${3:-https://127.0.0.1:6443}", certificate-authority-data: $(base64 -w0 "$PKI/ca.crt")}
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
    ip addr add "$API_IP/24" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  # node 1 routes between the pods of rbl0 and node 2's uplink on rbl0: no redirects to the pods
  sysctl -qw "net.ipv4.conf.$BRIDGE.send_redirects=0"
  # Confinement: nothing from the pod bridge (node 1's pods, node 2 and its pods) is forwarded to
  # another interface.
  iptables -N "$FW_CHAIN" 2>/dev/null || iptables -F "$FW_CHAIN"
  iptables -A "$FW_CHAIN" -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
  iptables -C FORWARD -j "$FW_CHAIN" 2>/dev/null || iptables -I FORWARD 1 -j "$FW_CHAIN"
}

# node_network_up: node N's netns (N > 1) on rbl0, its pod bridge, the routes between pod ranges,
# and its CNI config
node_network_up() {
  if [ -n "$NETNS" ]; then
    if ! ip netns list | grep -qw "$NETNS"; then
      ip netns add "$NETNS"
      ip link add "rbl-n$N" type veth peer name uplink netns "$NETNS"
      ip link set "rbl-n$N" master "$BRIDGE" up
    fi
    "${IN_NS[@]}" sh -ec "
      ip link set lo up
      ip addr replace $NODE_IP/24 dev uplink; ip link set uplink up
      ip link show $NODE_BRIDGE >/dev/null 2>&1 || ip link add $NODE_BRIDGE type bridge
      ip addr replace $NODE_GW/24 dev $NODE_BRIDGE; ip link set $NODE_BRIDGE up
      ip route replace $SERVICE_CIDR via $API_IP dev uplink
      sysctl -qw net.ipv4.ip_forward=1
      sysctl -qw net.bridge.bridge-nf-call-iptables=1"
    for other in $(seq "$NODES"); do   # this node's pods reach the other nodes' pod ranges
      [ "$other" = "$N" ] || [ "$other" = 1 ] || "${IN_NS[@]}" ip route replace "10.244.$((other - 1)).0/24" via "10.244.0.$other" dev uplink
    done
    ip route replace "$NODE_POD_CIDR" via "$NODE_IP" dev "$BRIDGE"   # node 1 (and its pods' gateway) to this node's pods
  fi
  # node 1's pod addresses start at .16: 10.244.0.2-15 are the other nodes' addresses on rbl0
  local range_start=""
  [ "$N" != 1 ] || range_start=', "rangeStart": "10.244.0.16"'
  mkdir -p "$NSTATE/net.d"
  cat >"$NSTATE/net.d/10-rdf-bulkload.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "rdf-bulkload-local", "plugins": [
  {"type": "bridge", "bridge": "$NODE_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$NSTATE/cni-ipam", "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "$NODE_GW"$range_start}]],
            "routes": [{"dst": "$CLUSTER_CIDR"}, {"dst": "$SERVICE_CIDR"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
EOF
}

# --- the control plane ------------------------------------------------------------------------
# The API server's audit log, $OUT/audit.log: every request of a service account (the operator,
# Argo, the CSI sidecars, the build pods), at Metadata level (who, what, the response code), so
# that the cluster suite sees any request RBAC refused (403). Lease renewals and events are left
# out (most of the volume, nothing to learn).
audit_policy() {
  cat >"$STATE/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: None
    resources:
      - {group: coordination.k8s.io, resources: [leases]}
      - {group: "", resources: [events]}
      - {group: events.k8s.io, resources: [events]}
  - level: Metadata
    userGroups: ["system:serviceaccounts"]
  - level: None
EOF
}

control_plane_up() {
  audit_policy
  rm -f "$OUT"/audit*.log
  start etcd "$KUBE_BIN/etcd" --name local --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster local=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381
  wait_for etcd 60 curl -sf http://127.0.0.1:2381/health
  start kube-apiserver "$KUBE_BIN/kube-apiserver" \
    --etcd-servers http://127.0.0.1:2379 --bind-address 0.0.0.0 --secure-port 6443 --advertise-address "$API_IP" \
    --service-cluster-ip-range "$SERVICE_CIDR" --authorization-mode Node,RBAC \
    --client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
    --kubelet-client-certificate "$PKI/kubelet-client.crt" --kubelet-client-key "$PKI/kubelet-client.key" \
    --kubelet-certificate-authority "$PKI/ca.crt" --kubelet-preferred-address-types InternalIP \
    --service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --allow-privileged=false --profiling=false \
    --audit-policy-file "$STATE/audit-policy.yaml" --audit-log-path "$OUT/audit.log" \
    --audit-log-maxsize 500 --audit-log-maxbackup 3 --audit-log-format json
  wait_for kube-apiserver 120 curl -sfk https://127.0.0.1:6443/readyz
  local k=(--kubeconfig "$ADMIN_KUBECONFIG" --authentication-kubeconfig "$ADMIN_KUBECONFIG"
    --authorization-kubeconfig "$ADMIN_KUBECONFIG" --leader-elect=false --bind-address 127.0.0.1 --profiling=false)
  start kube-controller-manager "$KUBE_BIN/kube-controller-manager" "${k[@]}" \
    --service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
    --use-service-account-credentials --cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
    --service-cluster-ip-range "$SERVICE_CIDR" --allocate-node-cidrs=false
  start kube-scheduler "$KUBE_BIN/kube-scheduler" "${k[@]}"
}

# --- a node: containerd, kubelet, kube-proxy (node_vars first) --------------------------------------
node_up() {
  node_network_up
  mkdir -p "$NSTATE/containerd" "$NRUN/containerd"
  containerd config default >"$NSTATE/containerd.toml"
  sed -i -e "s#^root = .*#root = \"$NSTATE/containerd\"#" -e "s#^state = .*#state = \"$NRUN/containerd\"#" \
    -e 's#restrict_oom_score_adj = false#restrict_oom_score_adj = true#' \
    -e 's#sandbox_image = .*#sandbox_image = "registry.k8s.io/pause:3.10"#' \
    -e 's#bin_dir = "/opt/cni/bin"#bin_dir = "/usr/lib/cni"#' -e "s#conf_dir = \"/etc/cni/net.d\"#conf_dir = \"$NSTATE/net.d\"#" \
    "$NSTATE/containerd.toml"
  # containerd's gRPC socket, its debug socket, its ttrpc socket and NRI's all live under $NRUN
  sed -i -e "s#/run/containerd/containerd.sock#$NRUN/containerd.sock#" -e "s#/run/containerd/debug.sock#$NRUN/containerd-debug.sock#" \
    -e "s#/var/run/nri/nri.sock#$NRUN/nri.sock#" "$NSTATE/containerd.toml"
  start "containerd-n$N" "${IN_NS[@]}" containerd --config "$NSTATE/containerd.toml" --address "$NRUN/containerd.sock"
  wait_for "node $N's containerd" 30 test -S "$NRUN/containerd.sock"
  import_images "$N"
  if [ "$CGROUP_ROOT" != / ]; then   # the kubelet wants its cgroup root to exist in every hierarchy
    for h in /sys/fs/cgroup/*/; do [ -L "${h%/}" ] || mkdir -p "$h${CGROUP_ROOT#/}"; done
    local c   # cgroup v1: a new cpuset has no CPUs or memory nodes until given its parent's
    for c in cpus mems; do
      if [ -f "/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.$c" ] && [ -z "$(cat "/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.$c")" ]; then
        cat "/sys/fs/cgroup/cpuset/cpuset.$c" >"/sys/fs/cgroup/cpuset$CGROUP_ROOT/cpuset.$c"
      fi
    done
  fi
  cat >"$NSTATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $CGROUP_ROOT
containerRuntimeEndpoint: unix://$NRUN/containerd.sock
address: $NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
tlsCertFile: $PKI/kubelet-n$N.crt
tlsPrivateKeyFile: $PKI/kubelet-n$N.key
authentication: {anonymous: {enabled: false}, webhook: {enabled: true}, x509: {clientCAFile: $PKI/ca.crt}}
authorization: {mode: Webhook}
clusterDNS: [$API_IP]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: ""
podLogsDir: $NSTATE/pod-logs
failSwapOn: false
enforceNodeAllocatable: []
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {"memory.available": "200Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
EOF
  kubeconfig "$NSTATE/kubeconfig" admin "https://$API_IP:6443"
  start "kubelet-n$N" "${IN_NS[@]}" "$KUBE_BIN/kubelet" --config "$NSTATE/kubelet.yaml" --kubeconfig "$NSTATE/kubeconfig" \
    --hostname-override "$NODE" --node-ip "$NODE_IP" --root-dir "$NSTATE/kubelet" --cert-dir "$NSTATE/kubelet-pki" --v=1
  start "kube-proxy-n$N" "${IN_NS[@]}" "$KUBE_BIN/kube-proxy" --kubeconfig "$NSTATE/kubeconfig" --hostname-override "$NODE" \
    --proxy-mode iptables --cluster-cidr "$CLUSTER_CIDR" --bind-address "$NODE_IP" \
    --metrics-bind-address 127.0.0.1:10249 --healthz-bind-address 127.0.0.1:10256 --conntrack-max-per-core 0
}

node_ready() { # node_ready NAME: the node's Ready condition is True
  $KUBECTL get node "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null | grep -qx True
}

dns_up() {
  cat >"$STATE/Corefile" <<EOF
$CLUSTER_DOMAIN:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $API_IP
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

import_images() { # import_images I: every image archive into node I's containerd
  local f
  # shellcheck disable=SC2086 # EXTRA_IMAGES is a list of archives
  for f in "$RDF_BULKLOAD_CLUSTER_IMAGES"/*.tar "$IMAGES_DIR"/*.tar ${EXTRA_IMAGES:-}; do
    [ -f "$f" ] || continue
    CTR -n "$1" images import --no-unpack "$f" >/dev/null 2>>"$OUT/logs/images.log" || die "importing $f into node $1 failed (see $OUT/logs/images.log)"
  done
  log "node $1: images imported"
}

# --- storage: the CSI driver in three modes, sidecars, snapshot controller -----------------------
storage_up() {
  $KUBECTL apply --server-side -f "$SNAPSHOT_CRDS" >/dev/null
  mkdir -p "$RUN/csi"
  local m n driver sock objects=""
  for m in $CSI_MODES; do
    driver=$(csi_driver_name "$m"); sock=$RUN/csi/$m-controller.sock
    mkdir -p "$STATE/csi/$m"
    for n in $(seq "$NODES"); do   # node plugins: in the host's namespaces, registered with node n's kubelet
      node_vars "$n"
      start "csi-$m-n$n" "$CSI_BIN" --mode "$m" --services node --node-id "$NODE" --data-dir "$STATE/csi/$m" \
        --endpoint "unix://$RUN/csi/$m-n$n.sock" --kubelet-registration-dir "$NSTATE/kubelet/plugins_registry"
    done
    start "csi-$m-controller" "$CSI_BIN" --mode "$m" --services controller --data-dir "$STATE/csi/$m" --endpoint "unix://$sock"
    wait_for "CSI controller ($m)" 30 test -S "$sock"
    local s=(--csi-address "$sock" --kubeconfig "$ADMIN_KUBECONFIG" --leader-election=false)
    start "csi-$m-provisioner" "$RDF_BULKLOAD_CLUSTER_BIN/csi-provisioner" "${s[@]}" --feature-gates Topology=true \
      --extra-create-metadata --node-deployment=false
    [ "$m" = no-snapshots ] || start "csi-$m-snapshotter" "$RDF_BULKLOAD_CLUSTER_BIN/csi-snapshotter" "${s[@]}" --extra-create-metadata
    [ "$m" != local ] || start "csi-$m-resizer" "$RDF_BULKLOAD_CLUSTER_BIN/csi-resizer" "${s[@]}"
    objects+="
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: $driver}
spec: {attachRequired: false, podInfoOnMount: false, fsGroupPolicy: File, volumeLifecycleModes: [Persistent]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: $(storage_class "$m")
  annotations: {storageclass.kubernetes.io/is-default-class: \"$([ "$m" = local ] && echo true || echo false)\"}
provisioner: $driver
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete"
    [ "$m" != local ] || objects+="
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-hostpath-sized}
provisioner: $driver
parameters: {fs: ext4}
allowVolumeExpansion: true
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete"
    [ "$m" = no-snapshots ] || objects+="
---
apiVersion: snapshot.storage.k8s.io/v1
kind: VolumeSnapshotClass
metadata:
  name: $(storage_class "$m")-snapshots
  annotations: {snapshot.storage.kubernetes.io/is-default-class: \"true\"}
driver: $driver
deletionPolicy: Delete"
  done
  start snapshot-controller "$RDF_BULKLOAD_CLUSTER_BIN/snapshot-controller" --kubeconfig "$ADMIN_KUBECONFIG" --leader-election=false
  echo "$objects" | $KUBECTL apply -f - >/dev/null
  for n in $(seq "$NODES"); do
    node_vars "$n"
    for m in $CSI_MODES; do
      wait_for "CSI driver $m on $NODE" 60 sh -c "$KUBECTL get csinode $NODE -o jsonpath='{.spec.drivers[*].name}' | grep -qw $(csi_driver_name "$m")"
    done
  done
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
  [ "$(id -u)" = 0 ] || die "needs root (kubelet, containerd, mounts, iptables, network namespaces)"
  case $NODES in 1|2) ;; *) die "--nodes: 1 or 2, not $NODES" ;; esac
  if [ -d "$RUN" ] && ! alive kube-apiserver; then log "stale state from an earlier run: cleaning up first"; down; fi
  mkdir -p "$STATE" "$RUN" "$OUT/logs"
  echo "$NODES" >"$STATE/nodes"
  resolve_binaries
  pki
  kubeconfig "$ADMIN_KUBECONFIG" admin
  network_up
  control_plane_up
  local n
  for n in $(seq "$NODES"); do node_vars "$n"; node_up; done
  for n in $(seq "$NODES"); do node_vars "$n"; wait_for "node $NODE" 120 node_ready "$NODE"; done
  dns_up
  storage_up
  argo_up
  cp "$ADMIN_KUBECONFIG" "$OUT/kubeconfig"
  log "up with $NODES node(s). Use it with:"
  log "  export KUBECONFIG=$OUT/kubeconfig"
  log "  $KUBE_BIN/kubectl get nodes"
  log "storage classes local-hostpath (default), local-hostpath-sized, network-hostpath, no-snapshots-hostpath (all WaitForFirstConsumer);"
  log "snapshot classes local-hostpath-snapshots, network-hostpath-snapshots; logs in $OUT/logs"
}

# node_down I: stop node I's kubelet, kube-proxy, containerd and every container of it
node_down() {
  node_vars "$1"
  local id
  stop_component "kubelet-n$N"; stop_component "kube-proxy-n$N"
  if [ -S "$NRUN/containerd.sock" ]; then
    for id in $(CTR -n "$N" tasks ls -q 2>/dev/null); do CTR -n "$N" tasks kill -s KILL "$id" 2>/dev/null || true; done
    sleep 1
    for id in $(CTR -n "$N" tasks ls -q 2>/dev/null); do CTR -n "$N" tasks delete -f "$id" 2>/dev/null || true; done
    for id in $(CTR -n "$N" containers ls -q 2>/dev/null); do CTR -n "$N" containers delete "$id" 2>/dev/null || true; done
  fi
  stop_component "containerd-n$N"
  # shims of pod sandboxes outlive containerd
  for f in "$NRUN"/containerd/io.containerd.runtime.v2.task/k8s.io/*/shim.pid; do
    if [ -f "$f" ]; then kill -9 "$(cat "$f")" 2>/dev/null || true; fi
  done
}

down() {
  local c n f
  # kubelets first, so that they do not restart what is stopped below
  for n in 1 2; do stop_component "kubelet-n$n"; done
  for c in coredns snapshot-controller kube-scheduler kube-controller-manager; do stop_component "$c"; done
  for f in "$RUN"/csi-*.pid; do
    if [ -f "$f" ]; then stop_component "$(basename "$f" .pid)"; fi
  done
  for n in 1 2; do node_down "$n"; done
  stop_component kube-apiserver
  stop_component etcd
  # anything else still running that names our state (a crash may have lost a pid file)
  pkill -9 -f -- "$STATE/" 2>/dev/null || true
  pkill -9 -f -- "$RUN/" 2>/dev/null || true
  # mounts: volumes, pod directories, containerd snapshots, network namespaces
  grep -E " ($STATE|$RUN)[/ ]" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null || true; done || true
  for n in /var/run/netns/cni-*; do
    [ -e "$n" ] || continue
    if ip netns exec "$(basename "$n")" ip -br addr 2>/dev/null | grep -q "10\.244\."; then ip netns del "$(basename "$n")" 2>/dev/null || true; fi
  done
  # node 2's netns: its bridge, veth, routes and iptables rules go with it
  ip netns del rbl-n2 2>/dev/null || true; ip link del rbl-n2 2>/dev/null || true
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
  # the kubelets' and containerd's cgroups (cgroupfs driver), once empty
  for h in /sys/fs/cgroup/*/; do
    for c in kubepods k8s.io rbl-n2; do
      if [ -d "$h$c" ]; then find "$h$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true; fi
    done
  done
  rm -rf "$STATE" "$RUN" "$OUT/kubeconfig"
  log "down: processes, mounts, netns rbl-n2, bridge $BRIDGE, iptables rules and $STATE removed"
}

# check: every node runs a pod that reaches a Service by name, served from another node; every
# StorageClass provisions a volume on the last node
check() {
  KUBE_BIN=$(cat "$STATE/kube-bin"); KUBECTL="$KUBE_BIN/kubectl --kubeconfig $ADMIN_KUBECONFIG"
  NODES=$(cat "$STATE/nodes")
  local ns=local-cluster-check n last m pods=""
  node_vars "$NODES"; last=$NODE
  $KUBECTL delete namespace "$ns" --ignore-not-found --wait >/dev/null
  $KUBECTL create namespace "$ns" >/dev/null
  # the server on node 1, behind a Service
  $KUBECTL -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: server, labels: {app: server}}
spec:
  nodeName: $NODE_PREFIX-1
  containers:
  - {name: minio, image: $RDF_BULKLOAD_MINIO_IMAGE, imagePullPolicy: Never, args: [minio, server, /data, --address, ":9000"],
     volumeMounts: [{name: data, mountPath: /data}, {name: tmp, mountPath: /tmp}]}
  volumes: [{name: data, emptyDir: {}}, {name: tmp, emptyDir: {}}]
---
apiVersion: v1
kind: Service
metadata: {name: server}
spec: {selector: {app: server}, ports: [{port: 9000}]}
EOF
  for n in $(seq "$NODES"); do
    node_vars "$n"
    $KUBECTL -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: client-n$n}
spec:
  nodeName: $NODE
  restartPolicy: OnFailure
  containers:
  - {name: wget, image: $RDF_BULKLOAD_MINIO_IMAGE, imagePullPolicy: Never, command: [sh, -c],
     args: ["until wget -q -O /dev/null http://server.$ns.svc.$CLUSTER_DOMAIN:9000/minio/health/live; do sleep 1; done"]}
EOF
    pods+=" client-n$n"
  done
  for m in $CSI_MODES sized; do
    local sc; sc=$(storage_class "$m"); [ "$m" != sized ] || sc=local-hostpath-sized
    $KUBECTL -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: $sc}
spec: {storageClassName: $sc, accessModes: [ReadWriteOnce], resources: {requests: {storage: 64Mi}}}
---
apiVersion: v1
kind: Pod
metadata: {name: volume-$sc}
spec:
  # through the scheduler (not nodeName), which picks the WaitForFirstConsumer claim's node
  nodeSelector: {kubernetes.io/hostname: $last}
  restartPolicy: OnFailure
  containers:
  - {name: write, image: $RDF_BULKLOAD_MINIO_IMAGE, imagePullPolicy: Never, command: [sh, -c], args: ["echo ok > /v/f && cat /v/f"],
     volumeMounts: [{name: v, mountPath: /v}]}
  volumes: [{name: v, persistentVolumeClaim: {claimName: $sc}}]
EOF
    pods+=" volume-$sc"
  done
  local p ok=1
  for p in $pods; do
    if ! $KUBECTL -n "$ns" wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$p" --timeout 120s >/dev/null 2>&1; then
      log "check: pod $p did not succeed:"; $KUBECTL -n "$ns" describe pod "$p" | tail -15 >&2; ok=
    fi
  done
  $KUBECTL get nodes -o wide >&2
  $KUBECTL -n "$ns" get pods,pvc -o wide >&2
  [ -n "$ok" ] || die "check failed (namespace $ns kept)"
  $KUBECTL delete namespace "$ns" --wait >/dev/null
  log "check: every node reached a Service by name on node 1; every StorageClass provisioned a volume on $last"
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
  for c in $(components); do
    if alive "$c"; then state="running (pid $(cat "$RUN/$c.pid"))"; else state="stopped"; fi
    printf '%-24s %s\n' "$c" "$state"
  done
  if alive kube-apiserver && [ -f "$ADMIN_KUBECONFIG" ]; then
    "$(cat "$STATE/kube-bin")/kubectl" --kubeconfig "$ADMIN_KUBECONFIG" get nodes -o wide || true
  fi
}

case "${1:-}" in
  up)
    shift
    while [ $# -gt 0 ]; do
      case $1 in --nodes) NODES=${2:?--nodes N}; shift 2 ;; --nodes=*) NODES=${1#--nodes=}; shift ;; *) die "up: unknown option $1" ;; esac
    done
    up ;;
  down) down ;;
  status) status ;;
  check) resolve_images_env; check ;;
  logs) tail -n 50 "$OUT"/logs/*.log ;;
  ctr) shift; CTR "$@" ;;
  node-stop)
    n=${2:?node-stop I|NAME}; n=${n##*-}   # rdf-bulkload-node-2 -> 2
    node_down "$n"; log "node $NODE stopped (kubelet, kube-proxy, containerd, its containers)" ;;
  node-start)
    n=${2:?node-start I|NAME}; n=${n##*-}
    NODES=$(cat "$STATE/nodes"); resolve_binaries; node_vars "$n"; node_up
    wait_for "node $NODE" 120 node_ready "$NODE"; log "node $NODE started again" ;;
  *) echo "usage: $0 up [--nodes N]|down|status|logs|ctr [-n I] ARGS...|check|node-stop I|NAME|node-start I|NAME" >&2; exit 2 ;;
esac
