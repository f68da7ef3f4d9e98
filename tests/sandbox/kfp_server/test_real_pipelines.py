"""The KFP project's own compiled pipelines, executed for real by kfp.local, or simulated.

Executed runs' tasks use the cached per-kfp-version environment (``envs.py``), made on first use
(about 10 s each for kfp 2.14.3 and 2.14.6) and reused by later test sessions. The server's own
environment must come out unchanged: foreign manifests pip-install their own kfp.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server

from .conftest import make_client
from .support import API, call, execution, unique, upload, wait_run

CASES = {
    "add_numbers": ({"a": 1, "b": 2}, "SUCCEEDED", "executed"),
    "lightweight_python_functions_pipeline": ({"message": "hi"}, "SUCCEEDED", "executed"),
    "pipeline_with_parallelfor_parallelism": (
        {"loop_parameter": ["a", "b"]},
        "SUCCEEDED",
        "executed",
    ),
    "fail_v2": ({}, "FAILED", "executed"),
    "hello_world": ({}, "SUCCEEDED", "simulated"),
    "producer_consumer_param_pipeline": ({"input_text": "x"}, "SUCCEEDED", "simulated"),
}


def _kfp_version() -> str:
    code = "from importlib.metadata import version; print(version('kfp'))"
    return subprocess.check_output([sys.executable, "-c", code], text=True).strip()


@pytest.mark.slow
def test_reference_pipelines_reach_their_final_states():
    before = _kfp_version()
    with start_kfp_server(max_parallel_runs=2, simulate="auto:fixed(0.5)") as s:
        client = make_client(s.url)
        exp = client.create_experiment(unique("reference"))
        runs = {}
        for name, (params, _, _) in CASES.items():
            status, pipeline = upload(s, f"{name}.yaml", unique(name))
            assert status == 200, pipeline
            versions = client.list_pipeline_versions(pipeline["pipeline_id"]).pipeline_versions
            runs[name] = client.run_pipeline(
                exp.experiment_id, name, params=params,
                pipeline_id=pipeline["pipeline_id"], version_id=versions[0].pipeline_version_id,
            ).run_id  # fmt: skip
        results = {name: wait_run(s, run_id, timeout=240) for name, run_id in runs.items()}
    for name, (_, state, how) in CASES.items():
        run = results[name]
        assert (run["state"], execution(run)) == (state, how), (name, run.get("error"))
        history = [h["state"] for h in run["state_history"]]
        assert history == ["PENDING", "RUNNING", state], (name, history)
        tasks = run["run_details"]["task_details"]
        assert tasks and all(t["state"] in ("SUCCEEDED", "FAILED") for t in tasks), (name, tasks)
    loops = results["pipeline_with_parallelfor_parallelism"]["run_details"]["task_details"]
    assert len(loops) > 5  # every ParallelFor iteration is a task of its own
    assert any(t["state"] == "FAILED" for t in results["fail_v2"]["run_details"]["task_details"])
    assert _kfp_version() == before == "2.17.3"


def test_terminate_kills_an_executing_run():
    with start_kfp_server(max_parallel_runs=1) as s:
        status, pipeline = upload(s, "pipeline_with_parallelfor_parallelism.yaml", unique("loop"))
        body = {
            "display_name": "to-cancel",
            "pipeline_version_reference": {"pipeline_id": pipeline["pipeline_id"]},
            "runtime_config": {"parameters": {"loop_parameter": ["a", "b"]}},
        }
        run = call(s, "POST", f"{API}/runs", body)[1]
        wait_run(s, run["run_id"], states={"RUNNING"}, timeout=60)
        assert call(s, "POST", f"{API}/runs/{run['run_id']}:terminate")[0] == 200
        done = wait_run(s, run["run_id"], timeout=20)
    assert done["state"] == "CANCELED"
    assert [h["state"] for h in done["state_history"]][-2:] == ["CANCELING", "CANCELED"]


def test_an_executed_run_s_job_id_is_its_run_id(tmp_path):
    """``dsl.PIPELINE_JOB_ID_PLACEHOLDER`` in an executed run is the server's run id, as KFP's
    driver resolves ``{{$.pipeline_job_uuid}}`` (backend/src/v2/driver/resolve.go:440, at
    7b70c7b95f): a benchmark's lease names its run by it, and a terminated holder is seen."""
    from kfp import compiler

    from .job_id_pipeline import job_id_pipeline

    package = tmp_path / "job_id.yaml"
    compiler.Compiler().compile(job_id_pipeline, str(package))
    state = tmp_path / "state"
    with start_kfp_server(max_parallel_runs=1, state_dir=str(state)) as s:
        status, pipeline = upload(s, package.name, unique("job-id"), data=package.read_bytes())
        assert status == 200, pipeline
        body = {
            "display_name": "job-id",
            "pipeline_version_reference": {"pipeline_id": pipeline["pipeline_id"]},
        }
        run = call(s, "POST", f"{API}/runs", body)[1]
        done = wait_run(s, run["run_id"], timeout=120)
    log = (state / "runs" / run["run_id"] / "log.txt").read_text()
    assert done["state"] == "SUCCEEDED", log[-2000:]
    assert f"job id is [{run['run_id']}]" in log, log[-2000:]
