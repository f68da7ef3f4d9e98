"""KServe v0.15.2 on the cluster (`make cluster-kserve`): InferenceServices deployed by kfp-bench's
deploy code, loaded by `kfp-bench load` from this host through kube-proxy's rules, their replicas
read by kfp-bench's watcher from the real controller, Deployment and HorizontalPodAutoscaler."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client

from kfp_bench.kfp.promscrape import scrape
from kfp_bench.kserve.deploy import DELETED, delete, deploy
from kfp_bench.kserve.kube import selector
from kfp_bench.kserve.phases import PHASES, new_pod_start, summary
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.kserve.watch import HPA, ReplicaWatcher
from kfp_bench.load.options import LoadOptions
from tests.cluster.conftest import cluster_env
from tests.cluster.kube import wait_until
from tests.conftest import run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(cluster_env()) and "KSERVE_MODEL_URI" not in cluster_env(),
        reason="KServe is not on the cluster: `make cluster-kserve` adds it (docs/real-kfp.md)",
    ),
]
RAW = "RawDeployment"
IRIS = '{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}'


def predictor_url(kube, namespace: str, name: str) -> str:
    """The predictor Service's V1 predict URL by its ClusterIP (its DNS name is the cluster's)."""
    svc = client.CoreV1Api(kube).read_namespaced_service(f"{name}-predictor", namespace)
    return f"http://{svc.spec.cluster_ip}/v1/models/{name}:predict"


def test_raw_deployment_scales_out_under_load_and_back(kube, isvc_kube, benchmark_id, tmp_path):
    # The guide's HPA form (scaleMetric cpu): a target of 50% of a 200m request, so that the
    # load of one client with 8 in flight needs more than one pod. The HPA's defaults decide the
    # rest: scale up at once, down after its 300 s stabilization window.
    spec = IsvcSpec(
        name=f"iris-{benchmark_id}",
        namespace=isvc_kube.namespace,
        storage_uri=cluster_env()["KSERVE_MODEL_URI"],
        deployment_mode=RAW,
        predictor=ScaleSpec(
            scale_metric="cpu", scale_target=50, min_replicas=1, max_replicas=3,
            cpu="200m", memory="512Mi",
        ),
    )  # fmt: skip
    done = deploy(isvc_kube, spec, benchmark_id=benchmark_id, timeout_s=300)
    try:
        assert done.mode.name == RAW
        url = predictor_url(kube, spec.namespace, spec.name)
        watcher = ReplicaWatcher(isvc_kube, spec.name, autoscaler=HPA, interval_s=2).start()
        payload = tmp_path / "input.json"
        payload.write_text(IRIS)
        out = tmp_path / "load.json"
        t0 = time.time()
        r = run_cli(
            "load", "-z", "120s", "-c", "8", "-m", "POST", "-D", str(payload),
            "-T", "application/json", "--json-out", str(out), url, timeout=240,
        )  # fmt: skip
        t1 = time.time()
        assert r.returncode == 0, r.stderr
        result = json.loads(out.read_text())
        assert result["success_ratio"] == 1.0, result["status_codes"]
        scaled = watcher.max_ready(t0, t1)
        assert scaled and scaled > 1, f"ready pods during the load: {scaled}"
        wait_until(
            "the HPA to scale back to one pod",
            lambda: watcher.samples[-1].ready == 1 and watcher.samples[-1].total == 1,
            timeout=600, every=5,
        )  # fmt: skip
        samples = watcher.stop()
        assert max(s.desired or 0 for s in samples) > 1
    finally:
        assert delete(isvc_kube, spec.name, benchmark_id=benchmark_id, wait_s=120) == DELETED
    wait_until(
        "the InferenceService's pods to go",
        lambda: not isvc_kube.pods(selector(spec.name)),
        timeout=120,
    )


def test_a_new_pods_cold_start_in_phases(isvc_kube, benchmark_id, tmp_path):
    spec = IsvcSpec(
        name=f"cold-{benchmark_id}",
        namespace=isvc_kube.namespace,
        storage_uri=cluster_env()["KSERVE_MODEL_URI"],
        deployment_mode=RAW,
        predictor=ScaleSpec(scale_metric="cpu", cpu="200m", memory="512Mi"),
    )
    deploy(isvc_kube, spec, benchmark_id=benchmark_id, timeout_s=300)
    try:
        # Any URL: new_pod_start sends the request to the new pod's own address.
        opts = LoadOptions(url=f"http://unused/v1/models/{spec.name}:predict", method="POST",
                           body=IRIS.encode(), content_type="application/json")  # fmt: skip
        starts = [new_pod_start(isvc_kube, spec.name, opts, timeout_s=240) for _ in range(2)]
    finally:
        assert delete(isvc_kube, spec.name, benchmark_id=benchmark_id, wait_s=120) == DELETED
    assert starts[0]["pod"] != starts[1]["pod"]
    for start in starts:
        phases = start["phases"]
        assert None not in phases.values(), phases
        # Each moment the API records comes after the one before it (whole seconds); the
        # client's clock (model loaded) may differ from the API's by a second.
        assert all(phases[p] >= 0 for p in ("scheduled", "image_ready", "started")), phases
        assert phases["model_loaded"] >= -1 and phases["ready"] >= -1, phases
        assert abs(sum(phases[p] for p in PHASES) - phases["total"]) <= 1, phases
        assert 0 < phases["total"] < 240
    assert summary(starts)["total"]["n"] == 2


def test_a_transformer_scales_by_its_own_settings(kube, isvc_kube, benchmark_id, tmp_path):
    """The guide's "autoscaling configuration at component level", in RawDeployment: the
    transformer (the model server's image, a pass-through to the predictor) and the predictor
    each get an HPA of their own, with their own target and bounds; a request sent to the
    transformer is answered by the predictor through it."""
    env = cluster_env()
    spec = IsvcSpec(
        name=f"tf-{benchmark_id}",
        namespace=isvc_kube.namespace,
        storage_uri=env["KSERVE_MODEL_URI"],
        deployment_mode=RAW,
        predictor=ScaleSpec(
            scale_metric="cpu", scale_target=50, min_replicas=1, max_replicas=2,
            cpu="150m", memory="512Mi",
        ),
        transformer_image=env["MODEL_SERVER_IMAGE"],
        transformer=ScaleSpec(
            scale_metric="cpu", scale_target=80, min_replicas=1, max_replicas=3,
            cpu="100m", memory="384Mi",
        ),
    )  # fmt: skip
    deploy(isvc_kube, spec, benchmark_id=benchmark_id, timeout_s=300)
    try:
        hpas = client.AutoscalingV2Api(kube).list_namespaced_horizontal_pod_autoscaler(
            spec.namespace, label_selector=f"serving.kserve.io/inferenceservice={spec.name}"
        )
        own = {
            h.metadata.name: (
                h.spec.min_replicas,
                h.spec.max_replicas,
                h.spec.metrics[0].resource.name,
                h.spec.metrics[0].resource.target.average_utilization,
            )
            for h in hpas.items
        }
        assert own == {
            f"{spec.name}-predictor": (1, 2, "cpu", 50),
            f"{spec.name}-transformer": (1, 3, "cpu", 80),
        }
        svc = client.CoreV1Api(kube).read_namespaced_service(
            f"{spec.name}-transformer", spec.namespace
        )
        url = f"http://{svc.spec.cluster_ip}/v1/models/{spec.name}:predict"
        watcher = ReplicaWatcher(
            isvc_kube, spec.name, "transformer", autoscaler=HPA, interval_s=2
        ).start()
        payload = tmp_path / "input.json"
        payload.write_text(IRIS)
        out = tmp_path / "load.json"
        r = run_cli(
            "load", "-n", "200", "-c", "4", "-m", "POST", "-D", str(payload),
            "-T", "application/json", "--json-out", str(out), url, timeout=240,
        )  # fmt: skip
        samples = watcher.stop()
        assert r.returncode == 0, r.stderr
        result = json.loads(out.read_text())
        assert result["success_ratio"] == 1.0, result["status_codes"]
        assert samples and all(s.ready >= 1 for s in samples), samples
        # every request was the predictor's: its pods' own count of predictions (KServe's
        # request_predict_seconds histogram, on each pod's /metrics)
        assert predicted(kube, spec) == 200
    finally:
        assert delete(isvc_kube, spec.name, benchmark_id=benchmark_id, wait_s=120) == DELETED
    wait_until(
        "the InferenceService's pods to go",
        lambda: not isvc_kube.pods(f"serving.kserve.io/inferenceservice={spec.name}"),
        timeout=120,
    )


def predicted(kube, spec: IsvcSpec) -> float:
    """The predictions the predictor's pods made, summed from each pod's /metrics."""
    pods = client.CoreV1Api(kube).list_namespaced_pod(
        spec.namespace, label_selector=selector(spec.name, "predictor")
    )
    key = ("request_predict_seconds_count", (("model_name", spec.name),))
    total = 0.0
    for pod in pods.items:
        page = scrape(f"http://{pod.status.pod_ip}:8080/metrics")
        assert "error" not in page, page["error"]
        total += page["samples"].get(key, 0.0)
    return total
