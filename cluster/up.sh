#!/usr/bin/env bash
# make cluster: a single-node Kubernetes 1.34 on this machine, from programs built by build.sh and
# images built by images.sh, then the objects of manifests/ (CoreDNS, Argo, SeaweedFS).
# Checks first (root, kernel features, free ports), records every sysctl it changes so that
# down.sh restores it, and writes .cluster/env (KUBECONFIG=..., KFP_HOST=...) when Ready.
# A failure part-way leaves what started for down.sh to take away (make cluster-down).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
. "$here/lib.sh"

node=kfp-bench
pod_cidr=10.244.0.0/24
service_cidr=10.96.0.0/16
cluster_dns=10.96.0.10
bridge=kfpb0
ports=(2379 2380 6443 10248 10249 10250 10256 10257 10259)

t0=$SECONDS
step() { echo "cluster: $* ($((SECONDS - t0)) s)"; }

# -- checks, before anything is made --------------------------------------------------------
[[ $(id -u) -eq 0 ]] || die "needs root (it runs containerd, kubelet and iptables); run it as root"
[[ -e "$state/started" ]] && die "a cluster is up already ($state); run make cluster-down first"
command -v ss >/dev/null || die "ss is missing (Debian's iproute2); run scripts/cluster-deps.sh"
for port in "${ports[@]}"; do
  if ss -Hltn "sport = :$port" | grep -q .; then
    die "port $port is taken ($(ss -Hltnp "sport = :$port" | grep -o 'users:.*' | head -1)); stop what holds it"
  fi
done
for tool in ip iptables nft containerd ctr runc conntrack openssl mmdebstrap go; do
  command -v "$tool" >/dev/null || die "$tool is missing; run scripts/cluster-deps.sh"
done
ip link add kfpb-probe type bridge 2>/dev/null && ip link del kfpb-probe ||
  die "the kernel cannot make a bridge interface (CONFIG_BRIDGE): pods need one"
ip link add kfpb-probe type veth peer name kfpb-probe1 2>/dev/null && ip link del kfpb-probe ||
  die "the kernel cannot make a veth pair (CONFIG_VETH): pods need one"
grep -qw overlay /proc/filesystems || die "the kernel has no overlayfs (CONFIG_OVERLAY_FS)"
[[ -e /proc/sys/net/bridge ]] ||
  die "the kernel has no br_netfilter (CONFIG_BRIDGE_NETFILTER): Services cannot reach pods"
iptables -t nat -L -n >/dev/null 2>&1 || die "iptables cannot list the nat table (CONFIG_NF_NAT)"
[[ -d /sys/fs/cgroup/memory && -d /sys/fs/cgroup/cpu ]] ||
  die "no cgroup v1 memory and cpu hierarchies under /sys/fs/cgroup (kubelet runs on cgroup v1 here)"

# -- build (cached) -----------------------------------------------------------------------------
"$here/build.sh"
"$here/images.sh"
k8s="$(group_bin k8s)" etcd="$(group_bin etcd)" cni="$(group_bin cni)"
kubectl() { "$k8s/kubectl" --kubeconfig "$state/admin.kubeconfig" "$@"; }

# -- state, and what to restore ---------------------------------------------------------------
mkdir -p "$state"/{pki,logs,manifests} "$run"
touch "$state/started"
# The whole netfilter ruleset as it is (iptables here is iptables-nft), for down.sh to put back.
nft list ruleset >"$state/ruleset.nft"
node_ip="$(ip -4 -o addr show "$(ip -4 route show default | awk '{print $5; exit}')" |
  awk '{split($4, a, "/"); print a[1]; exit}')"
[[ -n "$node_ip" ]] || die "no IPv4 address on the default route's interface: the node needs one"
echo "$node_ip" >"$state/node-ip"
# Every sysctl set here or by kubelet and kube-proxy, with its value now, for down.sh.
: >"$state/sysctls"
for key in net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables fs.inotify.max_user_instances \
  kernel.panic kernel.panic_on_oops vm.overcommit_memory net.ipv4.conf.all.route_localnet \
  kernel.keys.root_maxkeys kernel.keys.root_maxbytes; do
  echo "$key=$(sysctl -n "$key")" >>"$state/sysctls"
done
# Folders the programs make outside $state whatever they are told (libcni's cache, the pods'
# network namespaces, the shims' sockets and runc's state, kubelet's log links): those that are
# not here now are removed by down.sh.
for path in /var/lib/cni /etc/cni /run/netns /run/containerd /var/log/containers /var/log/pods \
  /var/lib/kubelet /etc/kubernetes; do
  [[ -e "$path" ]] || echo "$path" >>"$state/made"
