"""Compiled YAML is a golden file: compiled/ must equal a fresh compile, file by file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kfp_bench.pipelines import PIPELINES

from kfp_bench import compile as compile_mod
from kfp_bench.compile import DEFAULT_OUT, MAX_ARG_BYTES, MAX_BYTES, compile_all, longest_arguments
from kfp_bench.errors import ConfigError


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


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_every_step_can_start(fresh, name):
    """Each step's source, the engine archive inside, is one argument of its command."""
    longest = longest_arguments(fresh[name].read_text())
    assert longest and all(0 < size < MAX_ARG_BYTES for size in longest.values()), longest


def test_the_argument_bound_is_the_kernels():
    """MAX_ARG_BYTES is where this kernel stops starting programs (E2BIG), as a pod's would."""
    import errno
    import subprocess

    subprocess.run(["true", "x" * (MAX_ARG_BYTES - 1)], check=True)
    with pytest.raises(OSError) as exc:
        subprocess.run(["true", "x" * MAX_ARG_BYTES], check=True)
    assert exc.value.errno == errno.E2BIG


def test_a_step_too_long_to_start_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_mod, "MAX_ARG_BYTES", 400)  # fanout's steps: 310-464 bytes
    too_long = r"pipeline fanout, step exec-fan-step: a command argument of 4\d\d bytes"
    with pytest.raises(ConfigError, match=too_long):
        compile_all(tmp_path, names=["fanout"])
    assert not (tmp_path / "fanout.yaml").exists()


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
