"""The real kfp.Client 2.17 against the local KFP API server: the calls kfp-bench's driver makes."""

from __future__ import annotations

import time

import kfp_server_api
import pytest

from .support import PIPELINES, unique


def test_upload_pipeline_and_version(client):
    name = unique("hello")
    pipeline = client.upload_pipeline(str(PIPELINES / "hello_world.yaml"), pipeline_name=name)
    assert pipeline.display_name == name and pipeline.created_at is not None
    assert client.get_pipeline_id(name) == pipeline.pipeline_id
    version = client.upload_pipeline_version(
        str(PIPELINES / "hello_world.yaml"), "v2", pipeline_id=pipeline.pipeline_id
    )
    assert version.pipeline_id == pipeline.pipeline_id
    assert version.pipeline_spec["pipelineInfo"]["name"] == "echo"
    versions = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions
    assert sorted(v.display_name for v in versions) == sorted([name, "v2"])
    by_name = client.upload_pipeline_version(
        str(PIPELINES / "hello_world.yaml"), "v3", pipeline_name=name
    )
    assert by_name.pipeline_id == pipeline.pipeline_id


def test_create_experiment_is_idempotent_by_name(client):
    name = unique("exp")
    first = client.create_experiment(name, description="d")
    again = client.create_experiment(name)  # kfp.Client looks the name up first
    assert again.experiment_id == first.experiment_id
    assert client.get_experiment(experiment_name=name).experiment_id == first.experiment_id


def test_run_pipeline_get_list_delete(client):
    exp = client.create_experiment(unique("exp"))
    pipeline = client.upload_pipeline(str(PIPELINES / "hello_world.yaml"), unique("hello"))
    version_id = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions[0]
    run = client.run_pipeline(
        exp.experiment_id,
        "from-version",
        pipeline_id=pipeline.pipeline_id,
        version_id=version_id.pipeline_version_id,
    )
    assert run.state == "PENDING" or run.state == "RUNNING"
    inline = client.run_pipeline(
        exp.experiment_id,
        "from-package",
        pipeline_package_path=str(PIPELINES / "producer_consumer_param_pipeline.yaml"),
        params={"input_text": "hi"},
    )
    done = client.wait_for_run_completion(run.run_id, timeout=30)
    assert done.state == "SUCCEEDED"
    assert done.plugins_output["kfp-bench"].entries["execution"].value == "simulated"
    assert [s.state for s in done.state_history] == ["PENDING", "RUNNING", "SUCCEEDED"]
    assert done.run_details.task_details[0].display_name == "echo"
    assert done.finished_at >= done.created_at
    listed = client.list_runs(experiment_id=exp.experiment_id, page_size=10)
    assert {r.run_id for r in listed.runs} == {run.run_id, inline.run_id}
    assert listed.total_size == 2
    client.delete_run(run.run_id)
    with pytest.raises(kfp_server_api.ApiException) as info:
        client.get_run(run.run_id)
    assert info.value.status == 404
    assert client.list_runs(experiment_id=exp.experiment_id).total_size == 1


def test_terminate_run(client):
    exp = client.create_experiment(unique("exp"))
    run = client.run_pipeline(
        exp.experiment_id,
        "long",
        pipeline_package_path=str(PIPELINES / "hello_world.yaml"),
    )
    client.terminate_run(run.run_id)
    # kfp.Client's wait_for_run_completion does not count CANCELED as final: poll get_run
    deadline = time.monotonic() + 10
    while (done := client.get_run(run.run_id)).state != "CANCELED":
        assert time.monotonic() < deadline, done.state
        time.sleep(0.05)
    assert [s.state for s in done.state_history][-1] == "CANCELED"


def test_create_recurring_run_triggers_runs(client):
    exp = client.create_experiment(unique("exp"))
    pipeline = client.upload_pipeline(str(PIPELINES / "hello_world.yaml"), unique("hello"))
    version = client.list_pipeline_versions(pipeline.pipeline_id).pipeline_versions[0]
    job = client.create_recurring_run(
        exp.experiment_id,
        "every-second",
        interval_second=1,
        pipeline_id=pipeline.pipeline_id,
        version_id=version.pipeline_version_id,
        max_concurrency=5,
    )
    assert job.status == "ENABLED" and job.trigger.periodic_schedule.interval_second == "1"
    time.sleep(2.6)
    client.disable_recurring_run(job.recurring_run_id)
    runs = client.list_runs(experiment_id=exp.experiment_id, page_size=100).runs or []
    fired = [r for r in runs if r.recurring_run_id == job.recurring_run_id]
    assert 2 <= len(fired) <= 3
    assert client.get_recurring_run(job.recurring_run_id).status == "DISABLED"
    time.sleep(1.3)
    runs = client.list_runs(experiment_id=exp.experiment_id, page_size=100).runs or []
    assert len([r for r in runs if r.recurring_run_id == job.recurring_run_id]) == len(fired)
    cron_job = client.create_recurring_run(
        exp.experiment_id,
        "cron",
        cron_expression="*/1 * * * * *",
        pipeline_package_path=str(PIPELINES / "hello_world.yaml"),
    )
    time.sleep(1.6)
    client.delete_recurring_run(cron_job.recurring_run_id)
    runs = client.list_runs(experiment_id=exp.experiment_id, page_size=100).runs or []
    assert any(r.recurring_run_id == cron_job.recurring_run_id for r in runs)
