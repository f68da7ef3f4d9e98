"""Compiled YAML is a golden file: compiled/ must equal a fresh compile, file by file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from kfp_bench.errors import ConfigError
from kfp_bench.pipelines import PIPELINES
from kfp_bench.steps.compile import DEFAULT_OUT, compile_all, delivery_for


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
#: The Workflow the API server compiles is 1.2 to 2.7 times its pipeline spec (kubeflow/pipelines
#: 7b70c7b95f, test_data/compiled-workflows/ beside test_data/sdk_compiled_pipelines/, the eight
#: specs over 15 kB): 175 kB stays under ~475 kB of Workflow, half the limit, the other half
#: left to the nodes' status. (150 kB until 11 parameters were added on 2026-12-02.)
MAX_PIPELINE_BYTES = 175_000
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
    """The pip requirements a step's command installs, in order (quoted either way)."""
    script = " ".join(executor["container"]["command"])
    return re.findall(
        r"pip install (?:--\S+ )*\\?\n?(?:--index-url \S+ )?((?:['\"][^'\"]+['\"] ?)+)", script
    )


def _platform(text: str) -> dict:
    docs = list(yaml.safe_load_all(text))
    return docs[1]["platforms"]["kubernetes"]["deploymentSpec"]["executors"]


def test_package_mode_installs_the_pinned_wheel_with_the_steps_extra_and_kfp_without_deps():
    import kfp_bench.components as comps
    from kfp_bench.artifact import build

    pin = build().sha256  # the golden file pins this checkout's own wheel
    text = (DEFAULT_OUT / "kfp_bench.yaml").read_text()
    executors = _executors(text)
    platform = _platform(text)
    # a step used twice (check_outcome, once under run_llm's condition) has a second executor,
    # exec-<step>-2
    steps = {re.sub(r"-[0-9]+$", "", name) for name in executors}
    assert {f"exec-{s.replace('_', '-')}" for s in comps.__all__} == steps
    for name, executor in executors.items():
        assert executor["container"]["image"] == "python:3.11-slim"
        step = getattr(comps, re.sub(r"-[0-9]+$", "", name.removeprefix("exec-")).replace("-", "_"))
        extras = f"[{','.join(step.extras)}]" if step.extras else ""  # none: kfp-bench alone
        want = f'"KFP-bench{extras} @ file://$wheel#sha256={pin}"'
        installs = _installs(executor)
        assert installs[0].strip() == want, (name, installs)
        assert installs[1].startswith("'kfp==2.17.3' '--no-deps'"), (name, installs)
        assert len(installs) == 2, (name, installs)
        # the wheel's file is checked against the pin before pip runs, and comes from the volume
        script = executor["container"]["command"][2]
        assert f'"$wheel" {pin} || exit 1' in script, name
        assert "${KFP_BENCH_WHEEL_DIR:-/kfp-bench/wheel}/kfp_bench-" in script, name
        (volume,) = platform[name]["configMapAsVolume"]
        assert volume == {
            "configMapName": f"kfp-bench-{pin[:12]}",
            "configMapNameParameter": {"runtimeValue": {"constant": f"kfp-bench-{pin[:12]}"}},
            "mountPath": "/kfp-bench/wheel",
            "optional": True,
        }, name
        # pip compiles no bytecode at install: PIP_COMPILE=0 (PIP_NO_COMPILE=1 would compile);
        # numpy's OpenBLAS gets one thread (kfp_bench.load.cpu.one_blas_thread)
        assert executor["container"]["env"] == [
            {"name": "PIP_COMPILE", "value": "0"},
            {"name": "OPENBLAS_NUM_THREADS", "value": "1"},
        ], name
    # nothing installs kfp-bench by a name and version that an index could serve
    assert not re.search(r"kfp-bench(\[[a-z,]*\])?==", text, re.IGNORECASE)


def test_a_mirror_serves_the_dependencies_and_kfp_never_kfp_bench(tmp_path):
    out = compile_all(
        tmp_path, delivery=delivery_for(index_url="https://pypi.example.com/simple"),
        names=["kfp_bench"],
    )  # fmt: skip
    for name, executor in _executors(out["kfp_bench"].read_text()).items():
        script = " ".join(executor["container"]["command"])
        assert script.count("--index-url https://pypi.example.com/simple") == 2, name
        assert "@ file://$wheel#sha256=" in script, name


def test_a_wheel_url_is_installed_by_its_pin_and_mounts_nothing(tmp_path):
    url = "https://example.com/releases/kfp_bench-0.1.0-py3-none-any.whl"
    out = compile_all(
        tmp_path, delivery=delivery_for(wheel_url=url, sha256="ab" * 32), names=["kfp_bench"]
    )
    text = out["kfp_bench"].read_text()
    for name, executor in _executors(text).items():
        assert f" @ {url}#sha256={'ab' * 32}'" in executor["container"]["command"][2], name
    assert "configMapAsVolume" not in text


DIGEST = "ghcr.io/example/kfp-bench@sha256:" + "0" * 64


def test_image_mode_runs_every_step_in_the_image_and_installs_nothing(tmp_path):
    out = compile_all(tmp_path, delivery=delivery_for(image=DIGEST), names=["kfp_bench"])
    text = out["kfp_bench"].read_text()
    for name, executor in _executors(text).items():
        assert executor["container"]["image"] == DIGEST, name
        assert "pip install" not in " ".join(executor["container"]["command"]), name
        assert "env" not in executor["container"], name
    assert "configMapAsVolume" not in text


@pytest.mark.parametrize(
    "kw, words",
    [
        ({"image": "has space"}, "--image 'has space': give the image by its digest"),
        ({"image": "ghcr.io/x/kfp-bench:1"}, "a tag can be moved to other code"),
        ({"index_url": "ftp://mirror/simple"}, "--pip-index-url 'ftp://mirror/simple': give"),
        ({"image": DIGEST, "index_url": "https://m/simple"}, "--image with --pip-index-url"),
        ({"wheel_url": "https://m/kfp_bench.whl"}, "needs --sha256"),
        ({"sha256": "abc"}, "--sha256 'abc': give the wheel's sha256"),
    ],
)
def test_a_bad_delivery_is_refused(kw, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        delivery_for(**kw)


def test_meta_pipeline_parameters_have_working_defaults():
    doc = next(yaml.safe_load_all((DEFAULT_OUT / "kfp_bench.yaml").read_text()))
    params = doc["root"]["inputDefinitions"]["parameters"]
    assert all("defaultValue" in p or p.get("isOptional") for p in params.values())
    assert (
        params["kfp_host"]["defaultValue"] == "http://ml-pipeline.kubeflow.svc.cluster.local:8888"
    )
    from kfp_bench.steps.params import BenchParams

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
