"""Runs and experiments answered as KFP's API server answers them (kubeflow/pipelines 7b70c7b95f).

Each case cites the Go code it follows; a real server on loopback is asked over raw HTTP.
"""

from __future__ import annotations

import re

import pytest
import yaml

from kfp_bench.sandbox.kfp_server import start_kfp_server

from .support import API, PIPELINES, call, unique, upload, wait_run

WHOLE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
EPOCH = "1970-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def slow_agent():
    """Simulated runs of 0.3 s, reported RUNNING 1.5 s after creation (the persistence agent)."""
    with start_kfp_server(simulate="all:fixed(0.3)", persistence_delay=1.5, seed=5) as s:
        yield s


def _spec(name: str = "hello_world.yaml") -> dict:
    return yaml.safe_load((PIPELINES / name).read_text())


def _create(server, name: str, **extra) -> dict:
    status, run = call(server, "POST", f"{API}/runs",
                       {"display_name": name, "pipeline_spec": _spec(), **extra})  # fmt: skip
    assert status == 200, run
    return run


def _experiment(server) -> dict:
    status, exp = call(server, "POST", f"{API}/experiments", {"display_name": unique("exp")})
    assert status == 200, exp
    return exp


def test_timestamps_are_whole_seconds_and_finished_at_is_the_epoch_until_the_end(server):
    """server/api_converter.go:1599-1603 (toApiRun: timestamppb.New(time.Unix(x, 0)) for
    created_at, scheduled_at and finished_at, always set), :2602-2603 (state_history
    update_time: Timestamp{Seconds}), :1913-1915 (task create/start/end_time),
    :164-165 (experiment created_at and last_run_created_at); protojson writes a Timestamp of
    whole seconds with no fraction."""
    exp = _experiment(server)
    assert WHOLE.match(exp["created_at"]) and exp["last_run_created_at"] == EPOCH
    run = _create(server, unique("ts"), experiment_id=exp["experiment_id"])
    assert run["finished_at"] == EPOCH
    for key in ("created_at", "scheduled_at"):
        assert WHOLE.match(run[key]), run[key]
    assert run["scheduled_at"] == run["created_at"]  # resource_manager.go:760-763
    done = wait_run(server, run["run_id"])
    assert WHOLE.match(done["finished_at"]) and done["finished_at"] != EPOCH
    stamps = [h["update_time"] for h in done["state_history"]]
    assert stamps and all(WHOLE.match(t) for t in stamps), stamps
    for task in done["run_details"]["task_details"]:
        for key in ("create_time", "start_time", "end_time"):
            assert WHOLE.match(task[key]), task
    exp = call(server, "GET", f"{API}/experiments/{exp['experiment_id']}")[1]
    assert exp["last_run_created_at"] == run["created_at"]
    status, pipeline = upload(server, "add_numbers.yaml", unique("ts"))
    assert WHOLE.match(pipeline["created_at"])


def test_a_created_run_is_pending_without_details_until_the_agent_reports(slow_agent):
    """resource/resource_manager.go:764 (run.State = PENDING before runStore.CreateRun) and
    server/api_converter.go:1583-1589 (run_details left out while it has no context ids and no
    tasks); RUNNING comes from the persistence agent, --persistence-delay later."""
    run = _create(slow_agent, unique("pending"))
    assert run["state"] == "PENDING" and "run_details" not in run
    assert [h["state"] for h in run["state_history"]] == ["PENDING"]
    got = call(slow_agent, "GET", f"{API}/runs/{run['run_id']}")[1]
    assert got["state"] == "PENDING" and "run_details" not in got
    done = wait_run(slow_agent, run["run_id"])
    assert [h["state"] for h in done["state_history"]] == ["PENDING", "RUNNING", "SUCCEEDED"]


def test_even_with_no_delay_the_create_answer_is_pending():
    with start_kfp_server(simulate="all:fixed(0.2)", persistence_delay=0) as s:
        run = _create(s, unique("zero"))
        assert run["state"] == "PENDING" and "run_details" not in run
        assert wait_run(s, run["run_id"])["state"] == "SUCCEEDED"


def test_runs_get_the_default_service_account(server):
    """template/template.go:317-328 (setDefaultServiceAccount: pipeline-runner,
    common/const.go:59) and resource_manager.go:745 (run.ServiceAccount from the workflow)."""
    assert _create(server, unique("sa"))["service_account"] == "pipeline-runner"
    assert _create(server, unique("sa"), service_account="mine")["service_account"] == "mine"


def test_runtime_config_and_deprecated_version_id_are_left_out_when_unset(server):
    """server/api_converter.go:1575-1581 (runtime_config nil without parameters and
    pipeline_root); toApiRun never sets the deprecated pipeline_version_id."""
    run = _create(server, unique("cfg"))
    assert "runtime_config" not in run and "pipeline_version_id" not in run


