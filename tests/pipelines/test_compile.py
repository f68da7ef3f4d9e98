"""Compiled YAML is a golden file: compiled/ must equal a fresh compile, file by file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from kfp_bench.pipelines import PIPELINES

from kfp_bench.compile import DEFAULT_OUT, compile_all, delivery_for
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


#: What the compiled pipeline may weigh: KFP's Argo Workflow carries every component's spec and
#: each executed node's inputs, under Kubernetes' ~1 MB object limit (tests/data/README.md).
MAX_PIPELINE_BYTES = 150_000
#: No step's command or argument above this: a step carries a call into the package, not code.
MAX_COMMAND_BYTES = 16_384


def _executors(text: str) -> dict:
    return next(yaml.safe_load_all(text))["deploymentSpec"]["executors"]


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_the_yaml_is_small_and_carries_no_code(fresh, name):
    text = fresh[name].read_text()
    assert len(text.encode()) <= MAX_PIPELINE_BYTES
    assert not re.search(r"[A-Za-z0-9+/=]{2000,}", text), "a base64 blob in the YAML"
    assert "EMBEDDED_ARCHIVE" not in text
    for step, executor in _executors(text).items():
        container = executor["container"]
        longest = max(len(s.encode()) for s in container["command"] + container.get("args", []))
        assert longest <= MAX_COMMAND_BYTES, (step, longest)


def test_compiling_twice_gives_identical_files(fresh, tmp_path):
    again = compile_all(tmp_path)
    for name, path in fresh.items():
        assert again[name].read_bytes() == path.read_bytes(), name


def _installs(executor: dict) -> list[str]:
    """The pip requirements a step's command installs, in order."""
    script = " ".join(executor["container"]["command"])
    return re.findall(r"pip install [^']*((?:'[^']+' ?)+)", script)


def test_package_mode_installs_the_steps_extra_and_kfp_without_deps():
    import kfp_bench.components as comps

    from kfp_bench import __version__

    executors = _executors((DEFAULT_OUT / "kfp_bench.yaml").read_text())
    # a step used twice (check_outcome, once under run_llm's condition) has a second executor,
    # exec-<step>-2
    steps = {re.sub(r"-[0-9]+$", "", name) for name in executors}
    assert {f"exec-{s.replace('_', '-')}" for s in comps.__all__} == steps
    for name, executor in executors.items():
        assert executor["container"]["image"] == "python:3.11-slim"
        step = getattr(comps, re.sub(r"-[0-9]+$", "", name.removeprefix("exec-")).replace("-", "_"))
        extras = f"[{','.join(step.extras)}]" if step.extras else ""  # none: kfp-bench alone
        want = f"'KFP-bench{extras}=={__version__}'"
        installs = _installs(executor)
        assert installs[0].strip() == want, (name, installs)
        assert installs[1].startswith("'kfp==2.17.3' '--no-deps'"), (name, installs)
        # pip compiles no bytecode at install: PIP_COMPILE=0 (PIP_NO_COMPILE=1 would compile)
        assert executor["container"]["env"] == [{"name": "PIP_COMPILE", "value": "0"}], name


def test_a_mirror_is_used_for_every_install(tmp_path):
    out = compile_all(
        tmp_path, delivery=delivery_for(index_url="https://pypi.example.com/simple"),
        names=["kfp_bench"],
    )  # fmt: skip
    for name, executor in _executors(out["kfp_bench"].read_text()).items():
        script = " ".join(executor["container"]["command"])
        assert script.count("--index-url https://pypi.example.com/simple") == 2, name


def test_image_mode_runs_every_step_in_the_image_and_installs_nothing(tmp_path):
    out = compile_all(
        tmp_path, delivery=delivery_for(image="ghcr.io/example/kfp-bench:1"), names=["kfp_bench"]
    )
    for name, executor in _executors(out["kfp_bench"].read_text()).items():
        assert executor["container"]["image"] == "ghcr.io/example/kfp-bench:1", name
        assert "pip install" not in " ".join(executor["container"]["command"]), name
        assert "env" not in executor["container"], name


@pytest.mark.parametrize(
    "image, index_url, words",
    [
        ("has space", "", "--image 'has space': give an image"),
        ("", "ftp://mirror/simple", "--pip-index-url 'ftp://mirror/simple': give the http(s)"),
        ("img:1", "https://m/simple", "--image and --pip-index-url: give one"),
    ],
)
def test_a_bad_delivery_is_refused(image, index_url, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        delivery_for(image, index_url)


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
