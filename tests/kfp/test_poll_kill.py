"""A poller killed with SIGKILL mid-run keeps every record up to the kill; a later poll reports
them. The poll phase runs in a real child process against the local KFP server, whose simulated
runs finish spread over several seconds, and is killed after some of them finished."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kfp_bench.jsonl import read
from kfp_bench.kfp.api import KfpApi
from kfp_bench.kfp.cleanup import sweep
from kfp_bench.kfp.convert import run_record
from kfp_bench.kfp.options import CleanupOptions, RunsOptions
from kfp_bench.kfp.phases import BenchmarkHandle, poll, spawn, upload
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.kfp.conftest import HELLO, leftovers

ROOT = Path(__file__).resolve().parents[2]
NUM_RUNS = 8


@pytest.fixture(scope="module")
def spread_server():
    """Runs of 0.5 to 15 s: some finish before the kill, some after."""
    with start_kfp_server(simulate="all:uniform(0.5,15)", seed=7, max_parallel_runs=16) as s:
        yield s


def _opts(url: str, bid: str, timeout: float = 120.0) -> RunsOptions:
    return RunsOptions(
        host=url,
        pipeline=str(HELLO),
        num_runs=NUM_RUNS,
        create_concurrency=NUM_RUNS,
        poll_interval=0.2,
        timeout=timeout,
        benchmark_id=bid,
    )


def poll_child(out_dir: str, url: str, bid: str) -> None:
    """The killed poller: the poll phase in its own process, as the poll_runs step runs it."""
    handle = BenchmarkHandle.from_json((Path(out_dir) / "handle.json").read_text())
    poll(handle, _opts(url, bid), out_dir)


def _count(path: Path, what: bytes = b"\n") -> int:
    try:
        return path.read_bytes().count(what)
    except FileNotFoundError:
        return 0


def _server_runs(url: str, experiment_id: str) -> dict[str, RunRecord]:
    """The server's own view of every run: the ground truth the records are checked against."""
    api = KfpApi(url)
    try:
        reply = api.list_runs(experiment_id)
        assert reply.ok, reply.call.error
        return {r["run_id"]: run_record(r) for r in reply.body.get("runs") or ()}
    finally:
        api.close()


def _kill_poller_after(out: Path, url: str, bid: str, finished: int) -> subprocess.Popen:
    code = "import sys; from tests.kfp.test_poll_kill import poll_child; poll_child(*sys.argv[1:])"
    child = subprocess.Popen([sys.executable, "-c", code, str(out), url, bid], cwd=ROOT)
    calls, lists = out / "api_calls.jsonl", b'"list_runs"'
    try:
        deadline = time.monotonic() + 90
        while _count(out / "runs.jsonl") < finished:
            assert child.poll() is None, "the poller ended before it was killed"
            assert time.monotonic() < deadline, f"the poller recorded {finished} runs in 90 s"
            time.sleep(0.05)
        # Two more poll rounds, so that the kill falls after rounds that saw those runs finish.
        rounds = _count(calls, lists) + 2
        while _count(calls, lists) < rounds and child.poll() is None:
            time.sleep(0.05)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    return child


def test_a_killed_poller_keeps_every_run_it_saw_finish(spread_server, tmp_path):
    url, bid = spread_server.url, "poll-kill-1"
    opts = _opts(url, bid)
    handle = upload(opts, out_dir=tmp_path)
    created = spawn(handle, opts, tmp_path)
    assert len(created) == NUM_RUNS

    _kill_poller_after(tmp_path, url, bid, finished=2)
    runs = read(tmp_path / "runs.jsonl", RunRecord)
    calls = read(tmp_path / "api_calls.jsonl", ApiCall)
    truth = _server_runs(url, handle.experiment_id)
    assert 2 <= len(runs) < NUM_RUNS, "the kill was meant to come mid-run"
    assert runs.torn == 0 and calls.torn == 0  # a whole line is one write: a kill cuts none

    # Every record is a run of this benchmark, once, as the server finished it.
    assert len({r.run_id for r in runs}) == len(runs)
    for r in runs:
        assert r.run_id in created
        assert (r.state, r.finished_at) == (truth[r.run_id].state, truth[r.run_id].finished_at)
    # Nothing the poller saw finish is lost: a LIST that a later call followed was fully taken in,
    # so each run the server had finished when that LIST started has its record.
    lists = sorted(c.start for c in calls if c.operation == "list_runs")
    assert len(lists) >= 2
    seen_final = {
        rid for rid, t in truth.items() if t.finished_at is not None and t.finished_at < lists[-2]
    }
    assert len(seen_final) >= 2 and seen_final <= {r.run_id for r in runs}

    # A later poll (the step run again) starts from those records: none lost, none twice, the
    # killed poller's calls counted, the rest of the runs polled to the end.
    stats = poll(handle, opts, tmp_path)
    doc = stats.summary()
    after = read(tmp_path / "runs.jsonl", RunRecord)
    assert after[: len(runs)] == runs
    assert sorted(r.run_id for r in after) == sorted(created)
    assert doc["runs"]["created"] == NUM_RUNS
    assert sum(doc["runs"]["by_state"].values()) == NUM_RUNS
    assert doc["api_calls_total"] == len(read(tmp_path / "api_calls.jsonl", ApiCall))
    assert doc["api_calls_total"] > len(calls)

    sweep(CleanupOptions(url, benchmark_id=bid))
    assert leftovers(url, bid) == {"experiments": 0, "pipelines": 0, "runs": 0}


def test_a_record_torn_by_a_kill_is_counted_and_the_next_poll_goes_on(spread_server, tmp_path):
    """A write cut short (a kill mid-write of a long line, a full disk) leaves half a record at
    the end: the readers count it and leave it out, and the restarted poller appends whole lines
    after cutting it off. (One write of a whole line is one syscall, so a SIGKILL alone seldom
    tears one: the half line is written here as such a kill leaves it.)"""
    url, bid = spread_server.url, "poll-kill-2"
    opts = _opts(url, bid)
    handle = upload(opts, out_dir=tmp_path)
    created = spawn(handle, opts, tmp_path)
    _kill_poller_after(tmp_path, url, bid, finished=1)
    kept = read(tmp_path / "runs.jsonl", RunRecord)
    line = (tmp_path / "runs.jsonl").read_text().splitlines()[0]
    with open(tmp_path / "runs.jsonl", "a") as f:
        f.write(line[: len(line) // 2])
    torn = read(tmp_path / "runs.jsonl", RunRecord)
    assert torn == kept and torn.torn == 1

    doc = poll(handle, _opts(url, bid, timeout=1.0), tmp_path).summary()  # gives up on the rest
    after = read(tmp_path / "runs.jsonl", RunRecord)
    assert after.torn == 0 and after[: len(kept)] == kept
    assert sorted(r.run_id for r in after) == sorted(created)
    assert "timeout" in doc["flags"] and sum(doc["runs"]["by_state"].values()) == NUM_RUNS
    sweep(CleanupOptions(url, benchmark_id=bid))


def test_a_later_poll_says_the_killed_poller_did_not_finish(spread_server, tmp_path):
    url, bid = spread_server.url, "poll-kill-3"
    opts = _opts(url, bid)
    handle = upload(opts, out_dir=tmp_path)
    spawn(handle, opts, tmp_path)
    _kill_poller_after(tmp_path, url, bid, finished=1)
    try:
        doc = poll(handle, _opts(url, bid, timeout=1.0), tmp_path).summary()
    finally:
        sweep(CleanupOptions(url, benchmark_id=bid))
    assert "poller-killed" in doc["flags"]
