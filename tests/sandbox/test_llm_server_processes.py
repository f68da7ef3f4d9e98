"""The LLM server run as several processes on one port (``--processes``), over real sockets."""

from __future__ import annotations

import psutil
import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.llm_server import LlmServerOptions, read_truth, start_llm_server

from .llm_client import send


def test_processes_share_the_port_and_the_truth_log_reads_them_all(tmp_path):
    log = tmp_path / "truth.jsonl"
    body = {"prompt": "a b", "max_tokens": 2, "stream": True}
    with start_llm_server(truth_log=log, processes=3, first_token_ms=1, token_gap_ms=1) as h:
        workers = psutil.Process(h.pid).children()
        assert len(workers) == 2
        replies = [send(h.port, "/v1/completions", body) for _ in range(30)]
    assert all(r.status == 200 and r.complete for r in replies)
    assert not any(w.is_running() and w.status() != psutil.STATUS_ZOMBIE for w in workers)
    truth = read_truth(log)
    assert len(truth.requests) == 30  # one id space over the three logs
    assert all(len(r["tokens"]) == 2 and r["outcome"] == "ok" for r in truth.requests.values())
    # the kernel spread the 30 connections (a hash of each one's ports): more than one served
    served = {rid.split("-")[0] for rid in truth.requests}
    assert len(served) > 1, served
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "truth.jsonl",
        "truth.jsonl.1",
        "truth.jsonl.2",
    ]


@pytest.mark.parametrize("bad", [0, 65, True, 1.5])
def test_a_bad_process_count_is_refused_before_anything_starts(bad):
    with pytest.raises(ConfigError, match=f"--processes {bad!r}"):
        LlmServerOptions(processes=bad)
