"""Knative Serving v0.43.3 on the cluster (`make cluster-knative`): InferenceServices in KServe's
Serverless mode, scaled by Knative's autoscaler (the KPA), their replicas read by kfp-bench's
watcher from the real PodAutoscaler and pods, loaded by `kfp-bench load` from this host.

No Knative ingress runs here (docs/real-kfp.md#knative): the Route of each Knative Service waits
for an ingress forever, so the InferenceService's own Ready stays False, and the load goes to the
revision's public Service, whose endpoints are Knative's activator while it buffers and the pods
once they take the load, with the two headers an ingress adds to name the revision
(knative.dev/serving pkg/activator/activator.go:23-25). Everything behind the ingress is real:
the activator holding requests while a pod starts, the autoscaler's windows and target, the
queue-proxy's metrics, scale to zero."""

from __future__ import annotations

import json
import time

import pytest
from kubernetes import client

from kfp_bench.kserve.coldstart import cold_start
from kfp_bench.kserve.deploy import DELETED, delete, failing_condition
from kfp_bench.kserve.kube import Kube, selector
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.kserve.watch import KPA, ReplicaWatcher
from kfp_bench.load.options import LoadOptions
from tests.cluster.conftest import cluster_env
from tests.cluster.kube import wait_until
from tests.conftest import run_cli

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        bool(cluster_env()) and "KNATIVE_VERSION" not in cluster_env(),
        reason="Knative is not on the cluster: `make cluster-knative` adds it (docs/real-kfp.md)",
    ),
]
IRIS = '{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}'


def serverless(kube: Kube, spec: IsvcSpec, benchmark_id: str, timeout_s: float = 300) -> str:
    """Wait until the predictor's revision of ``spec``'s InferenceService (created by the
    caller) is Ready (not the InferenceService: its route waits for an ingress); return the
    revision's name. Its last condition that is not True is the failure's message."""

    def revision():
        doc = kube.get_isvc(spec.name) or {}
        status = doc.get("status") or {}
        ready = {c["type"]: c["status"] for c in status.get("conditions", [])}
        predictor = (status.get("components") or {}).get("predictor") or {}
        if ready.get("PredictorConfigurationReady") == "True":
            return predictor.get("latestReadyRevision")
        return None

    try:
        return wait_until(f"the revision of {spec.name}", revision, timeout=timeout_s, every=2)
    except AssertionError as exc:
        raise AssertionError(f"{exc}: {failing_condition(kube.get_isvc(spec.name))}") from None


def revision_load(api, namespace: str, name: str, revision: str) -> LoadOptions:
    """The V1 predict request to ``revision``'s public Service (by its ClusterIP), naming the
    revision as an ingress would."""
    svc = client.CoreV1Api(api).read_namespaced_service(revision, namespace)
    return LoadOptions(
        url=f"http://{svc.spec.cluster_ip}/v1/models/{name}:predict",
        method="POST", body=IRIS.encode(), content_type="application/json",
        headers=(f"Knative-Serving-Revision: {revision}",
                 f"Knative-Serving-Namespace: {namespace}"),
    ).validate()  # fmt: skip


def spec_of(kind: str, kube: Kube, benchmark_id: str, **scale) -> IsvcSpec:
    return IsvcSpec(
        name=f"{kind}-{benchmark_id}",
        namespace=kube.namespace,
        storage_uri=cluster_env()["KSERVE_MODEL_URI"],
        deployment_mode="Serverless",
        predictor=ScaleSpec(cpu="200m", memory="512Mi", **scale),
    )


def gone(kube: Kube, spec: IsvcSpec, benchmark_id: str) -> None:
    assert delete(kube, spec.name, benchmark_id=benchmark_id, wait_s=120) == DELETED
    wait_until(
        "the InferenceService's pods to go",
        lambda: not kube.pods(selector(spec.name)),
        timeout=120,
    )


