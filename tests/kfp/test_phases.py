"""The benchmark as separate phases (upload, spawn, poll) against the local KFP server: the same
records and summary as ``run_benchmark``, joined only by a handle and a directory."""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.jsonl import read
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import CleanupOptions
from kfp_bench.kfp.phases import BenchmarkHandle, poll, spawn, upload
from kfp_bench.records import ApiCall, RunRecord
from tests.kfp.conftest import leftovers
from tests.kfp.test_driver import _opts


def test_phases_give_the_summary_run_benchmark_gives(kfp_server, tmp_path):
    opts = _opts(kfp_server.url, num_runs=6, benchmark_id="phases-1")
    handle = upload(opts, out_dir=tmp_path)
    # Each phase could be another process: only the JSON and the directory go on.
    handle = BenchmarkHandle.from_json(handle.to_json())
    assert handle.benchmark_id == "phases-1" and handle.new_pipeline and handle.experiment_id
    ids = spawn(handle, opts, tmp_path)
    assert len(ids) == 6
    stats = poll(handle, opts, tmp_path)
    doc = stats.summary()

    whole = run_benchmark(_opts(kfp_server.url, num_runs=6), out_dir=tmp_path / "whole")
    assert set(doc) == set(whole.summary())
    assert set(doc["runs"]) == set(whole.summary()["runs"])
    assert doc["runs"]["by_state"] == {"SUCCEEDED": 6} and doc["runs"]["created"] == 6
    for op in ("upload_pipeline", "create_experiment"):
        assert doc["api"][op]["count"] == 1
    assert doc["api"]["create_run"]["count"] == 6 and doc["poll_rounds"] >= 1
    assert doc["cleanup"] == {"deferred": "kfp-bench cleanup --benchmark-id phases-1"}
    assert doc["wall_s"] > 0 and doc["server"]  # the scrape of upload, then of poll

    runs = read(tmp_path / "runs.jsonl", RunRecord)
    calls = read(tmp_path / "api_calls.jsonl", ApiCall)
    assert sorted(r.run_id for r in runs) == ids
    assert len(calls) == doc["api_calls_total"]
    json.dumps(doc, allow_nan=False)

    assert leftovers(kfp_server.url, "phases-1")["runs"] == 6  # cleanup is the sweep's
    sweep(CleanupOptions(kfp_server.url, benchmark_id="phases-1"))
    assert leftovers(kfp_server.url, "phases-1") == {"experiments": 0, "pipelines": 0, "runs": 0}


def test_poll_past_the_timeout_terminates(slow_kfp_server, tmp_path):
    opts = _opts(slow_kfp_server.url, num_runs=2, timeout=1.0, benchmark_id="phases-2")
    handle = upload(opts, out_dir=tmp_path)
    spawn(handle, opts, tmp_path)
    doc = poll(handle, opts, tmp_path).summary()
    assert "timeout" in doc["flags"] and doc["runs"]["gave_up"] == 2
    assert doc["api"]["terminate_run"]["count"] == 2
    sweep(CleanupOptions(slow_kfp_server.url, benchmark_id="phases-2"))


def test_a_bad_handle_is_named():
    with pytest.raises(ConfigError, match="not the JSON of a BenchmarkHandle"):
        BenchmarkHandle.from_json('{"benchmark_id": "x"}')
