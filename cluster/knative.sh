#!/usr/bin/env bash
# make cluster-knative: adds Knative Serving v0.43.3 (Knative 1.16), KServe's Serverless mode, to
# the cluster kserve.sh set up (docs/real-kfp.md#knative): its controller, webhook, activator and
# autoscaler, and the queue-proxy image of every revision, each built from its Go module with the
# objects of the release (cluster/knative_objects.py says what differs). KServe's controller is
# then told to leave Istio out (its ingress config's disableIstioVirtualHost, as KServe's
# config/overlays/test/configmap/inferenceservice-disable-istio.yaml) and restarted: it looks for
# Knative's CRDs when it starts (cmd/manager/main.go:178). No Knative ingress runs here.
# Appends KNATIVE_VERSION to .cluster/env when Ready. make cluster-down takes it away with the rest.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
. "$here/lib.sh"
tier_on_kserve knative KNATIVE_VERSION "Knative Serving"

step "building (cached)"
"$here/build.sh" knative
images=(knative-controller knative-webhook knative-activator knative-autoscaler knative-queue)
"$here/images.sh" "${images[@]}"
import_images "${images[@]}"
k8s="$(group_bin k8s)"
kubectl() { "$k8s/kubectl" --kubeconfig "$state/admin.kubeconfig" "$@"; }
python="$repo/.venv/bin/python"
[[ -x "$python" ]] || die "needs the project's environment; run make setup"

step "Knative Serving's CRDs and objects"
work="$state/manifests/knative"
mkdir -p "$work"
module() { (cd "$here/modules/knative" && go list -m -f '{{.Dir}}' "$1"); }
serving="$(module knative.dev/serving)"
networking="$(module knative.dev/networking)"
caching="$(module knative.dev/caching)"
{
  # The release's serving-crds.yaml takes these from networking and caching; serving-core.yaml
  # is config/core; config/core/configmaps/network.yaml is networking's config-network.yaml.
  for f in "$networking"/config/{certificate,domain-claim,ingress,serverlessservice}.yaml \
    "$caching/config/image.yaml" $(find "$serving/config/core" -name '*.yaml' | sort) \
    "$networking/config/config-network.yaml"; do
    cat "$f"
    echo "---"
  done
} >"$work/objects.yaml"
"$python" "$here/knative_objects.py" crds <"$work/objects.yaml" |
  kubectl apply --server-side --force-conflicts -f - >/dev/null
established knative.dev/crd-install=true ||
  die "Knative's CRDs were not established (kubectl get crd -l knative.dev/crd-install=true)"
"$python" "$here/knative_objects.py" rest <"$work/objects.yaml" |
  kubectl apply --server-side --force-conflicts -f - >/dev/null
for d in controller webhook activator autoscaler; do
  kubectl -n knative-serving rollout status "deployment/$d" --timeout=180s >/dev/null ||
    die "Knative's $d did not become Ready (kubectl -n knative-serving logs deploy/$d)"
done

step "KServe's Serverless mode"
kubectl -n kubeflow get configmap inferenceservice-config -o json |
  "$python" -c 'import json, sys
cm = json.load(sys.stdin)
ingress = json.loads(cm["data"]["ingress"])
ingress["disableIstioVirtualHost"] = True
cm["data"]["ingress"] = json.dumps(ingress, indent=2)
json.dump(cm, sys.stdout)' | kubectl replace -f - >/dev/null
kubectl -n kubeflow rollout restart deployment/kserve-controller-manager >/dev/null
kubectl -n kubeflow rollout status deployment/kserve-controller-manager --timeout=180s >/dev/null ||
  die "KServe's controller did not come back (kubectl -n kubeflow logs deploy/kserve-controller-manager -c manager)"
echo "KNATIVE_VERSION=v0.43.3" >>"$repo/.cluster/env"
step "Ready"
