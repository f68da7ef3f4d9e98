#!/usr/bin/env bash
# make cluster-keda: adds KEDA v2.16.1 to the cluster kserve.sh set up (docs/real-kfp.md#keda): its
# operator (cmd/operator), metrics API server (cmd/adapter) and admission webhooks (cmd/webhooks),
# each built from its Go module and made an image as its Dockerfiles make them, with the objects
# of its release (cluster/manifests/keda/kustomization.yaml says what differs). The operator makes
# and rotates its own certificates: the Secret kedaorg-certs, and the caBundle of its webhooks and
# of the APIService v1beta1.external.metrics.k8s.io. KServe's controller is then restarted: it
# looks for KEDA's ScaledObject CRD when it starts (kserve v0.15.2 cmd/manager/main.go:205).
# Appends KEDA_VERSION to .cluster/env when Ready. make cluster-down takes it away with the rest:
# every object lives in the cluster's etcd, every image in its containerd.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
. "$here/lib.sh"
tier_on_kserve keda KEDA_VERSION "KEDA"

step "building (cached)"
"$here/build.sh" keda
images=(keda keda-metrics-apiserver keda-admission-webhooks)
"$here/images.sh" "${images[@]}"
import_images "${images[@]}"
k8s="$(group_bin k8s)"
kubectl() { "$k8s/kubectl" --kubeconfig "$state/admin.kubeconfig" "$@"; }

step "KEDA's CRDs and objects"
work="$state/manifests/keda"
mkdir -p "$work"
cp "$here/manifests/keda/kustomization.yaml" "$work/"
dir="$(cd "$here/modules/keda" && go list -m -f '{{.Dir}}' github.com/kedacore/keda/v2)"
rm -rf "$work/upstream"
cp -r "$dir/config" "$work/upstream"
chmod -R u+w "$work/upstream"
# as KEDA's Makefile, target release: the version label of every object
sed -i -e 's@version:[ ].*@version: 2.16.1@g' \
  "$work/upstream/default/kustomize-config/metadataLabelTransformer.yaml"
kubectl kustomize "$work" >"$work/objects.yaml"
# (server-side: the ScaledJob CRD is too large for the last-applied annotation of a client apply)
kubectl apply --server-side --force-conflicts -f "$work/objects.yaml" >/dev/null
established app.kubernetes.io/part-of=keda-operator ||
  die "KEDA's CRDs were not established (kubectl get crd -l app.kubernetes.io/part-of=keda-operator)"
for d in keda-operator keda-metrics-apiserver keda-admission; do
  kubectl -n keda rollout status "deployment/$d" --timeout=180s >/dev/null ||
    die "KEDA's $d did not become Ready (kubectl -n keda logs deploy/$d)"
done
kubectl wait --for condition=Available --timeout=120s \
  apiservice/v1beta1.external.metrics.k8s.io >/dev/null ||
  die "KEDA's external metrics API is not Available (kubectl get apiservice v1beta1.external.metrics.k8s.io -o yaml)"

step "KServe's controller, restarted to see the ScaledObject CRD"
kubectl -n kubeflow rollout restart deployment/kserve-controller-manager >/dev/null
kubectl -n kubeflow rollout status deployment/kserve-controller-manager --timeout=180s >/dev/null ||
  die "KServe's controller did not come back (kubectl -n kubeflow logs deploy/kserve-controller-manager -c manager)"
echo "KEDA_VERSION=v2.16.1" >>"$repo/.cluster/env"
step "Ready"
