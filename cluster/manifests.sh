#!/usr/bin/env bash
# Applies the cluster's objects (manifests/) and waits for each to be Ready: CoreDNS, the
# kubeflow namespace with SeaweedFS behind minio-service and its mlpipeline bucket, and Argo.
# Usage: manifests.sh KUBECONFIG KUBECTL
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"
kubeconfig=$1 kubectl_bin=$2
kubectl() { "$kubectl_bin" --kubeconfig "$kubeconfig" "$@"; }
m="$here/manifests"

kubectl apply -f "$m/coredns.yaml" >/dev/null
kubectl create namespace kubeflow >/dev/null
kubectl apply -f "$m/seaweedfs.yaml" >/dev/null

# Argo: its own manifests from the module the controller was built from, kustomized with ours.
argo_module="$(cd "$here/modules/argo" && go list -m -f '{{.Dir}}' github.com/argoproj/argo-workflows/v3)"
work="$state/manifests/argo"
rm -rf "$work"
mkdir -p "$work"
cp -r "$argo_module/manifests" "$work/upstream"
chmod -R u+w "$work/upstream"
cp "$m"/argo/*.yaml "$work/"
kubectl kustomize "$work" | kubectl apply --server-side -f - >/dev/null

kubectl -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null ||
  die "CoreDNS did not become Ready (kubectl -n kube-system describe pod -l k8s-app=kube-dns)"
kubectl -n kubeflow rollout status deployment/seaweedfs --timeout=120s >/dev/null ||
  die "SeaweedFS did not become Ready (kubectl -n kubeflow logs deploy/seaweedfs)"
# The bucket KFP and Argo write to (upstream KFP's API server makes it at start).
made=""
for _ in $(seq 30); do
  if echo "s3.bucket.create -name mlpipeline" |
    kubectl -n kubeflow exec -i deploy/seaweedfs -- /bin/weed shell -master=localhost:9333 \
      2>&1 | grep -q "mlpipeline"; then
    made=1
    break
  fi
  sleep 2
done
[[ -n "$made" ]] || die "SeaweedFS did not create the mlpipeline bucket (kubectl -n kubeflow logs deploy/seaweedfs)"
kubectl -n kubeflow rollout status deployment/workflow-controller --timeout=120s >/dev/null ||
  die "Argo's workflow controller did not become Ready (kubectl -n kubeflow logs deploy/workflow-controller)"