def test_archiving_an_experiment_archives_its_runs_and_disables_its_recurring_runs(server):
    """storage/experiment_store.go:304-394 (ArchiveExperiment: runs ARCHIVED, jobs Enabled =
    false) and resource_manager.go:885-907 (UnarchiveRun: FailedPrecondition while the
    experiment is archived); unarchiving the experiment leaves its runs archived
    (experiment_store.go:397-400)."""
    exp_id = _experiment(server)["experiment_id"]
    run = _create(server, unique("arch"), experiment_id=exp_id)
    status, pipeline = upload(server, "hello_world.yaml", unique("arch"))
    job = {
        "display_name": unique("job"),
        "experiment_id": exp_id,
        "pipeline_version_reference": {"pipeline_id": pipeline["pipeline_id"]},
        "trigger": {"cron_schedule": {"cron": "0 0 0 1 1 *"}},
        # api_converter.go: max_concurrency 1-10 is required, and MODE_UNSPECIFIED is disabled
        "max_concurrency": "1",
        "mode": "ENABLE",
    }
    status, job = call(server, "POST", f"{API}/recurringruns", job)
    assert status == 200, job
    assert job["status"] == "ENABLED"
    assert call(server, "POST", f"{API}/experiments/{exp_id}:archive")[0] == 200
    got = call(server, "GET", f"{API}/runs/{run['run_id']}")[1]
    assert got["storage_state"] == "ARCHIVED"
    job = call(server, "GET", f"{API}/recurringruns/{job['recurring_run_id']}")[1]
    assert job["status"] == "DISABLED"
    status, err = call(server, "POST", f"{API}/runs/{run['run_id']}:unarchive")
    assert status == 400 and err["code"] == 9, err
    assert "must be un-archived first" in err["details"][0]["message"]
    assert call(server, "POST", f"{API}/experiments/{exp_id}:unarchive")[0] == 200
    got = call(server, "GET", f"{API}/runs/{run['run_id']}")[1]
    assert got["storage_state"] == "ARCHIVED"
    assert call(server, "POST", f"{API}/runs/{run['run_id']}:unarchive")[0] == 200


def test_the_default_experiment_cannot_be_deleted(server):
    """resource_manager.go:214-221 (DeleteExperiment: NewBadRequestError, code Aborted, which
    grpc-gateway answers 409)."""
    default = _create(server, unique("dflt"))["experiment_id"]
    status, err = call(server, "DELETE", f"{API}/experiments/{default}")
    assert status == 409 and err["code"] == 10, err
    assert "The default experiment cannot be deleted" in err["message"]
    assert call(server, "GET", f"{API}/experiments/{default}")[0] == 200


def test_names_over_their_column_length_are_refused(server):
    """validation/length.go:36-64 (Experiment.Name 128, Pipeline.Name 128, PipelineVersion.Name
    127) through api_converter.go:100-105, :233-237, :442-446: NewInternalServerError, so 500.
    A run's display_name is not checked, but its column is varchar(255) (model/run.go:209): on
    MySQL a longer one fails the store, 500 (KFP 2.15.0 on MariaDB 10.11 answered so)."""
    status, err = call(server, "POST", f"{API}/experiments", {"display_name": "e" * 129})
    assert status == 500 and "Experiment.Name length cannot exceed 128" in err["message"], err
    assert call(server, "POST", f"{API}/experiments", {"display_name": unique("e" * 119)})[0] == 200
    status, err = call(server, "POST", f"{API}/pipelines", {"name": "p" * 129})
    assert status == 500 and "Pipeline.Name length cannot exceed 128" in err["message"], err
    assert _create(server, "r" * 255)["display_name"] == "r" * 255
    status, err = call(
        server, "POST", f"{API}/runs", {"display_name": "r" * 256, "pipeline_spec": _spec()}
    )
    assert status == 500 and err["code"] == 13, err
    assert "Data too long for column 'DisplayName'" in err["message"], err


def test_retry_accepts_only_a_failed_or_canceled_run():
    """resource_manager.go:1062-1100 (RetryRun: no workflow manifest yet, 409 Aborted), and
    common/util/workflow.go:200-206 (GenerateRetryExecution: Failed/Error workflows only, a
    canceled run's workflow is Failed); storage/run_store.go:984-995 (the run back to PENDING,
    finished_at 0), then RUNNING again."""
    with start_kfp_server(simulate="all:fixed(0.3),fail=1", persistence_delay=0.5) as s:
        run = _create(s, unique("retry"))
        status, err = call(s, "POST", f"{API}/runs/{run['run_id']}:retry")
        assert status == 409 and err["code"] == 10, err  # not reported by the agent yet
        failed = wait_run(s, run["run_id"])
        assert failed["state"] == "FAILED"
        status, body = call(s, "POST", f"{API}/runs/{run['run_id']}:retry")
        assert status == 200 and body == {}, body
        again = wait_run(s, run["run_id"])
        states = [h["state"] for h in again["state_history"]]
        assert states == ["PENDING", "RUNNING", "FAILED"] * 2, states
        status, err = call(s, "POST", f"{API}/runs/{unique('nope')}:retry")
        assert status == 404, err
    with start_kfp_server(simulate="all:fixed(0.2)", persistence_delay=0) as s:
        run = _create(s, unique("ok"))
        assert wait_run(s, run["run_id"])["state"] == "SUCCEEDED"
        status, err = call(s, "POST", f"{API}/runs/{run['run_id']}:retry")
        assert status == 409 and "Failed/Error" in err["message"], err