done
sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 \
  fs.inotify.max_user_instances=1024

# -- certificates and kubeconfigs --------------------------------------------------------------
pki="$state/pki"
openssl_quiet() { openssl "$@" 2>/dev/null; }
openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=kfp-bench-cluster-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt"
# cert NAME SUBJECT [SANS]: a key and a certificate signed by the cluster's CA.
cert() {
  local name=$1 subject=$2 sans=${3:-}
  openssl_quiet req -newkey rsa:2048 -nodes -subj "$subject" -keyout "$pki/$name.key" -out "$pki/$name.csr"
  local ext="$pki/$name.ext"
  echo "extendedKeyUsage=serverAuth,clientAuth" >"$ext"
  [[ -n "$sans" ]] && echo "subjectAltName=$sans" >>"$ext"
  openssl_quiet x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
    -CAcreateserial -days 30 -extfile "$ext" -out "$pki/$name.crt"
}
cert apiserver "/CN=kube-apiserver" "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1,IP:127.0.0.1,IP:$node_ip"
cert etcd "/CN=etcd" "DNS:localhost,IP:127.0.0.1"
# One identity per component, as kubeadm makes them (cmd/kubeadm/app/phases/kubeconfig).
cert admin "/O=system:masters/CN=kubernetes-admin"
cert controller-manager "/CN=system:kube-controller-manager"
cert scheduler "/CN=system:kube-scheduler"
cert kubelet "/O=system:nodes/CN=system:node:$node" "DNS:$node,IP:$node_ip"
cert kube-proxy "/CN=system:kube-proxy"
cert apiserver-kubelet-client "/O=kubeadm:cluster-admins/CN=kube-apiserver-kubelet-client"
openssl_quiet genrsa -out "$pki/sa.key" 2048
openssl_quiet rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
for who in admin controller-manager scheduler kubelet kube-proxy; do
  cat >"$state/$who.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: kfp-bench
  cluster: {certificate-authority: $pki/ca.crt, server: "https://$node_ip:6443"}
users:
- name: $who
  user: {client-certificate: $pki/$who.crt, client-key: $pki/$who.key}
contexts:
- name: kfp-bench
  context: {cluster: kfp-bench, user: $who}
current-context: kfp-bench
EOF
done

# start NAME COMMAND...: a program of the cluster in a session of its own, its output logged.
start() {
  local name=$1
  shift
  setsid "$@" >"$state/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$run/$name.pid"
}
# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, or die naming WHAT and its log.
wait_for() {
  local what=$1 limit=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS > deadline)); then
      die "$what was not ready after $limit s (logs: $state/logs); make cluster-down takes away what started"
    fi
    sleep 0.5
  done
}

# -- etcd, the control plane -----------------------------------------------------------------
step "starting etcd, kube-apiserver"
start etcd "$etcd/etcd" --name "$node" --data-dir "$state/etcd" \
  --listen-client-urls https://127.0.0.1:2379 --advertise-client-urls https://127.0.0.1:2379 \
  --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
  --initial-cluster "$node=http://127.0.0.1:2380" \
  --cert-file "$pki/etcd.crt" --key-file "$pki/etcd.key" --client-cert-auth \
  --trusted-ca-file "$pki/ca.crt" --quota-backend-bytes 8589934592 --log-level warn
start kube-apiserver "$k8s/kube-apiserver" --advertise-address "$node_ip" --secure-port 6443 \
  --etcd-servers https://127.0.0.1:2379 --etcd-cafile "$pki/ca.crt" \
  --etcd-certfile "$pki/admin.crt" --etcd-keyfile "$pki/admin.key" \
  --client-ca-file "$pki/ca.crt" --tls-cert-file "$pki/apiserver.crt" \
  --tls-private-key-file "$pki/apiserver.key" \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-cluster-ip-range "$service_cidr" --authorization-mode Node,RBAC \
  --kubelet-preferred-address-types InternalIP \
  --enable-admission-plugins NodeRestriction --allow-privileged \
  --requestheader-client-ca-file "$pki/ca.crt" --proxy-client-cert-file "$pki/admin.crt" \
  --proxy-client-key-file "$pki/admin.key" --requestheader-allowed-names "" \
  --requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
  --requestheader-extra-headers-prefix X-Remote-Extra-
wait_for "kube-apiserver" 90 kubectl get --raw /readyz
# The kubeadm:cluster-admins group of the apiserver's kubelet client (kubeadm's binding).
kubectl create clusterrolebinding kubeadm:cluster-admins --clusterrole cluster-admin \
  --group kubeadm:cluster-admins >/dev/null

