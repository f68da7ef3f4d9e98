#!/usr/bin/env bash
# make cluster-down: stops the cluster up.sh started, whole or half-started, and leaves the machine
# as up.sh found it: no process, container, mount, network namespace, bridge, iptables rule or
# cgroup of the cluster's, every sysctl it changed restored, its state folder gone. The build and
# image caches stay. Safe to run twice; says what it removed and what it could not.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
. "$here/lib.sh"
bridge=kfpb0

[[ $(id -u) -eq 0 ]] || die "needs root; run it as root"
if [[ ! -e "$state" && ! -e "$run" ]]; then
  echo "cluster: no cluster is up (nothing at $state)"
  rm -rf "$repo/.cluster"
  exit 0
fi
left=()

# stop NAME...: SIGTERM, then SIGKILL after 10 s, each program's whole session.
stop() {
  local name pid
  for name in "$@"; do
    [[ -f "$run/$name.pid" ]] || continue
    pid="$(cat "$run/$name.pid")"
    kill -TERM -- "-$pid" 2>/dev/null
  done
  for name in "$@"; do
    [[ -f "$run/$name.pid" ]] || continue
    pid="$(cat "$run/$name.pid")"
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL -- "-$pid" 2>/dev/null
    rm -f "$run/$name.pid"
  done
}

# The node's programs first, so nothing restarts a container while the containers go.
stop kubelet kube-proxy
# Every container: its shim's session is its own, so each is killed by the processes under the
# containerd state folder (the shims and what runs in them).
for shim in $(pgrep -f "containerd-shim-runc-v2 -namespace k8s.io .*-address $run/containerd.sock"); do
  pkill -KILL -P "$shim" 2>/dev/null
  kill -KILL "$shim" 2>/dev/null
done
stop containerd
# Processes still in a pod's cgroup (a container's children that escaped its shim).
if [[ -d /sys/fs/cgroup/pids/kubepods ]]; then
  find /sys/fs/cgroup/pids/kubepods -name tasks -exec cat {} + | xargs -r kill -KILL 2>/dev/null
fi
stop kube-scheduler kube-controller-manager kube-apiserver etcd

# Mounts under the cluster's folders and the pods' network namespaces, deepest first.
for pass in 1 2 3; do
  mapfile -t mounts < <(awk '{print $5}' /proc/self/mountinfo |
    grep -E "^($state|$run|/run/netns/cni-|/var/run/netns/cni-)" | sort -r)
  [[ ${#mounts[@]} -eq 0 ]] && break
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null || { ((pass == 3)) && umount -l "$m"; }; done
done
for ns in /run/netns/cni-*; do [[ -e "$ns" ]] && rm -f "$ns"; done

# Cgroups made since up.sh started (kubelet's kubepods tree), deepest first.
for hierarchy in /sys/fs/cgroup/*/; do
  [[ -d "$hierarchy/kubepods" ]] || continue
  find "$hierarchy/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null
  [[ -d "$hierarchy/kubepods" ]] && left+=("cgroup $hierarchy/kubepods")
done

# The bridge (its veths went with the pods' namespaces), and the netfilter ruleset (every iptables
# rule and chain of kube-proxy, kubelet and the CNI plugins) put back as saved before the start.
ip link show "$bridge" >/dev/null 2>&1 && ip link del "$bridge"
if [[ -f "$state/ruleset.nft" ]]; then
  { echo "flush ruleset"; cat "$state/ruleset.nft"; } | nft -f - ||
    left+=("netfilter rules (the ruleset before is $state/ruleset.nft)")
fi

if [[ -f "$state/sysctls" ]]; then
  while IFS= read -r line; do sysctl -qw "$line" || left+=("sysctl $line"); done <"$state/sysctls"
fi
# kubelet's links to the pods' logs, where /var/log/containers was there before.
find /var/log/containers -maxdepth 1 -lname "$state/*" -delete 2>/dev/null
if [[ -f "$state/made" ]]; then
  while IFS= read -r path; do rm -rf "$path"; done <"$state/made"
fi

# What is left, looked for afresh: processes, mounts, network namespaces, the bridge, rules, cgroups.
leftover="$(pgrep -af "$state|$run|$KFP_BENCH_CLUSTER_CACHE/bin|containerd-shim-runc-v2 -namespace k8s.io" || true)"
[[ -n "$leftover" ]] && left+=("processes: $leftover")
mounts="$(awk '{print $5}' /proc/self/mountinfo | grep -E "^($state|$run|/run/netns/cni-)" || true)"
[[ -n "$mounts" ]] && left+=("mounts: $mounts")
compgen -G "/run/netns/cni-*" >/dev/null && left+=("network namespaces: $(ls /run/netns)")
ip link show "$bridge" >/dev/null 2>&1 && left+=("the bridge $bridge")
if [[ -f "$state/ruleset.nft" ]] && ! diff -q <(nft list ruleset) "$state/ruleset.nft" >/dev/null; then
  left+=("netfilter rules differ from before the cluster ($state/ruleset.nft)")
fi
compgen -G "/sys/fs/cgroup/*/kubepods" >/dev/null && left+=("cgroups: $(echo /sys/fs/cgroup/*/kubepods)")
if [[ ${#left[@]} -eq 0 ]]; then
  rm -rf "$state" "$run" "$repo/.cluster"
  echo "cluster: down; nothing of it is left"
else
  printf 'cluster: down, but left: %s\n' "${left[@]}" >&2
  exit 1
fi
