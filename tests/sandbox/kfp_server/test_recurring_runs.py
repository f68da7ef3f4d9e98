"""The local KFP API's recurring runs, over raw HTTP against a real local server, against what
KFP's API server and ScheduledWorkflow controller do (kubeflow/pipelines 7b70c7b95f; the rules
are in ``kfp_bench/sandbox/kfp_server/cron.py``). Backfills use daily and hourly triggers whose
fire times are fixed by the clock, not by how fast this machine is; waits are generous.
"""

from __future__ import annotations

import time

import pytest
import yaml

from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.sandbox.kfp_server.timefmt import parse_rfc3339, rfc3339

from .support import API, PIPELINES, call, unique, upload

DAY, HOUR = 86400, 3600
SPEC = yaml.safe_load((PIPELINES / "hello_world.yaml").read_text())  # simulated: a container


@pytest.fixture(scope="module")
def slow():
    """A server whose runs take 4 s, so that max_concurrency has runs to hold back."""
    with start_kfp_server(simulate="all:fixed(4)", max_parallel_runs=8, seed=3) as s:
        yield s


def _create(server, trigger: dict | None, **fields) -> dict:
    body = {"display_name": unique("rr"), "pipeline_spec": SPEC, "max_concurrency": "10",
            "mode": "ENABLE", **fields}  # fmt: skip
    if trigger is not None:
        body["trigger"] = trigger
    status, job = call(server, "POST", f"{API}/recurringruns", body)
    assert status == 200, job
    return job


def _runs(server, job: dict) -> list[dict]:
    status, page = call(server, "GET", f"{API}/runs", query={"page_size": 200})
    assert status == 200
    rid = job["recurring_run_id"]
    return [r for r in page.get("runs", []) if r.get("recurring_run_id") == rid]


def _wait_runs(server, job: dict, count: int, timeout: float = 60.0) -> list[dict]:
    end = time.monotonic() + timeout
    while len(runs := _runs(server, job)) < count:
        assert time.monotonic() < end, f"{len(runs)} runs of {count} after {timeout}s"
        time.sleep(0.3)
    return runs


def _settled(server, job: dict, count: int) -> list[dict]:
    """The runs once ``count`` are there and a few more ticks made no more."""
    _wait_runs(server, job, count)
    time.sleep(1.5)
    call(server, "POST", f"{API}/recurringruns/{job['recurring_run_id']}:disable")
    return _runs(server, job)


def _scheduled(runs: list[dict]) -> list[int]:
    return sorted(int(parse_rfc3339(r["scheduled_at"])) for r in runs)


def _midnights_after(start: int, now: int) -> list[int]:
    first = start - start % DAY + DAY
    return list(range(first, now + 1, DAY))


def test_a_past_start_time_is_backfilled_one_run_per_missed_fire(server):
    """cron_schedule.go GetNextScheduledTime: catch-up runs each missed time in turn."""
    start = int(time.time()) - 3 * DAY - 100
    job = _create(server, {"cron_schedule": {"cron": "@daily", "start_time": rfc3339(start)}})
    expected = _midnights_after(start, int(time.time()))
    runs = _settled(server, job, len(expected))
    assert _scheduled(runs) == expected and len(expected) in (3, 4)


def test_no_catchup_runs_only_the_latest_missed_fire(server):
    """cron_schedule.go GetNextScheduledTimeNoCatchup: the latest due time, once."""
    start = int(time.time()) - 3 * DAY - 100
    job = _create(server, {"cron_schedule": {"cron": "0 0 0 * * *", "start_time": rfc3339(start)}},
                  no_catchup=True)  # fmt: skip
    runs = _settled(server, job, 1)
    assert _scheduled(runs) == _midnights_after(start, int(time.time()))[-1:]


def test_a_periodic_trigger_backfills_from_start_plus_interval(server):
    """periodic_schedule.go: the first run is start_time + interval; without catch-up a late
    recurring run runs once, now."""
    start = int(time.time()) - 3 * HOUR - 1800
    trigger = {"periodic_schedule": {"interval_second": str(HOUR), "start_time": rfc3339(start)}}
    runs = _settled(server, _create(server, trigger), 3)
    assert _scheduled(runs) == [start + HOUR, start + 2 * HOUR, start + 3 * HOUR]
    before = int(time.time())
    late = _settled(server, _create(server, trigger, no_catchup=True), 1)
    assert len(late) == 1 and before <= _scheduled(late)[0] <= int(time.time())


def test_enabling_catches_up_on_what_was_missed(server):
    """A recurring run created disabled, then enabled: ChangeJobMode only flips spec.enabled,
    so the controller catches up from the start time."""
    start = int(time.time()) - 2 * DAY - 100
    job = _create(server, {"cron_schedule": {"cron": "@midnight", "start_time": rfc3339(start)}},
                  mode="DISABLE")  # fmt: skip
    time.sleep(1.0)
    assert _runs(server, job) == []
    status, _ = call(server, "POST", f"{API}/recurringruns/{job['recurring_run_id']}:enable")
    assert status == 200
    expected = _midnights_after(start, int(time.time()))
    assert _scheduled(_settled(server, job, len(expected))) == expected


