#!/usr/bin/env bash
# Builds the cluster tier's programs with `go build` from their upstream modules on the Go module
# proxy, at the versions named in build/*/go.mod, once: each group's binaries are cached outside
# the repository under $KFP_BENCH_CLUSTER_CACHE/bin/<group>-<key>, keyed by the group's go.sum.
# Prints one line per group (built, with its time, or cached). Nothing here is committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"

k8s_version=v1.34.4
# group: the main packages it builds (from its go.mod's requirements)
declare -A packages=(
  [k8s]="k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
         k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet
         k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl"
  [etcd]="go.etcd.io/etcd/server/v3"
  [coredns]="github.com/coredns/coredns"
  [cni]="github.com/containernetworking/plugins/plugins/main/bridge
         github.com/containernetworking/plugins/plugins/main/loopback
         github.com/containernetworking/plugins/plugins/ipam/host-local
         github.com/containernetworking/plugins/plugins/meta/portmap"
  [argo]="github.com/argoproj/argo-workflows/v3/cmd/workflow-controller
          github.com/argoproj/argo-workflows/v3/cmd/argoexec"
  [kserve]="github.com/kserve/kserve/cmd/manager github.com/kserve/kserve/cmd/localmodel"
  [rbac-proxy]="github.com/brancz/kube-rbac-proxy/cmd/kube-rbac-proxy"
  [metrics-server]="sigs.k8s.io/metrics-server/cmd/metrics-server"
  [knative]="knative.dev/serving/cmd/controller knative.dev/serving/cmd/webhook
             knative.dev/serving/cmd/activator knative.dev/serving/cmd/autoscaler
             knative.dev/serving/cmd/queue"
  [keda]="github.com/kedacore/keda/v2/cmd/operator github.com/kedacore/keda/v2/cmd/adapter
          github.com/kedacore/keda/v2/cmd/webhooks"
)
# Version stamps, as the upstream builds set them (kubernetes hack/lib/version.sh; the Makefiles of
# argo, kube-rbac-proxy, metrics-server and KEDA: its GO_LDFLAGS, VERSION as the release tags its
# images; its GitCommit is left empty, the module zip does not name it).
minor=${k8s_version#v1.}; minor=${minor%%.*}
declare -A ldflags=(
  [k8s]="-X k8s.io/component-base/version.gitVersion=$k8s_version
         -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor
         -X k8s.io/component-base/version.gitTreeState=clean
         -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version"
  [argo]="-X github.com/argoproj/argo-workflows/v3.version=v3.7.3"
  [kserve]=""
  [rbac-proxy]="-X k8s.io/component-base/version.gitVersion=v0.18.0"
  [metrics-server]="-X k8s.io/client-go/pkg/version.gitVersion=v0.8.0"
  [coredns]=""
  [etcd]=""
  [cni]=""
  [knative]=""
  [keda]="-X github.com/kedacore/keda/v2/version.Version=2.16.1"
)

# Argo's module zip lacks workflow/executor/osspecific/signal_linux.go: upstream it is a symlink to
# signal_darwin.go (module zips hold no symlinks), so argoexec does not build for Linux from the
# proxy's zip. The build uses a copy of the module with the link put back (go build refuses an
# overlay of files in the module cache), through a go.mod that replaces the module with the copy.
# Prints the go build flag.
modfile_argo() {
  local work=$1 module src
  module="$(cd "$here/modules/argo" && go mod download -json github.com/argoproj/argo-workflows/v3 |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
  src="$work/argo-workflows"
  cp -r "$module" "$src"
  chmod -R u+w "$src"
  ln -s signal_darwin.go "$src/workflow/executor/osspecific/signal_linux.go"
  cp "$here/modules/argo/go.mod" "$here/modules/argo/go.sum" "$work/"
  echo "replace github.com/argoproj/argo-workflows/v3 => $src" >>"$work/go.mod"
  echo "-modfile=$work/go.mod"
}

build_group() {
  local group=$1 out
  out="$(group_bin "$group")"
  if [[ -f "$out/.complete" ]]; then
    echo "cluster build: $group cached ($out)"
    return
  fi
  rm -rf "$out.tmp" "$out.src"
  mkdir -p "$out.tmp"
  local start=$SECONDS
  echo "cluster build: $group: go build ${packages[$group]//$'\n'/ }" | tr -s ' '
  local modfile=""
  if declare -F "modfile_$group" >/dev/null; then
    mkdir -p "$out.src"
    modfile="$("modfile_$group" "$out.src")"
  fi
  (
    cd "$here/modules/$group"
    # Static where upstream builds static (argoexec and the launcher run in images with no libc of
    # ours); the CNI plugins and etcd as upstream's release builds.
    CGO_ENABLED=0 go build -trimpath -mod=mod $modfile -o "$out.tmp/" \
      -ldflags "-s -w ${ldflags[$group]//$'\n'/ }" ${packages[$group]}
  )
  # etcd's main package is its server module's root: go build names the binary "server".
  [[ $group == etcd ]] && mv "$out.tmp/server" "$out.tmp/etcd"
  # KEDA's Makefile names its programs (manager, adapter, webhooks targets) apart from their folders.
  if [[ $group == keda ]]; then
    mv "$out.tmp/operator" "$out.tmp/keda"
    mv "$out.tmp/adapter" "$out.tmp/keda-adapter"
    mv "$out.tmp/webhooks" "$out.tmp/keda-admission-webhooks"
  fi
  rm -rf "$out.src"
  touch "$out.tmp/.complete"
  rm -rf "$out"
  mv "$out.tmp" "$out"
  echo "cluster build: $group built in $((SECONDS - start)) s"
}

groups=("$@")
[[ ${#groups[@]} -gt 0 ]] || groups=(cni etcd coredns argo k8s)
# (the KServe tier's groups, kserve rbac-proxy metrics-server, are built by up.sh --kserve;
# knative and keda by cluster/knative.sh and cluster/keda.sh)
for group in "${groups[@]}"; do
  [[ -n "${packages[$group]:-}" ]] || die "unknown build group '$group' (known: ${!packages[*]})"
  build_group "$group"
done
