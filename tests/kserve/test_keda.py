"""KEDA behind a RawDeployment InferenceService (issue 37, item 6): the spec asks for it as KServe
v0.15.2 reads it (the autoscalerClass annotation and autoScaling metrics, checked against KServe's
CRD and its KEDA validation), and the replica watcher reads the ScaledObject's target and the HPA
it drives. The cluster is ``fake_kube`` (no Kubernetes API can run in this tier; the real one is
tests/cluster/test_keda.py); the kubernetes client, the watcher and the steps are real."""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kserve.kube import KedaTrigger, ScaledObjectState
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.kserve.watch import KEDA, ReplicaWatcher
from kfp_bench.steps import serving
from kfp_bench.steps.params import BenchParams
from tests.kserve.fake_kube import HPA_PATH, NS, PA_PATH, PODS_PATH, READY, SO_PATH, Frame, Scenario

BID = "keda-test-1"
KEDA_SPEC = IsvcSpec(
    "bench-iris",
    namespace=NS,
    deployment_mode="RawDeployment",
    autoscaler_class="keda",
    predictor=ScaleSpec(scale_target=50, scale_metric="cpu", min_replicas=1, max_replicas=4,
                        cpu="200m"),
)  # fmt: skip
FRAMES = [Frame(1, 1, 1, 1), Frame(1, 2, 3, 1), Frame(3, 3, 3, 3)]


def test_the_body_asks_kserve_for_keda_as_it_reads_it(schema):
    body = KEDA_SPEC.to_dict(benchmark_id=BID)
    schema.validate(body)
    assert body["metadata"]["annotations"] == {
        "serving.kserve.io/deploymentMode": "RawDeployment",
        "serving.kserve.io/autoscalerClass": "keda",
    }
    pred = body["spec"]["predictor"]
    # KServe refuses a scaleMetric beside KEDA (inference_service_validation.go:332)
    assert "scaleMetric" not in pred and "scaleTarget" not in pred
    assert pred["autoScaling"] == {"metrics": [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]}  # fmt: skip
    assert (pred["minReplicas"], pred["maxReplicas"]) == (1, 4)


def test_a_transformer_is_scaled_by_keda_too(schema):
    spec = IsvcSpec("x", deployment_mode="Standard", autoscaler_class="keda",
                    predictor=ScaleSpec(scale_target=60, scale_metric="cpu"),
                    transformer_image="t:1",
                    transformer=ScaleSpec(scale_target=70, scale_metric="memory"))  # fmt: skip
    body = spec.to_dict(benchmark_id=BID)
    schema.validate(body)
    metric = body["spec"]["transformer"]["autoScaling"]["metrics"][0]["resource"]
    assert metric == {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 70}}


