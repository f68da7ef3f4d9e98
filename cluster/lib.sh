# Shared by the cluster tier's scripts: where things live, and one way to fail.
# shellcheck shell=bash

# Built programs and images are cached outside the repository (a fresh clone builds once per
# machine); the running cluster's state lives under $state, removed by down.sh.
KFP_BENCH_CLUSTER_CACHE="${KFP_BENCH_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kfp-bench/cluster}"
state="${KFP_BENCH_CLUSTER_STATE:-/var/lib/kfp-bench-cluster}"

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
