"""The timeout against a server that refuses to terminate a finished run, as KFP does (issue 25).

KFP answers 400 to terminating a run that is no longer PAUSED, PENDING or RUNNING (kubeflow/
pipelines 7b70c7b95f storage/run_store.go:1387-1410), and so does the local KFP API. A run that
finishes between the driver's last poll and its terminate is no failed call: the driver records
its real final state and says it had finished first. Real local server in a subprocess, real
HTTP; the race itself (a run ending in that window) is made certain by ending the run from the
test just before the driver's own terminate of it, the one thing no server setting can time.
"""

from __future__ import annotations

import io
import json
import threading

from kfp_bench.jsonl import read
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.driver import run_benchmark
from kfp_bench.kfp.options import RunsOptions
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.report import runs as runs_report
from tests.conftest import run_cli
from tests.kfp.conftest import HELLO, leftovers
from tests.sandbox.kfp_server.support import API, call, wait_run


def test_a_run_that_finished_before_its_terminate_is_no_failed_call(
    slow_kfp_server, tmp_path, monkeypatch
):
    ended, lock = [], threading.Lock()
    terminate = KfpApi.terminate_run

    def racing(api: KfpApi, run_id: str):
        with lock:
            first = not ended
            if first:
                ended.append(run_id)
        if first:  # the run ends (here: someone else stops it) after the last poll
            assert call(slow_kfp_server, "POST", f"{API}/runs/{run_id}:terminate")[0] == 200
            wait_run(slow_kfp_server, run_id, states={"CANCELED"})
        return terminate(api, run_id)

    monkeypatch.setattr(KfpApi, "terminate_run", racing)
    opts = RunsOptions(
        host=slow_kfp_server.url, pipeline=str(HELLO), num_runs=3, poll_interval=0.2, timeout=1.0
    )
    stats = run_benchmark(opts, out_dir=tmp_path)
    doc = stats.summary()

    # the driver's terminate of the finished run was answered 400, and that is not a failure
    records = read(tmp_path / "api_calls.jsonl", ApiCall)
    calls = [c for c in records if c.operation == "terminate_run"]
    assert sorted(c.status for c in calls) == [200, 200, 400]
    assert all(c.outcome == "ok" and c.attempt == 1 for c in calls)  # not retried either
    api = doc["api"]["terminate_run"]
    assert (api["count"], api["errors"], api["failed"], api["retries"]) == (3, 0, 0, 0)
    assert doc["api_failed_total"] == 0

    # each run's fate at the timeout, in the records and in the summary
    runs = {r.run_id: r for r in read(tmp_path / "runs.jsonl", RunRecord)}
    first = runs[ended[0]]
    assert (first.state, first.at_timeout, first.error) == ("CANCELED", "finished-first", "")
    others = [r for rid, r in runs.items() if rid != ended[0]]
    assert [r.at_timeout for r in others] == ["terminated", "terminated"]
    assert all(r.error.startswith("gave up after the 1s timeout (terminated)") for r in others)
    fates = doc["runs"]["at_timeout"]
    assert fates["finished-first"]["run_ids"] == [first.run_id]
    assert fates["terminated"]["count"] == 2 and doc["runs"]["gave_up"] == 2

    # what `kfp-bench runs` prints of it
    out = io.StringIO()
    runs_report.write_text(doc, out)
    text = out.getvalue()
    assert "At the timeout (runs unfinished at the last poll):" in text
    assert "had finished before its terminate (refused by the server):\t1 (CANCELED 1): " in text
    assert first.run_id in text and "terminated:\t2" in text
    assert leftovers(slow_kfp_server.url, stats.benchmark_id)["experiments"] == 0


def test_kfp_bench_runs_reports_what_the_timeout_terminated(slow_kfp_server, tmp_path):
    """``kfp-bench runs`` in a real process: every run outlasts the timeout and is terminated,
    each terminate a single call that did not fail."""
    out = tmp_path / "out"
    r = run_cli(
        "runs", "--host", slow_kfp_server.url, "--pipeline", str(HELLO), "--num-runs", "3",
        "--poll-interval", "0.2", "--timeout", "1", "--out", str(out),
    )  # fmt: skip
    assert "At the timeout (runs unfinished at the last poll):" in r.stdout, r.stdout + r.stderr
    assert "  terminated:\t3 (" in r.stdout
    assert "had finished before its terminate" not in r.stdout
    doc = json.loads((out / "summary.json").read_text())
    assert doc["runs"]["at_timeout"]["terminated"]["count"] == 3
    assert doc["api"]["terminate_run"]["failed"] == 0
