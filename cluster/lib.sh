# Shared by the cluster tier's scripts: where things live, and one way to fail.
# shellcheck shell=bash

# Built programs and images are cached outside the repository (a fresh clone builds once per
# machine); the running cluster's state lives under $state, removed by down.sh.
KFP_BENCH_CLUSTER_CACHE="${KFP_BENCH_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kfp-bench/cluster}"
state="${KFP_BENCH_CLUSTER_STATE:-/var/lib/kfp-bench-cluster}"
run="/run/kfp-bench-cluster"

die() {
  echo "cluster: $*" >&2
  exit 2
}

# The cache folder of one build group: its name and the first 12 hex digits of its go.sum's hash,
# so a change of any pinned version builds anew.
group_bin() {
  local group=$1 key
  key="$(cat "$here/modules/$group/go.mod" "$here/modules/$group/go.sum" | sha256sum | cut -c1-12)"
  echo "$KFP_BENCH_CLUSTER_CACHE/bin/$group-$key"
}

# established SELECTOR: wait up to 60 s until the CRDs of SELECTOR are established. kubectl wait
# fails at once, instead of waiting, on an object that has no status.conditions yet ("accessor
# error: <nil>"), which a CRD applied a moment before may not have: so it is asked again.
established() {
  local end=$((SECONDS + 60))
  until kubectl wait --for condition=established --timeout=10s crd -l "$1" >/dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 1
  done
}

# tier_start NAME FIX: the start of a script that adds NAME to the running cluster (kserve.sh,
# knative.sh): root, a cluster up (else FIX says how to start one), and `step` lines that name
# NAME with the seconds since the start.
tier_start() {
  tier=$1
  t0=$SECONDS
  [[ $(id -u) -eq 0 ]] || die "needs root (it imports images into the cluster's containerd); run it as root"
  [[ -e "$state/started" && -f "$repo/.cluster/env" ]] || die "no cluster is up; $2"
}
step() { echo "cluster $tier: $* ($((SECONDS - t0)) s)"; }

# tier_on_kserve NAME KEY WHAT: tier_start for a tier added beside KServe (knative.sh, keda.sh):
# KServe must be up, and with KEY in .cluster/env already (WHAT is up) there is nothing to do.
tier_on_kserve() {
  tier_start "$1" "make cluster-$1 starts one with KServe and $3"
  grep -q '^KSERVE_MODEL_URI=' "$repo/.cluster/env" ||
    die "KServe is not on the cluster; make cluster-kserve adds it (make cluster-$1 does both)"
  if grep -q "^$2=" "$repo/.cluster/env"; then
    echo "cluster $1: $3 is up already"
    exit 0
  fi
}

# import_images NAME...: the archives images.sh built, into the cluster's containerd.
import_images() {
  local name
  for name in "$@"; do
    ctr --address "$run/containerd.sock" -n k8s.io images import --no-unpack \
      "$KFP_BENCH_CLUSTER_CACHE/images/$name.tar" >/dev/null
  done
}
