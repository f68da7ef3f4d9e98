"""compiled/kfp_bench.yaml, the file a cluster receives, run the way a cluster runs it.

Every task runs with kfp.local's ``SubprocessRunner(use_venv=True)``: a new virtual environment
with no system site-packages, in which the step's own ``pip install`` lines from the YAML run,
from a folder of wheels with the index off (``kfp_bench.sandbox.pods``); kfp-bench's wheel is
built from this checkout. The working directory is not the checkout, so no step can import the
checkout's sources. The first test runs the whole pipeline against the local KFP API and the
KServe model server, with the LLM load beside it against the local streaming server; the second
shows the check can fail: a kfp-bench wheel whose ``kfp`` extra lacks PyYAML fails the first
step with the missing module named.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from kfp import components

from kfp_bench import artifact
from kfp_bench.results import read_results
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.sandbox.pods import as_pods
from kfp_bench.stats import store
from kfp_bench.steps.bundled import compiled_file
from kfp_bench.steps.compile import compile_all, delivery_for
from tests.components.conftest import leftovers
from tests.conftest import copy_of_checkout

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
#: Every task of the pipeline (inference-load once per load worker, llm-load once per LLM load
#: worker; check-outcome-2 checks the LLM load's flags).
STEPS = {
    "check-params", "deploy-isvc", "stage-manifest", "upload-manifest", "spawn-runs", "poll-runs",
    "rate-sweep", "inference-load", "watch-replicas", "aggregate", "report", "check-outcome",
    "llm-targets", "llm-load", "report-llm", "check-outcome-2", "cleanup",
}  # fmt: skip
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_DONE = re.compile(r"Task '(\S+)' finished with status (\w+)")


def _finished(text: str) -> list[tuple[str, str]]:
    return _DONE.findall(_ANSI.sub("", text))


def e2e_args(kfp_url: str, model_url: str, benchmark_id: str) -> dict:
    """A short run of every step: 3 noop runs, a 2-step sweep, 2 load workers."""
    return dict(
        kfp_host=kfp_url,
        num_runs=3,
        poll_interval_sec=0.2,
        inference_url=model_url,
        duration_sec=1.0,
        concurrency=2,
        load_workers=2,
        sweep_rates="5,20",
        sweep_step_sec=1.0,
        benchmark_id=benchmark_id,
    )


def llm_args(llm_url: str) -> dict:
    """A short LLM load beside it: 2 LLM workers, 1 s, the model from /v1/models."""
    return dict(
        run_llm=True,
        llm_url=llm_url,
        llm_duration_sec=1.0,
        llm_concurrency=4,
        llm_workers=2,
        llm_input_tokens="fixed:8",
        llm_output_tokens="fixed:16",
        llm_slo="ttft=1s",
    )


def test_every_step_succeeds_in_a_fresh_environment(wheels, mounted, tmp_path, model_server, capfd):
    root = tmp_path / "root"
    pipeline = components.load_component_from_file(str(compiled_file("kfp_bench")))
    with (
        start_kfp_server(simulate="all:fixed(0.2)", max_parallel_runs=8) as kfp_api,
        start_llm_server(first_token_ms=20, token_gap_ms=5, max_tokens=16) as llm,
        as_pods(wheels, root, mounted),
    ):
        args = e2e_args(kfp_api.url, model_server.v1_predict_url, "pods-e2e")
        pipeline(**args, **llm_args(llm.url + "/openai"))
        left = leftovers(kfp_api.url, "pods-e2e")
    out = capfd.readouterr()
    text = out.out + out.err
    done = _finished(text)
    assert {name for name, _ in done} == STEPS, done
    assert _ANSI.sub("", text).count("Executing task 'inference-load'") == 2  # a task per worker
    assert _ANSI.sub("", text).count("Executing task 'llm-load'") == 2
    assert {state for _, state in done} == {"SUCCESS"}, done
    # each step ran the installed wheel, not this checkout
    (where,) = re.findall(r"kfp-bench \S+ from (\S+)", text)
    # (the step environments may live in the checkout's .venv; their kfp_bench is the wheel's)
    assert "site-packages" in where and not where.startswith(str(ROOT / "kfp_bench")), where
    (records,) = root.glob("kfp-bench-*/report/records")
    res = read_results(records)
    assert res.summary["runs"]["by_state"] == {"SUCCEEDED": 3}
    assert res.load.workers["reported"] == 2 and not res.load.workers["missing"]
    assert [row["rate"] for row in res.summary["sweep"]] == [5, 20]
    assert left == 0
    # the LLM load: both workers merged into llm.json, its metrics published by their names
    (llm_dir,) = root.glob("kfp-bench-*/report-llm/results")
    merged = store.load(llm_dir / "llm.json")
    assert merged.workers["reported"] == 2 and not merged.workers["missing"]
    assert merged.options["model"] == "kfp-bench-llm" and merged.summary().requests > 0
    (out,) = root.glob("kfp-bench-*/report-llm/executor_output.json")
    published = json.loads(out.read_text())["artifacts"]["metrics"]["artifacts"][0]["metadata"]
    assert published["ttft_p50_ms"] >= 20 and published["goodput_ratio"] > 0


def _without_yaml_in_kfp_extra(out: Path) -> artifact.Artifact:
    """kfp-bench's wheel built from a copy of this checkout whose ``kfp`` extra lacks PyYAML."""
    src = copy_of_checkout(out / "src")
    pyproject = src / "pyproject.toml"
    text = pyproject.read_text()
    kfp_extra = text.index("\nkfp = [")
    cut = text.index('    "PyYAML==6.0.4",\n', kfp_extra)
    assert cut < text.index("]", kfp_extra)
    pyproject.write_text(text[:cut] + text[cut + len('    "PyYAML==6.0.4",\n') :])
    return artifact.build(src)


def test_a_dependency_missing_from_an_extra_fails_the_step_naming_the_module(
    wheels, tmp_path, capfd
):
    broken = _without_yaml_in_kfp_extra(tmp_path)
    # the pipeline pinned to that wheel, which is the one in the volume
    yaml_file = compile_all(
        tmp_path / "compiled", delivery=delivery_for(sha256=broken.sha256), names=["kfp_bench"]
    )["kfp_bench"]
    mounted = tmp_path / "volume"
    broken.write(mounted)
    pipeline = components.load_component_from_file(str(yaml_file))
    with start_kfp_server() as kfp_api, as_pods(wheels, tmp_path / "root", mounted):
        with pytest.raises(RuntimeError, match="check-params"):
            pipeline(kfp_host=kfp_api.url, run_load=False, benchmark_id="pods-missing")
    out = capfd.readouterr()
    text = out.out + out.err
    assert "ModuleNotFoundError: No module named 'yaml'" in text
    assert ("check-params", "FAILURE") in _finished(text)