def test_hpa_is_written_as_asked_and_nothing_by_default():
    hpa = IsvcSpec("x", deployment_mode="RawDeployment", autoscaler_class="hpa",
                   predictor=ScaleSpec(scale_target=80, scale_metric="cpu"))  # fmt: skip
    body = hpa.to_dict(benchmark_id=BID)
    assert body["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "hpa"
    assert body["spec"]["predictor"]["scaleMetric"] == "cpu"
    assert "autoScaling" not in body["spec"]["predictor"]
    plain = IsvcSpec("x").to_dict(benchmark_id=BID)
    assert "annotations" not in plain["metadata"]


def _keda(**scale) -> IsvcSpec:
    return IsvcSpec("x", autoscaler_class="keda", predictor=ScaleSpec(**scale))


@pytest.mark.parametrize(
    ("spec", "mode", "words"),
    [
        (IsvcSpec("x", autoscaler_class="kpa"), "", "autoscaler_class='kpa': use one of hpa, keda"),
        (
            IsvcSpec("x", deployment_mode="Serverless", autoscaler_class="keda"),
            "",
            "KServe reads it in RawDeployment only, not in Serverless, where Knative scales",
        ),
        (
            _keda(scale_target=50, scale_metric="cpu"),
            "Knative",
            "not in Knative, where Knative scales",
        ),
        (_keda(scale_target=1), "", "scale_metric='concurrency': RawDeployment scales with an HPA"),
        (_keda(scale_target=0, scale_metric="cpu"), "", "scale_target=0: KEDA scales on a cpu"),
        (_keda(scale_target=150, scale_metric="memory"), "", "give 1 to 100"),
        (_keda(scale_target=50, scale_metric="cpu", min_replicas=0), "", "cannot scale to zero"),
        (
            IsvcSpec(
                "x",
                autoscaler_class="keda",
                old_schema=True,
                predictor=ScaleSpec(scale_target=50, scale_metric="cpu"),
            ),
            "",
            "old_schema=True: the old schema writes Knative's annotations",
        ),  # fmt: skip
    ],
)
def test_what_kserve_would_refuse_for_keda_is_refused_first(spec, mode, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        spec.validate(mode)


def test_the_isvc_parameter_takes_autoscaler_class():
    doc = {"name": "x", "autoscaler_class": "keda",
           "predictor": {"scale_metric": "cpu", "scale_target": 50.0}}  # fmt: skip
    spec = IsvcSpec.from_dict(doc).validate("Standard")
    assert spec.autoscaler_class == "keda" and spec.as_dict()["autoscaler_class"] == "keda"


def test_kube_reads_the_scaled_object_and_the_hpa_it_drives(fake, kube):
    s = fake.play(Scenario(conditions=[READY], frames=FRAMES, default_mode="RawDeployment"))
    s.store(s.admit(KEDA_SPEC.to_dict(benchmark_id=BID)))  # as deploy left it
    (so,) = kube.scaled_objects("serving.kserve.io/inferenceservice=bench-iris")
    assert so == ScaledObjectState(
        "bench-iris-predictor", "keda-hpa-bench-iris-predictor", 1, 4,
        (KedaTrigger("cpu", "Utilization", "50"),), True,
    )  # fmt: skip
    hpa = kube.hpa(so.hpa)
    assert (hpa.name, hpa.desired, hpa.actual) == ("keda-hpa-bench-iris-predictor", 1, 1)
    assert kube.hpa("bench-iris-predictor") is None  # KServe made no HPA of its own: 404


def test_without_keda_or_before_its_hpa_there_is_nothing_to_read(fake, kube):
    s = fake.play(Scenario(conditions=[READY], default_mode="RawDeployment", keda=False))
    s.store(s.admit(KEDA_SPEC.to_dict(benchmark_id=BID)))
    assert kube.scaled_objects("serving.kserve.io/inferenceservice=bench-iris") == []
    s.keda, s.keda_hpa = True, False  # the ScaledObject made, its HPA not yet
    (so,) = kube.scaled_objects("serving.kserve.io/inferenceservice=bench-iris")
    assert so.hpa == "keda-hpa-bench-iris-predictor" and not so.ready  # KEDA's name for it
    assert kube.hpa(so.hpa) is None


def test_the_watcher_reads_the_hpa_keda_drives(fake, kube):
    s = fake.play(Scenario(conditions=[READY], frames=FRAMES, default_mode="RawDeployment"))
    s.store(s.admit(KEDA_SPEC.to_dict(benchmark_id=BID)))
    w = ReplicaWatcher(kube, "bench-iris", autoscaler=KEDA, interval_s=0.01)
    samples = [w.sample() for _ in FRAMES]
    assert [(x.ready, x.total, x.desired, x.actual) for x in samples] == [
        (f.ready, f.total, f.desired, f.actual) for f in FRAMES
    ]
    assert [so.triggers for so in w.scaled_objects] == [(KedaTrigger("cpu", "Utilization", "50"),)]
    paths = {r.split()[1] for r in s.requests}
    assert paths == {PODS_PATH, SO_PATH, f"{HPA_PATH}/keda-hpa-bench-iris-predictor"}


def test_the_watcher_counts_no_scale_before_keda_makes_the_hpa(fake, kube):
    s = fake.play(Scenario(conditions=[READY], frames=FRAMES, default_mode="RawDeployment",
                           keda_hpa=False))  # fmt: skip
    s.store(s.admit(KEDA_SPEC.to_dict(benchmark_id=BID)))
    sample = ReplicaWatcher(kube, "bench-iris", autoscaler=KEDA).sample()
    assert (sample.ready, sample.desired, sample.actual) == (1, None, None)


def test_watch_replicas_reads_keda_for_a_keda_isvc(fake_cluster, tmp_path):
    s = fake_cluster.play(Scenario(conditions=[READY], frames=[Frame(2, 3, 4, 3)],
                                   default_mode="RawDeployment"))  # fmt: skip
    params = BenchParams(run_benchmark=False, benchmark_id=BID, duration_sec=1.0,
                         isvc=KEDA_SPEC.as_dict())  # fmt: skip
    serving.deploy_isvc(params, 5.0)
    s.pa_forbidden_after = 2  # ends the step's window after two samples
    out = tmp_path / "replicas.json"
    serving.watch_replicas(params, str(out))
    doc = json.loads(out.read_text())
    assert [(x["ready"], x["desired"], x["actual"]) for x in doc["samples"]] == [(2, 4, 3)] * 2
    (so,) = doc["scaled_objects"]
    assert so["hpa"] == "keda-hpa-bench-iris-predictor" and so["max_replicas"] == 4
    assert so["triggers"] == [{"type": "cpu", "metric_type": "Utilization", "target": "50"}]
    assert "scaledobjects" in doc["error"] and doc["target"] == 0
    assert f"GET {PA_PATH}" not in s.requests and f"GET {HPA_PATH}" not in s.requests
