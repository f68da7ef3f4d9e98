"""KEDA v2.16.1 on the cluster (`make cluster-keda`): a RawDeployment InferenceService with
KServe's autoscalerClass keda, deployed by kfp-bench's deploy code; KServe v0.15.2 makes it a
ScaledObject (reconcilers/keda/keda_reconciler.go), KEDA's operator makes the HPA it drives
(keda-hpa-NAME-predictor), and kfp-bench's replica watcher reads both while `kfp-bench load`
loads the predictor's Service from this host. The trigger is a CPU utilization (a resource
metric, read by the HPA from metrics-server): no Prometheus or other external scaler runs here."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from kfp_bench.kserve.deploy import DELETED, delete, deploy
from kfp_bench.kserve.kube import KedaTrigger, selector
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.kserve.watch import KEDA, ReplicaWatcher
from tests.cluster.conftest import cluster_env
from tests.cluster.kube import wait_until
from tests.conftest import run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(cluster_env()) and "KEDA_VERSION" not in cluster_env(),
        reason="KEDA is not on the cluster: `make cluster-keda` adds it (docs/real-kfp.md)",
    ),
]
IRIS = '{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}'
#: loads of 30 s each, until the watcher has seen the scale-out (or this many have run)
LOADS = 6


def scaled_out(watcher: ReplicaWatcher) -> bool:
    """More than one ready pod seen, and the HPA KEDA drives desiring more than one."""
    samples = list(watcher.samples)
    return (
        max((s.ready for s in samples), default=0) > 1
        and max((s.desired or 0 for s in samples), default=0) > 1
    )


def test_keda_scales_a_raw_deployment_out_on_cpu(kube, isvc_kube, benchmark_id, tmp_path):
    # As test_kserve's HPA form: 50% of a 200m request, so that 8 in flight need more pods.
    spec = IsvcSpec(
        name=f"keda-{benchmark_id}",
        namespace=isvc_kube.namespace,
        storage_uri=cluster_env()["KSERVE_MODEL_URI"],
        deployment_mode="RawDeployment",
        autoscaler_class="keda",
        predictor=ScaleSpec(
            scale_metric="cpu", scale_target=50, min_replicas=1, max_replicas=3,
            cpu="200m", memory="512Mi",
        ),
    )  # fmt: skip
    component = f"{spec.name}-predictor"
    deploy(isvc_kube, spec, benchmark_id=benchmark_id, timeout_s=300)
    try:
        (so,) = wait_until(
            "KEDA to make the ScaledObject's HPA",
            lambda: [s for s in isvc_kube.scaled_objects(selector(spec.name)) if s.ready],
            timeout=120, every=2,
        )  # fmt: skip
        assert (so.name, so.hpa) == (component, f"keda-hpa-{component}")
        assert so.triggers == (KedaTrigger("cpu", "Utilization", "50"),)
        assert (so.min_replicas, so.max_replicas) == (1, 3)
        assert isvc_kube.hpa(component) is None  # KServe made no HPA of its own
        svc = client.CoreV1Api(kube).read_namespaced_service(component, spec.namespace)
        url = f"http://{svc.spec.cluster_ip}/v1/models/{spec.name}:predict"
        payload = tmp_path / "input.json"
        payload.write_text(IRIS)
        watcher = ReplicaWatcher(isvc_kube, spec.name, autoscaler=KEDA, interval_s=2).start()
        try:
            for i in range(LOADS):
                out = tmp_path / f"load-{i}.json"
                # a new connection per request: kube-proxy balances connections, not requests
                r = run_cli(
                    "load", "-z", "30s", "-c", "8", "-disable-keepalive", "-m", "POST",
                    "-D", str(payload), "-T", "application/json", "--json-out", str(out), url,
                    timeout=120,
                )  # fmt: skip
                assert r.returncode == 0, r.stderr
                result = json.loads(out.read_text())
                assert result["success_ratio"] == 1.0, result["status_codes"]
                if scaled_out(watcher):
                    break
        finally:
            samples = watcher.stop()
        seen = [(s.ready, s.desired, s.actual) for s in samples]
        assert scaled_out(watcher), f"(ready, HPA desired, HPA current) every 2 s: {seen}"
        assert watcher.scaled_objects[0].hpa == f"keda-hpa-{component}"
    finally:
        assert delete(isvc_kube, spec.name, benchmark_id=benchmark_id, wait_s=120) == DELETED
    # Nothing left: the pods, the ScaledObject (the InferenceService's) and its HPA (KEDA's).
    wait_until(
        "the InferenceService's pods, ScaledObject and HPA to go",
        lambda: not isvc_kube.pods(selector(spec.name))
        and not isvc_kube.scaled_objects(selector(spec.name))
        and isvc_kube.hpa(f"keda-hpa-{component}") is None,
        timeout=120, every=2,
    )  # fmt: skip
