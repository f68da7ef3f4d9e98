"""Terminate as KFP's API server answers it (kubeflow/pipelines 7b70c7b95f): a run that is no
longer PAUSED, PENDING or RUNNING is refused with 400 (storage/run_store.go:1387-1410), never
terminated twice. Real server process on loopback, plain HTTP."""

from __future__ import annotations

from .support import API, call, unique, upload, wait_run


def _run(server) -> dict:
    status, exp = call(server, "POST", f"{API}/experiments", {"display_name": unique("term")})
    assert status == 200, exp
    status, pipeline = upload(server, "hello_world.yaml", unique("hello"))
    assert status == 200, pipeline
    body = {
        "display_name": unique("run"),
        "experiment_id": exp["experiment_id"],
        "pipeline_version_reference": {"pipeline_id": pipeline["pipeline_id"]},
    }
    status, run = call(server, "POST", f"{API}/runs", body)
    assert status == 200, run
    return run


def test_terminate_of_a_finished_run_is_refused_as_kfp_refuses_it(server):
    run = _run(server)
    done = wait_run(server, run["run_id"])  # simulated: 0.3 s
    assert done["state"] == "SUCCEEDED"
    status, body = call(server, "POST", f"{API}/runs/{run['run_id']}:terminate")
    assert status == 400, body
    rid = run["run_id"]
    assert body["code"] == 3
    assert body["message"] == (
        f"Failed to terminate a run: Failed to terminate run {rid}: Invalid input error: "
        f"Failed to terminate a run {rid}. Row not found"
    )
    assert body["details"][0]["message"] == f"Failed to terminate a run {rid}. Row not found"
    # the run is untouched: still SUCCEEDED, its history not extended
    _, after = call(server, "GET", f"{API}/runs/{rid}")
    assert after["state"] == "SUCCEEDED" and after["state_history"] == done["state_history"]


def test_terminate_twice_is_refused_the_second_time(server):
    run = _run(server)
    status, _ = call(server, "POST", f"{API}/runs/{run['run_id']}:terminate")
    assert status == 200
    wait_run(server, run["run_id"], states={"CANCELED"})
    status, body = call(server, "POST", f"{API}/runs/{run['run_id']}:terminate")
    assert status == 400 and "Row not found" in body["message"], body


def test_terminate_of_an_unknown_run_is_404(server):
    status, body = call(server, "POST", f"{API}/runs/no-such-run:terminate")
    assert status == 404, body
