"""InferenceServices built from parameters validate against KServe's own CRD schema (its
openAPIV3Schema, with jsonschema), equal the bodies the kserve SDK built for them (isvc_golden.json,
recorded from the SDK's models before kfp-bench dropped them; since issue 17 their labels also
name the benchmark, and since issue 18 the deploymentMode annotation is there only when the spec
gives a deployment_mode), and bad parameters are refused before anything is created."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kserve.spec import BENCHMARK_LABEL, GPU, MANAGED_BY_LABEL, IsvcSpec, ScaleSpec

SPECS = {
    "guide-default": IsvcSpec("sklearn-iris"),
    "serverless-scale-to-zero": IsvcSpec(
        "bench-iris",
        deployment_mode="Serverless",
        runtime_version="v0.21.0",
        protocol_version="v2",
        predictor=ScaleSpec(
            scale_target=10,
            scale_metric="rps",
            container_concurrency=8,
            min_replicas=0,
            max_replicas=20,
            cpu="500m",
            memory="1Gi",
        ),
    ),  # fmt: skip
    "raw-hpa": IsvcSpec(
        "bench-raw",
        deployment_mode="RawDeployment",
        predictor=ScaleSpec(scale_target=80, scale_metric="cpu", min_replicas=1, max_replicas=3),
    ),
    "gpu-with-transformer": IsvcSpec(
        "bench-torch",
        model_format="pytorch",
        storage_uri="gs://kfserving-examples/models/torchserve/image_classifier/v1",
        predictor=ScaleSpec(gpu=1, cpu="2", memory="8Gi"),
        transformer_image="kserve/image-transformer:latest",
        transformer=ScaleSpec(scale_target=5, min_replicas=0, max_replicas=4, cpu="1"),
    ),
    "old-schema": IsvcSpec("bench-old", old_schema=True),
}


#: name -> {"spec": IsvcSpec fields, "benchmark_id": the benchmark's id, "isvc": the body the
#: kserve SDK's V1beta1 models and ApiClient.sanitize_for_serialization built from it}, recorded
#: with kserve 0.21.0; the benchmark-id label added by hand for issue 17.
GOLDEN = json.loads(Path(__file__).with_name("isvc_golden.json").read_text())
BID = "golden-1"


def _body(name: str) -> dict:
    return IsvcSpec.from_dict(GOLDEN[name]["spec"]).to_dict(
        benchmark_id=GOLDEN[name]["benchmark_id"]
    )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_generated_objects_validate_against_the_crd(schema, name):
    body = _body(name)
    schema.validate(body)
    assert body["apiVersion"] == "serving.kserve.io/v1beta1" and body["kind"] == "InferenceService"


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_the_body_equals_the_one_the_kserve_sdk_built(name):
    body = _body(name)
    assert body == GOLDEN[name]["isvc"]
    assert json.loads(json.dumps(body)) == body  # plain JSON: no SDK or kubernetes objects


def test_the_golden_file_holds_the_specs_of_these_tests():
    for name, spec in SPECS.items():
        assert GOLDEN[name]["spec"] == spec.as_dict(), name


def test_the_fields_land_where_kserve_reads_them():
    body = SPECS["gpu-with-transformer"].to_dict(benchmark_id=BID)
    pred, trans = body["spec"]["predictor"], body["spec"]["transformer"]
    assert pred["model"]["resources"]["limits"][GPU] == "1"
    assert pred["model"]["modelFormat"] == {"name": "pytorch"}
    assert (pred["scaleTarget"], pred["scaleMetric"], pred["minReplicas"]) == (1, "concurrency", 1)
    assert (trans["scaleTarget"], trans["minReplicas"], trans["maxReplicas"]) == (5, 0, 4)
    assert "annotations" not in body["metadata"]  # no mode given: the cluster's default
    old = SPECS["old-schema"].to_dict(benchmark_id=BID)
    assert old["metadata"]["annotations"]["autoscaling.knative.dev/target"] == "1"
    assert "scaleTarget" not in old["spec"]["predictor"]
    zero = SPECS["serverless-scale-to-zero"].to_dict(benchmark_id=BID)["spec"]["predictor"]
    assert zero["containerConcurrency"] == 8 and zero["minReplicas"] == 0
    assert zero["model"]["runtimeVersion"] == "v0.21.0"


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_every_body_is_labelled_with_its_benchmark(name):
    labels = _body(name)["metadata"]["labels"]
    assert labels == {MANAGED_BY_LABEL: "kfp-bench", BENCHMARK_LABEL: GOLDEN[name]["benchmark_id"]}


def test_no_body_without_a_valid_benchmark_id():
    for bad in ("", "Bench_1", "x" * 64):
        with pytest.raises(ConfigError, match="benchmark id"):
            SPECS["guide-default"].to_dict(benchmark_id=bad)


def test_a_pipeline_parameter_object_becomes_a_spec():
    spec = IsvcSpec.from_dict(
        {"name": "bench-iris", "predictor": {"scale_target": 1.0, "min_replicas": 0.0}}
    ).validate()
    assert spec.predictor.scale_target == 1 and spec.predictor.min_replicas == 0


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        (IsvcSpec("x", model_format="caffe"), "model_format='caffe': unknown; use one of sklearn"),
        (IsvcSpec("x", predictor=ScaleSpec(scale_metric="qps")), "scale_metric='qps': use one of"),
        (IsvcSpec("x", predictor=ScaleSpec(scale_target=-2)), "scale_target=-2"),
        (
            IsvcSpec("x", predictor=ScaleSpec(min_replicas=5, max_replicas=2)),
            "predictor.min_replicas=5: must not exceed max_replicas=2",
        ),
        (
            IsvcSpec("x", predictor=ScaleSpec(container_concurrency=-1)),
            "container_concurrency=-1: give 0",
        ),
        (IsvcSpec("x", predictor=ScaleSpec(gpu=1)), "predictor.gpu=1: KServe's sklearn runtime"),
        (
            IsvcSpec("x", deployment_mode="RawDeployment"),
            "scale_metric='concurrency': RawDeployment scales with an HPA",
        ),
        (
            IsvcSpec(
                "x", deployment_mode="Standard", predictor=ScaleSpec("cpu" and 50, "cpu", 0, 0)
            ),
            "min_replicas=0: Standard (HPA) cannot scale to zero",
        ),
        (IsvcSpec("x", deployment_mode="Kourier"), "deployment_mode='Kourier': use one of"),
        (IsvcSpec("x", kserve_namespace="KServe"), "kserve_namespace='KServe': not a DNS-1123"),
        (IsvcSpec("Bench_Iris"), "name='Bench_Iris': not a DNS-1123 label"),
        (IsvcSpec("-iris"), "not a DNS-1123 label"),
        (IsvcSpec("a" * 64), "not a DNS-1123 label"),
        (
            IsvcSpec("x", transformer_image="t:1", transformer=ScaleSpec(scale_target=-1)),
            "isvc transformer.scale_target=-1",
        ),
    ],
)
def test_bad_input_is_refused_with_the_field_and_the_fix(spec, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(").replace(")", r"\)")):
        spec.validate()


def test_the_mode_annotation_is_written_only_when_a_mode_is_given():
    """Issue 18: a Serverless annotation written always kept the InferenceService from ever
    becoming ready on a KServe installed without Knative (Standard by default)."""
    for name, spec in SPECS.items():
        ann = spec.to_dict(benchmark_id=BID)["metadata"].get("annotations") or {}
        assert ann.get("serving.kserve.io/deploymentMode") == (spec.deployment_mode or None), name
    knative = IsvcSpec("x", deployment_mode="Knative").to_dict(benchmark_id=BID)
    assert knative["metadata"]["annotations"] == {"serving.kserve.io/deploymentMode": "Knative"}


def test_with_no_mode_given_the_hpa_checks_use_the_clusters_default():
    spec = IsvcSpec("x")  # concurrency, as Knative scales: refused once the default is an HPA's
    assert spec.validate() is spec and spec.validate("Knative") is spec
    with pytest.raises(ConfigError, match="'concurrency': Standard scales with an HPA"):
        spec.to_dict(benchmark_id=BID, mode="Standard")
    given = IsvcSpec("x", deployment_mode="Serverless")
    assert given.validate("Standard") is given  # what the spec asks for wins


def test_unknown_fields_of_a_parameter_object_are_refused():
    with pytest.raises(ConfigError, match=r"isvc: unknown fields \['replicas'\]"):
        IsvcSpec.from_dict({"name": "x", "replicas": 3})
    with pytest.raises(ConfigError, match="isvc predictor: unknown fields"):
        IsvcSpec.from_dict({"name": "x", "predictor": {"target": 3}})


def test_the_crd_check_is_real_a_wrong_body_fails(schema):
    body = SPECS["guide-default"].to_dict(benchmark_id=BID)
    body["spec"]["predictor"]["scaleMetric"] = "qps"
    with pytest.raises(jsonschema.ValidationError, match="qps"):
        schema.validate(body)


def test_a_scale_target_of_0_writes_none_as_the_guides_container_concurrency_example():
    """KServe's guide sets containerConcurrency 10 alone; KServe then writes no target
    annotation (pkg/controller/v1alpha1/utils/utils.go:61) and Knative targets 10 per pod. A
    target of 1 beside it would make Knative target 1 (the smaller)."""
    spec = IsvcSpec("x", predictor=ScaleSpec(scale_target=0, container_concurrency=10))
    pred = spec.validate().to_dict(benchmark_id="b-1")["spec"]["predictor"]
    assert "scaleTarget" not in pred and pred["containerConcurrency"] == 10
    old = IsvcSpec("x", old_schema=True, predictor=ScaleSpec(scale_target=0)).validate()
    assert old.to_dict(benchmark_id="b-1")["metadata"]["annotations"] == {
        "autoscaling.knative.dev/metric": "concurrency"
    }
