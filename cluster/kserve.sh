#!/usr/bin/env bash
# make cluster-kserve: adds KServe v0.15.2 in RawDeployment's needs to the cluster up.sh started
# (docs/real-kfp.md#kserve): metrics-server v0.8.0 for the HorizontalPodAutoscalers, KServe's
# controller, webhooks, CRDs and cluster serving runtimes as Kubeflow 1.11 installs them, the
# sklearn runtime's image, and a model to serve: the iris classifier on the PersistentVolumeClaim
# `models` of the namespace kfp-bench, trained in the runtime's own image, at
# pvc://models/sklearn/iris. Each program built from its Go module, each image built here.
# Appends KSERVE_* to .cluster/env when Ready. make cluster-down takes it all away with the rest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
. "$here/lib.sh"
tier_start kserve "make cluster starts one (make cluster-kserve does both)"
grep -q '^KSERVE_MODEL_URI=' "$repo/.cluster/env" && {
  echo "cluster kserve: KServe is up already"
  exit 0
}

step "building (cached)"
"$here/build.sh" kserve rbac-proxy metrics-server
"$here/images.sh" python kserve-controller kserve-localmodel-controller kube-rbac-proxy \
  metrics-server sklearnserver
import_images kserve-controller kserve-localmodel-controller kube-rbac-proxy metrics-server \
  sklearnserver
k8s="$(group_bin k8s)"
kubectl() { "$k8s/kubectl" --kubeconfig "$state/admin.kubeconfig" "$@"; }
python="$repo/.venv/bin/python"
[[ -x "$python" ]] || die "needs the project's environment; run make setup"

# upstream MODULE FOLDER DEST: a module's folder, copied from the Go module cache into DEST.
upstream() {
  local dir
  dir="$(cd "$here/modules/$1" && go list -m -f '{{.Dir}}' "$2")"
  rm -rf "$4"
  cp -r "$dir/$3" "$4"
  chmod -R u+w "$4"
}

step "metrics-server"
work="$state/manifests/metrics-server"
mkdir -p "$work"
cp "$here/manifests/metrics-server/kustomization.yaml" "$work/"
upstream metrics-server sigs.k8s.io/metrics-server manifests "$work/upstream"
kubectl kustomize "$work" | kubectl apply -f - >/dev/null

step "KServe's controller and webhooks"
work="$state/manifests/kserve"
mkdir -p "$work"
cp "$here/manifests/kserve/kustomization.yaml" "$work/"
upstream kserve github.com/kserve/kserve config "$work/upstream"
# The webhook Service's certificate, signed by the cluster's CA (cert-manager's Certificate
# serving-cert upstream: commonName and dnsNames kserve-webhook-server-service.<namespace>.svc).
pki="$state/pki"
svc=kserve-webhook-server-service.kubeflow.svc
openssl req -newkey rsa:2048 -nodes -subj "/CN=$svc" -keyout "$pki/kserve-webhook.key" \
  -out "$pki/kserve-webhook.csr" 2>/dev/null
printf 'extendedKeyUsage=serverAuth\nsubjectAltName=DNS:%s,DNS:%s.cluster.local\n' "$svc" "$svc" \
  >"$pki/kserve-webhook.ext"
openssl x509 -req -in "$pki/kserve-webhook.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" \
  -CAcreateserial -days 30 -extfile "$pki/kserve-webhook.ext" -out "$pki/kserve-webhook.crt" 2>/dev/null
kubectl kustomize "$work" >"$work/objects.yaml"
"$python" "$here/kserve_objects.py" "$pki/ca.crt" crds <"$work/objects.yaml" |
  kubectl apply --server-side --force-conflicts -f - >/dev/null
established app=kserve ||
  die "KServe's CRDs were not established (kubectl get crd -l app=kserve)"
"$python" "$here/kserve_objects.py" "$pki/ca.crt" first <"$work/objects.yaml" |
  kubectl apply --server-side --force-conflicts -f - >/dev/null
kubectl -n kubeflow create secret tls kserve-webhook-server-cert --cert "$pki/kserve-webhook.crt" \
  --key "$pki/kserve-webhook.key" --dry-run=client -o yaml | kubectl apply -f - >/dev/null
kubectl -n kubeflow rollout status deployment/kserve-controller-manager --timeout=180s >/dev/null ||
  die "KServe's controller did not become Ready (kubectl -n kubeflow logs deploy/kserve-controller-manager -c manager)"
# The ClusterServingRuntimes pass KServe's own validating webhook: applied once it answers.
applied=""
for _ in $(seq 30); do
  if "$python" "$here/kserve_objects.py" "$pki/ca.crt" runtimes <"$work/objects.yaml" |
    kubectl apply --server-side --force-conflicts -f - >/dev/null 2>"$work/runtimes.err"; then
    applied=1
    break
  fi
  sleep 2
done
[[ -n "$applied" ]] || die "the ClusterServingRuntimes were refused: $(tail -1 "$work/runtimes.err")"
kubectl -n kube-system rollout status deployment/metrics-server --timeout=120s >/dev/null ||
  die "metrics-server did not become Ready (kubectl -n kube-system logs deploy/metrics-server)"

step "the iris model on pvc://models/sklearn/iris (namespace kfp-bench)"
mkdir -p "$state/models"
chown 1000:1000 "$state/models"
kubectl apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: kfp-bench}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: kfp-bench-models}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce, ReadOnlyMany]
  storageClassName: kfp-bench-models
  hostPath: {path: $state/models, type: Directory}
  claimRef: {namespace: kfp-bench, name: models}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: models, namespace: kfp-bench}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: kfp-bench-models
  resources: {requests: {storage: 1Gi}}
---
# The model KServe's sklearn samples serve (docs: gs://kfserving-examples/models/sklearn/1.0/model,
# an SVC on iris), trained by the runtime's own scikit-learn so that it loads without a warning.
apiVersion: batch/v1
kind: Job
metadata: {name: train-iris, namespace: kfp-bench}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: docker.io/kserve/sklearnserver:v0.15.2
        command: [python3, -c]
        args:
        - |
          import os, joblib
          from sklearn import datasets, svm
          iris = datasets.load_iris()
          os.makedirs("/mnt/models/sklearn/iris", exist_ok=True)
          joblib.dump(svm.SVC(gamma="scale").fit(iris.data, iris.target),
                      "/mnt/models/sklearn/iris/model.joblib")
        volumeMounts: [{name: models, mountPath: /mnt/models}]
      volumes: [{name: models, persistentVolumeClaim: {claimName: models}}]
EOF
kubectl -n kfp-bench wait --for=condition=Complete job/train-iris --timeout=180s >/dev/null ||
  die "the iris model was not trained (kubectl -n kfp-bench logs job/train-iris)"
kubectl -n kfp-bench delete job/train-iris --wait=false >/dev/null
# The resource metrics API answers once metrics-server has scraped the kubelet once.
for _ in $(seq 60); do
  kubectl top node >/dev/null 2>&1 && break
  sleep 2
done
kubectl top node >/dev/null 2>&1 ||
  die "the metrics API did not answer (kubectl -n kube-system logs deploy/metrics-server)"
{
  echo "KSERVE_NAMESPACE=kfp-bench"
  echo "KSERVE_MODEL_URI=pvc://models/sklearn/iris"
} >>"$repo/.cluster/env"
step "Ready"
