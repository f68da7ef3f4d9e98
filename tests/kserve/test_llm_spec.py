"""The LLM InferenceService (kfp_bench/kserve/llm.py): its bodies validate against KServe's CRD
schema and equal llm_isvc_golden.json (refresh with KFP_BENCH_UPDATE_GOLDEN=1), its fields are
where KServe's huggingface runtime reads them, the spec survives the pipeline's JSON parameter,
the OpenAI route and the served model's name, and bad input is refused before anything is
created."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kserve.llm import llm_isvc, openai_base, served_model
from kfp_bench.kserve.spec import GPU, IsvcSpec, ScaleSpec

BID = "golden-1"
GOLDEN_PATH = Path(__file__).with_name("llm_isvc_golden.json")
UPDATE = os.environ.get("KFP_BENCH_UPDATE_GOLDEN") == "1"

SPECS = {
    # KServe's huggingfaceserver README.md "huggingface-llama2" sample (kserve/kserve at
    # aaac4e29, python/huggingfaceserver/README.md): model id by argument, one GPU.
    "model-id-gpu": llm_isvc(
        "huggingface-llama2",
        model_id="meta-llama/Llama-2-7b-chat-hf",
        model_name="llama2",
        cpu="6",
        memory="24Gi",
    ),
    "storage-uri-standard": llm_isvc(
        "bench-llm",
        storage_uri="hf://facebook/opt-125m",
        args=("--max-model-len=2048", "--dtype=float16"),
        deployment_mode="Standard",
        scale=ScaleSpec(scale_target=80, scale_metric="cpu", max_replicas=2),
    ),
    "users-runtime": llm_isvc(
        "bench-vllm", model_id="Qwen/Qwen2.5-0.5B-Instruct", runtime="my-vllm", gpu=2
    ),
    "cpu-only": llm_isvc("bench-cpu-llm", model_id="facebook/opt-125m", gpu=0, memory="4Gi"),
}


def _golden() -> dict:
    if UPDATE:
        doc = {
            name: {"spec": spec.as_dict(), "isvc": spec.to_dict(benchmark_id=BID)}
            for name, spec in SPECS.items()
        }
        GOLDEN_PATH.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return json.loads(GOLDEN_PATH.read_text())


GOLDEN = _golden()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_body_validates_against_the_crd_and_equals_the_golden(schema, name):
    body = SPECS[name].to_dict(benchmark_id=BID)
    schema.validate(body)
    assert body == GOLDEN[name]["isvc"], f"{name} changed; refresh with KFP_BENCH_UPDATE_GOLDEN=1"
    assert GOLDEN[name]["spec"] == SPECS[name].as_dict()


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_spec_survives_the_pipelines_json_parameter(name):
    doc = json.loads(json.dumps(SPECS[name].as_dict()))
    assert IsvcSpec.from_dict(doc).validate() == SPECS[name]


def test_the_fields_land_where_the_huggingface_runtime_reads_them():
    model = SPECS["model-id-gpu"].to_dict(benchmark_id=BID)["spec"]["predictor"]["model"]
    assert model["modelFormat"] == {"name": "huggingface"}  # the runtime's autoSelect format
    assert model["args"] == ["--model_name=llama2", "--model_id=meta-llama/Llama-2-7b-chat-hf"]
    assert model["resources"] == {
        "limits": {"cpu": "6", "memory": "24Gi", GPU: "1"},
        "requests": {"cpu": "6", "memory": "24Gi"},
    }
    assert "storageUri" not in model and "runtime" not in model
    uri = SPECS["storage-uri-standard"].to_dict(benchmark_id=BID)["spec"]["predictor"]
    assert uri["model"]["storageUri"] == "hf://facebook/opt-125m"
    assert uri["model"]["args"] == ["--max-model-len=2048", "--dtype=float16"]
    assert (uri["scaleMetric"], uri["maxReplicas"]) == ("cpu", 2)
    users = SPECS["users-runtime"].to_dict(benchmark_id=BID)["spec"]["predictor"]["model"]
    assert users["runtime"] == "my-vllm" and users["resources"]["limits"] == {GPU: "2"}
    cpu = SPECS["cpu-only"].to_dict(benchmark_id=BID)["spec"]["predictor"]["model"]
    assert GPU not in cpu["resources"]["limits"]


def test_the_crd_check_sees_the_llm_fields(schema):
    body = SPECS["users-runtime"].to_dict(benchmark_id=BID)
    body["spec"]["predictor"]["model"]["args"] = "--model_id=x"  # a string, not a list
    with pytest.raises(jsonschema.ValidationError, match="is not of type 'array'"):
        schema.validate(body)
    body["spec"]["predictor"]["model"]["args"] = []
    body["spec"]["predictor"]["model"]["runtime"] = 7
    with pytest.raises(jsonschema.ValidationError, match="is not of type 'string'"):
        schema.validate(body)


def test_the_openai_route_and_the_model_to_ask_for():
    assert openai_base("http://llm.default.example.com/") == "http://llm.default.example.com/openai"
    assert served_model(SPECS["model-id-gpu"]) == "llama2"
    assert served_model(SPECS["users-runtime"]) == "bench-vllm"  # --model_name={{.Name}}
    vllm = llm_isvc("x", model_id="m/n", model_name="a", args=("--served_model_name", "b", "c"))
    assert served_model(vllm) == "b"  # vLLM's served name wins over --model_name
    with pytest.raises(ConfigError, match="give its status.url"):
        openai_base("llm.default")


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (lambda: llm_isvc("x"), "give one of model_id .* not neither"),
        (lambda: llm_isvc("x", model_id="a/b", storage_uri="hf://a/b"), "not both"),
        (lambda: llm_isvc("x", model_id="a/b", runtime="My_Runtime"), "runtime='My_Runtime'"),
        (lambda: llm_isvc("x", model_id="a/b", gpu=-1), "predictor.gpu=-1: give a whole"),
        (lambda: llm_isvc("x", storage_uri="opt-125m"), "storage_uri='opt-125m': give a model"),
        (lambda: llm_isvc("Bench_LLM", model_id="a/b"), "name='Bench_LLM': not a DNS-1123"),
        (
            lambda: IsvcSpec.from_dict({"name": "x", "model_args": "--model_id=a/b"}),
            r"model_args='--model_id=a/b': give a list of strings",
        ),
        (
            lambda: IsvcSpec("x", storage_uri="", model_format="huggingface").validate(),
            "storage_uri='': give a model URI, .* or model_args",
        ),
        (
            lambda: IsvcSpec("x", runtime="mine", predictor=ScaleSpec(gpu=1)).validate(),
            "predictor.gpu=1: KServe's sklearn runtime",
        ),
    ],
)
def test_bad_input_is_refused_with_the_field_and_the_fix(build, words):
    with pytest.raises(ConfigError, match=words):
        build()
