"""Compiled YAML is a golden file: compiled/ must equal a fresh compile, file by file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kfp_bench.pipelines import PIPELINES

from kfp_bench.compile import DEFAULT_OUT, MAX_BYTES, compile_all


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict[str, Path]:
    return compile_all(tmp_path_factory.mktemp("compiled"))


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_compiled_is_up_to_date(fresh, name):
    golden = DEFAULT_OUT / f"{name}.yaml"
    assert golden.exists(), f"compiled/{name}.yaml missing: run kfp-bench compile"
    assert fresh[name].read_text() == golden.read_text(), (
        f"compiled/{name}.yaml is stale: run kfp-bench compile"
    )


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_each_file_is_under_1_mb(fresh, name):
    assert fresh[name].stat().st_size < MAX_BYTES


def test_compiling_twice_gives_identical_files(fresh, tmp_path):
    again = compile_all(tmp_path)
    for name, path in fresh.items():
        assert again[name].read_bytes() == path.read_bytes(), name


def test_base_image_replaces_every_component_image(tmp_path):
    out = compile_all(tmp_path, base_image="ghcr.io/example/kfp-bench:1", names=["kfp_bench"])
    doc = next(yaml.safe_load_all(out["kfp_bench"].read_text()))
    images = {e["container"]["image"] for e in doc["deploymentSpec"]["executors"].values()}
    assert images == {"ghcr.io/example/kfp-bench:1"}


def test_meta_pipeline_parameters_have_working_defaults():
    doc = next(yaml.safe_load_all((DEFAULT_OUT / "kfp_bench.yaml").read_text()))
    params = doc["root"]["inputDefinitions"]["parameters"]
    assert all("defaultValue" in p or p.get("isOptional") for p in params.values())
    assert (
        params["kfp_host"]["defaultValue"] == "http://ml-pipeline.kubeflow.svc.cluster.local:8888"
    )
    from kfp_bench.params import BenchParams

    assert set(params) == set(BenchParams.names())


def test_kubernetes_settings_are_where_they_belong():
    doc = list(yaml.safe_load_all((DEFAULT_OUT / "kfp_bench.yaml").read_text()))[1]
    execs = doc["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
    assert "nodeSelector" in execs["exec-inference-load"]
    for name in ("exec-upload-manifest", "exec-spawn-runs", "exec-poll-runs", "exec-cleanup"):
        assert execs[name]["secretAsVolume"][0]["optional"] is True
        assert execs[name]["podMetadata"]["labels"] == {"access-ml-pipeline": "true"}
    assert all("activeDeadlineSeconds" in e for e in execs.values())
    executors = next(yaml.safe_load_all((DEFAULT_OUT / "kfp_bench.yaml").read_text()))[
        "deploymentSpec"
    ]["executors"]
    for name in ("exec-inference-load", "exec-rate-sweep"):
        assert "nodeSelector" in execs[name]
        res = executors[name]["container"]["resources"]
        # a core and memory requested, and no CPU limit to throttle the load generator
        assert res["resourceCpuRequest"] == "1" and res["resourceMemoryRequest"] == "256Mi"
        assert "resourceCpuLimit" not in res and "cpuLimit" not in res
    for n in ("noop", "fanout", "train"):
        child = list(yaml.safe_load_all((DEFAULT_OUT / f"{n}.yaml").read_text()))[1]
        for e in child["platforms"]["kubernetes"]["deploymentSpec"]["executors"].values():
            assert "nodeSelector" in e
