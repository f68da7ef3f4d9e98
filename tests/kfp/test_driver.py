"""The driver end to end against the local KFP server (a subprocess), checked with kfp.Client."""

from __future__ import annotations

import json

from kfp_bench.jsonl import read
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import RunsOptions
from kfp_bench.records import ApiCall, RunRecord
from tests.kfp.conftest import HELLO, leftovers


def _opts(url, **kw) -> RunsOptions:
    base = dict(
        host=url,
        pipeline=str(HELLO),
        num_runs=12,
        create_concurrency=4,
        poll_interval=0.2,
        timeout=60,
    )
    base.update(kw)
    return RunsOptions(**base)


def test_spawn_poll_record_and_clean_up(kfp_server, tmp_path):
    stats = run_benchmark(_opts(kfp_server.url), out_dir=tmp_path)
    doc = stats.summary()
    assert doc["runs"]["requested"] == 12 and doc["runs"]["created"] == 12
    assert doc["runs"]["by_state"] == {"SUCCEEDED": 12}
    assert doc["runs"]["simulated"] == 12
    # Durations come from the server's timestamps: the 0.2 s simulation, not the poll interval.
    # The server's timestamps are whole seconds (kubeflow/pipelines 7b70c7b95f
    # server/api_converter.go:1599-1603): a 0.2 s run measures 0 or 1 s.
    p50 = doc["runs"]["execution_s"]["p50"]
    assert min(abs(p50), abs(p50 - 1.0)) < 0.01, p50  # HDR buckets round a little
    assert doc["runs"]["queue_delay_s"]["count"] == 12
    for op in ("upload_pipeline", "create_experiment", "delete_pipeline"):
        assert doc["api"][op]["count"] == 1 and doc["api"][op]["errors"] == 0
    assert doc["api"]["create_run"]["count"] == 12
    assert doc["api"]["delete_run"]["count"] == 12
    assert doc["poll_rounds"] >= 1 and doc["calls_per_poll_round"]["max"] <= 2

    runs = read(tmp_path / "runs.jsonl", RunRecord)
    calls = read(tmp_path / "api_calls.jsonl", ApiCall)
    assert len(runs) == 12 and len(calls) == doc["api_calls_total"]
    assert all(r.name.startswith(f"kfp-bench-{stats.benchmark_id}-") for r in runs)
    assert all(r.duration and r.finished_at >= r.created_at for r in runs)
    json.dumps(doc, allow_nan=False)
    assert leftovers(kfp_server.url, stats.benchmark_id) == {
        "experiments": 0,
        "pipelines": 0,
        "runs": 0,
    }


def test_keep_leaves_everything(kfp_server, tmp_path):
    stats = run_benchmark(_opts(kfp_server.url, num_runs=3, keep=True, get_sample=0))
    assert stats.summary()["cleanup"] == {"kept": True}
    assert leftovers(kfp_server.url, stats.benchmark_id) == {
        "experiments": 1,
        "pipelines": 1,
        "runs": 3,
    }
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    report = sweep(CleanupOptions(kfp_server.url, benchmark_id=stats.benchmark_id))
    assert report["deleted"] == {
        "recurring_runs": 0,
        "runs": 3,
        "experiments": 1,
        "pipeline_versions": 1,
        "pipelines": 1,
    }
    assert leftovers(kfp_server.url, stats.benchmark_id)["experiments"] == 0


def test_timeout_terminates_what_is_unfinished(slow_kfp_server, tmp_path):
    stats = run_benchmark(_opts(slow_kfp_server.url, num_runs=3, timeout=1.0), out_dir=tmp_path)
    doc = stats.summary()
    assert "timeout" in doc["flags"] and doc["runs"]["gave_up"] == 3
    assert doc["api"]["terminate_run"]["count"] == 3
    assert leftovers(slow_kfp_server.url, stats.benchmark_id)["experiments"] == 0


def test_timeout_can_leave_runs_running(slow_kfp_server):
    stats = run_benchmark(
        _opts(slow_kfp_server.url, num_runs=2, timeout=0.5, on_timeout="leave", get_sample=0)
    )
    doc = stats.summary()
    assert doc["api"].get("terminate_run", {"count": 0})["count"] == 0
    assert doc["cleanup"]["left"]
    left = leftovers(slow_kfp_server.url, stats.benchmark_id)
    assert left == {"experiments": 1, "pipelines": 1, "runs": 2}
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    sweep(CleanupOptions(slow_kfp_server.url, benchmark_id=stats.benchmark_id))
    assert leftovers(slow_kfp_server.url, stats.benchmark_id)["runs"] == 0