def test_without_mode_a_recurring_run_is_disabled(server):
    """api_converter.go toModelJobEnabled: MODE_UNSPECIFIED is not enabled."""
    body = {"display_name": unique("rr"), "pipeline_spec": SPEC, "max_concurrency": "1",
            "trigger": {"cron_schedule": {"cron": "@every 1s"}}}  # fmt: skip
    status, job = call(server, "POST", f"{API}/recurringruns", body)
    assert status == 200 and job["mode"] == "DISABLE" and job["status"] == "DISABLED"
    time.sleep(1.5)
    assert _runs(server, job) == []


def test_without_a_trigger_a_recurring_run_is_one_run_at_creation(server):
    """toModelTrigger takes no trigger; scheduled_workflow.go isOneOffRun: one run, at once."""
    job = _create(server, None)
    assert job["trigger"] == {}
    runs = _settled(server, job, 1)
    assert len(runs) == 1


def test_a_pipeline_id_alone_takes_the_latest_version_at_each_run(server):
    """resource_manager.go CreateJob: no version pinned, 'always let the ScheduledWorkflow
    controller pick the latest'; the controller's CreateRun resolves it at each run."""
    status, pipeline = upload(server, "hello_world.yaml", unique("latest"))
    assert status == 200, pipeline
    pid = pipeline["pipeline_id"]
    body = {"display_name": unique("rr"), "pipeline_version_reference": {"pipeline_id": pid},
            "max_concurrency": "1", "mode": "ENABLE", "no_catchup": True,
            "trigger": {"cron_schedule": {"cron": "@every 1s"}}}  # fmt: skip
    status, job = call(server, "POST", f"{API}/recurringruns", body)
    assert status == 200, job
    assert job["pipeline_version_reference"] == {"pipeline_id": pid}
    assert "pipeline_version_id" not in job
    first = _wait_runs(server, job, 1)[0]["pipeline_version_reference"]["pipeline_version_id"]
    status, v2 = upload(server, "hello_world.yaml", "v2", path="/pipelines/upload_version",
                        query={"pipelineid": pid})  # fmt: skip
    assert status == 200, v2
    end = time.monotonic() + 60
    while not any(
        r["pipeline_version_reference"]["pipeline_version_id"] == v2["pipeline_version_id"]
        for r in _runs(server, job)
    ):
        assert time.monotonic() < end, "no run took the new version"
        time.sleep(0.3)
    call(server, "POST", f"{API}/recurringruns/{job['recurring_run_id']}:disable")
    assert first != v2["pipeline_version_id"]


def test_max_concurrency_holds_runs_back_until_one_finishes(slow):
    """scheduled_workflow.go GetNextScheduledEpoch: no run while max_concurrency are active;
    the backlog of a past start time runs as they finish."""
    start = int(time.time()) - 20 * DAY
    job = _create(slow, {"cron_schedule": {"cron": "@daily", "start_time": rfc3339(start)}},
                  max_concurrency="2")  # fmt: skip
    end = time.monotonic() + 90
    seen = 0
    while seen <= 2:
        runs = _runs(slow, job)
        assert sum(r["state"] not in ("SUCCEEDED", "FAILED") for r in runs) <= 2, runs
        seen = len(runs)
        assert time.monotonic() < end, f"{seen} runs after 90 s"
        time.sleep(0.2)
    call(slow, "POST", f"{API}/recurringruns/{job['recurring_run_id']}:disable")


@pytest.mark.parametrize(
    ("trigger", "fields", "message"),
    [
        ({"cron_schedule": {"cron": "0 0 3 * * * *"}}, {}, "Expected 5 to 6 fields, found 7"),
        ({"cron_schedule": {"cron": "0 0 0 L * *"}}, {}, "Failed to parse int from L"),
        ({"cron_schedule": {"cron": "@fortnightly"}}, {}, "Unrecognized descriptor"),
        ({"periodic_schedule": {"interval_second": "0"}}, {}, "invalid period schedule"),
        ({"cron_schedule": {"cron": "@daily"}}, {"max_concurrency": "11"},
         "Max concurrency of a recurring run must be at least 1 and at most 10. Received 11"),
        ({"cron_schedule": {"cron": "@daily"}}, {"max_concurrency": None}, "Received 0"),
    ],
)  # fmt: skip
def test_what_the_api_server_refuses(server, trigger, fields, message):
    body = {"display_name": unique("rr"), "pipeline_spec": SPEC, "max_concurrency": "1",
            "trigger": trigger, **fields}  # fmt: skip
    status, answer = call(server, "POST", f"{API}/recurringruns", body)
    assert status == 400 and message in answer["message"], answer


def test_what_robfig_v1_takes_the_server_takes(server):
    """5 fields (seconds first), descriptors, @every with a Go duration, names, '?'."""
    for cron in ("0 3 * * *", "@weekly", "@every 1h30m", "0 0 9 ? * MON-FRI"):
        job = _create(server, {"cron_schedule": {"cron": cron}}, mode="DISABLE")
        assert job["trigger"] == {"cron_schedule": {"cron": cron}}