def test_scale_from_zero_serves_the_first_request_held_by_the_activator(kube, isvc_kube,
                                                                         benchmark_id):  # fmt: skip
    spec = spec_of("zero", isvc_kube, benchmark_id, scale_target=1, min_replicas=0)
    isvc_kube.create_isvc(spec.to_dict(benchmark_id=benchmark_id))
    try:
        revision = serverless(isvc_kube, spec, benchmark_id)
        # Without an ingress the InferenceService is never Ready, and kfp-bench's deploy step
        # says why in the terms of its conditions.
        doc = isvc_kube.get_isvc(spec.name)
        assert "Route" in failing_condition(doc) or "Ingress" in failing_condition(doc), doc
        opts = revision_load(kube, spec.namespace, spec.name, revision)
        watcher = ReplicaWatcher(isvc_kube, spec.name, autoscaler=KPA, interval_s=1).start()
        # Knative's defaults: no traffic for the 60 s stable window, then the 30 s grace period
        cold = cold_start(isvc_kube, spec.name, opts, zero_timeout_s=300, first_timeout_s=180,
                          warm_requests=20)  # fmt: skip
        # The activator sends the held request once the new pod answers its own probe: the
        # kubelet may count the pod Ready seconds later (11 to 13 s in bench/kserve_knative.py).
        wait_until(
            "the new pod to be Ready",
            lambda: watcher.samples and watcher.samples[-1].ready >= 1,
            timeout=120,
        )
        samples = watcher.stop()
    finally:
        gone(isvc_kube, spec, benchmark_id)
    # The activator held the first request until a pod could take it: one attempt, no error,
    # and it waited for the pod to start and load the model.
    assert (cold.attempts, cold.errors) == (1, ()), cold
    assert cold.first_success_s > 2, cold
    assert cold.warm_requests == 20 and cold.warm_p99_ms < cold.first_success_s * 1000
    # The KPA decided zero (cold_start saw no live pod before its request: a moment the
    # watcher's 1 s samples can miss), then one pod for the held request.
    zero = [i for i, s in enumerate(samples) if s.desired == 0]
    assert zero, samples[:5]
    after = samples[zero[-1] + 1 :]
    assert any(s.ready >= 1 and (s.desired or 0) >= 1 for s in after), samples[-5:]


def test_the_guides_concurrency_target_scales_to_more_than_one_pod(kube, isvc_kube, benchmark_id,
                                                                   tmp_path):  # fmt: skip
    # The guide: scaleTarget 1, scaleMetric concurrency, `hey -z 30s -c 5` -> about 5 pods.
    spec = spec_of("conc", isvc_kube, benchmark_id, scale_target=1, scale_metric="concurrency",
                   min_replicas=1, max_replicas=5)  # fmt: skip
    isvc_kube.create_isvc(spec.to_dict(benchmark_id=benchmark_id))
    try:
        revision = serverless(isvc_kube, spec, benchmark_id)
        opts = revision_load(kube, spec.namespace, spec.name, revision)
        watcher = ReplicaWatcher(isvc_kube, spec.name, autoscaler=KPA, interval_s=1).start()
        payload = tmp_path / "input.json"
        payload.write_text(IRIS)
        out = tmp_path / "load.json"
        t0 = time.time()
        r = run_cli(
            "load", "-z", "30s", "-c", "5", "-m", "POST", "-D", str(payload),
            "-T", "application/json", *(a for h in opts.headers for a in ("-H", h)),
            "--json-out", str(out), opts.url, timeout=120,
        )  # fmt: skip
        t1 = time.time()
        samples = watcher.stop()
    finally:
        gone(isvc_kube, spec, benchmark_id)
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["success_ratio"] == 1.0, result["status_codes"]
    during = [s for s in samples if t0 <= s.t <= t1 + 2]
    assert max(s.desired or 0 for s in during) > 1, during
    assert max(s.ready for s in during) > 1, during
