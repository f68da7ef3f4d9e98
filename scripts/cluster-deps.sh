#!/usr/bin/env bash
# Debian packages the cluster tier (make cluster) needs beside Go: containerd and runc run the
# pods, mmdebstrap builds the Python image's root, iptables and conntrack serve kube-proxy, nftables
# saves and restores the ruleset around the cluster's life. Installs only what is missing.
set -euo pipefail
need=()
for pair in ss:iproute2 ip:iproute2 containerd:containerd ctr:containerd runc:runc mmdebstrap:mmdebstrap \
  iptables:iptables conntrack:conntrack nft:nftables openssl:openssl go:golang; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need+=("${pair#*:}")
done
[[ " ${need[*]} " == *" golang "* ]] && {
  echo "cluster: go is missing; the cluster tier builds its programs with Go 1.24 or later" >&2
  exit 2
}
[ ${#need[@]} -eq 0 ] && exit 0
[ "$(id -u)" -eq 0 ] || { echo "cluster: needs root to install ${need[*]}; run it as root" >&2; exit 2; }
echo "installing Debian packages: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