step "starting kube-controller-manager, kube-scheduler"
start kube-controller-manager "$k8s/kube-controller-manager" \
  --kubeconfig "$state/controller-manager.kubeconfig" \
  --authentication-kubeconfig "$state/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$state/controller-manager.kubeconfig" \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --use-service-account-credentials --service-cluster-ip-range "$service_cidr" \
  --cluster-signing-cert-file "$pki/ca.crt" --cluster-signing-key-file "$pki/ca.key" \
  --bind-address 127.0.0.1 --leader-elect=false
start kube-scheduler "$k8s/kube-scheduler" --kubeconfig "$state/scheduler.kubeconfig" \
  --authentication-kubeconfig "$state/scheduler.kubeconfig" \
  --authorization-kubeconfig "$state/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --leader-elect=false

# -- containerd, kubelet, kube-proxy ---------------------------------------------------------
step "starting containerd, importing images"
mkdir -p "$state/cni/net.d" "$state/cni/networks"
cat >"$state/cni/net.d/10-kfp-bench.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "kfp-bench",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": "$state/cni/networks",
              "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
# containerd's CRI settings this machine needs (../shared notes): restrict_oom_score_adj, as the
# VM's bounding set lacks CAP_SYS_RESOURCE; cgroupfs, as kubelet's driver; the built pause image.
cat >"$state/containerd.toml" <<EOF
version = 2
root = "$state/containerd"
state = "$run/containerd"
[grpc]
  address = "$run/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$cni"
    conf_dir = "$state/cni/net.d"
EOF
start containerd containerd --config "$state/containerd.toml"
wait_for containerd 30 ctr --address "$run/containerd.sock" version
for archive in "$KFP_BENCH_CLUSTER_CACHE"/images/*.tar; do
  ctr --address "$run/containerd.sock" -n k8s.io images import --no-unpack "$archive" >/dev/null
done

step "starting kubelet, kube-proxy"
cat >"$state/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $node_ip
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $pki/kubelet.crt
tlsPrivateKeyFile: $pki/kubelet.key
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$run/containerd.sock
clusterDNS: [$cluster_dns]
clusterDomain: cluster.local
resolvConf: /etc/resolv.conf
failSwapOn: false
# Without CAP_SYS_RESOURCE a negative oom_score_adj cannot be written.
oomScoreAdj: 0
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
podLogsDir: $state/pod-logs
maxPods: 250
# No registry can give an image back: never collect imported images, never evict for disk.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "200Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
EOF
start kubelet "$k8s/kubelet" --config "$state/kubelet.yaml" --kubeconfig "$state/kubelet.kubeconfig" \
  --hostname-override "$node" --node-ip "$node_ip" --root-dir "$state/kubelet" \
  --cert-dir "$state/kubelet/pki"
cat >"$state/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $state/kube-proxy.kubeconfig}
clusterCIDR: 10.244.0.0/16
hostnameOverride: $node
bindAddress: $node_ip
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# Leave nf_conntrack_max and its timeouts as they are (maxPerCore 0: kube-proxy sets nothing).
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
# A Service address without kube-proxy's rule yet (a Service just made) must not leave the node:
# this VM's egress answers any address on port 443, and a client's kept-alive connection to it
# never reaches the Service (the apiserver's check of an APIService saw a 404 for ever). Refused
# here instead, as kube-proxy refuses a Service with no endpoints; down.sh restores the ruleset.
for chain in OUTPUT FORWARD; do
  iptables -A "$chain" -d "$service_cidr" -m conntrack ! --ctstate DNAT -j REJECT
done
start kube-proxy "$k8s/kube-proxy" --config "$state/kube-proxy.yaml"
wait_for "the node" 120 kubectl wait --for=condition=Ready "node/$node" --timeout=5s

# -- objects -----------------------------------------------------------------------------------
step "applying manifests (CoreDNS, Argo, SeaweedFS)"
"$here/manifests.sh" "$state/admin.kubeconfig" "$k8s/kubectl"

mkdir -p "$repo/.cluster"
cp "$state/admin.kubeconfig" "$repo/.cluster/kubeconfig"
{
  echo "KUBECONFIG=$repo/.cluster/kubeconfig"
  echo "KFP_BENCH_CLUSTER_STATE=$state"
  echo "MODEL_SERVER_IMAGE=$(cat "$KFP_BENCH_CLUSTER_CACHE/images/model-server.ref")"
} >"$repo/.cluster/env"
step "Ready"
echo "KUBECONFIG=$repo/.cluster/kubeconfig"
