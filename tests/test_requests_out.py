"""``--requests-out FILE.jsonl`` of ``kfp-bench load`` and ``llm``: one line per request, valid
against its schema (kfp_bench/schemas), equal in number and outcome to the result's figures,
each LLM line paired by its X-Request-Id with the local LLM server's truth log (tokens, cached
tokens); written as the load runs, so a killed load keeps whole lines; and no code of it runs
when the flag is off. Real parts: the fault server, the local LLM server, the CLI."""

from __future__ import annotations

import json
import signal
import sys
import time

import jsonschema
import psutil
import pytest

from kfp_bench import schemas
from kfp_bench.cli import main
from kfp_bench.load import requests_out  # noqa: F401 (its module's code runs before the probe)
from kfp_bench.sandbox.llm_server import start_llm_server
from tests.conftest import start_cli

QUICK = {"first_token_ms": 5, "token_gap_ms": 1}


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schemas.schema(name), registry=schemas.registry())


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _invalid(name: str, lines: list[dict]) -> list[str]:
    v = _validator(name)
    return [f"{n}: {e.message}" for n, line in enumerate(lines) for e in v.iter_errors(line)]


def test_a_load_writes_one_valid_line_per_request_of_each_worker(fault_server, tmp_path):
    out, doc = tmp_path / "r.jsonl", tmp_path / "r.json"
    argv = ["load", "-n", "60", "-c", "2", "--workers", "2", "--json-out", str(doc)]
    url = fault_server.url + "/?status=500"  # answered, and failed: the lines say so
    assert main([*argv, "--requests-out", str(out), url]) == 0
    lines, result = _lines(out), json.loads(doc.read_text())
    assert len(lines) == result["requests"] == 60
    assert _invalid("load-request", lines) == []
    assert sorted({line["worker"] for line in lines}) == [0, 1]
    for w in (0, 1):
        seqs = sorted(line["seq"] for line in lines if line["worker"] == w)
        assert seqs == list(range(len(seqs)))
    assert {line["status"] for line in lines} == {500}
    assert not any(line["ok"] for line in lines)
    assert sum(line["bytes_in"] for line in lines) == result["bytes_in"]
    started, end = result["started_at"], result["started_at"] + result["duration_s"]
    assert all(started <= line["sent_at"] <= end for line in lines)


def test_an_llm_load_line_pairs_with_the_servers_truth(tmp_path):
    out, doc = tmp_path / "r.jsonl", tmp_path / "r.json"
    with start_llm_server(truth_log=tmp_path / "truth.jsonl", **QUICK) as llm:
        argv = ["llm", "--shared-prefix", "3,4,40,8", "--output-tokens", "3", "-n", "24"]
        argv += ["-c", "2", "--workers", "2", "--no-model-check", "--json-out", str(doc)]
        assert main([*argv, "--requests-out", str(out), llm.url]) == 0
        truth = llm.truth(count=24)
    lines, summary = _lines(out), json.loads(doc.read_text())["summary"]
    assert len(lines) == summary["requests"] == 24
    assert _invalid("llm-request", lines) == []
    assert sorted(line["request_id"] for line in lines) == sorted(truth.requests)
    for line in lines:
        told = truth.requests[line["request_id"]]
        assert line["output_tokens"] == len(told["tokens"]) == line["content_chunks"] == 3
        assert line.get("cached_tokens", 0) == told["cached_tokens"]
        assert line["itl_ms"]["n"] == 2 and 0 < line["ttft_ms"] <= line["e2e_ms"]
    cached = sum(line.get("cached_tokens", 0) for line in lines)
    assert cached == summary["cached"]["cached_tokens"] > 0
    assert sum(line["input_tokens"] for line in lines) == summary["input_tokens"]


def test_llm_lines_name_their_stage_session_turn_and_warmup(tmp_path):
    staged, turns = tmp_path / "staged.jsonl", tmp_path / "turns.jsonl"
    quick = ["--output-tokens", "fixed:3", "--no-request-id"]
    with start_llm_server(**QUICK) as llm:
        url = llm.url + "/openai"
        argv = ["llm", *quick, "--stages", "1s@10,1s@20", "--warmup", "0.5s"]
        assert main([*argv, "--requests-out", str(staged), url]) == 0
        argv = ["llm", *quick, "--endpoint", "chat", "--multi-turn", "2", "-n", "8", "-c", "2"]
        assert main([*argv, "--requests-out", str(turns), url]) == 0
    lines = _lines(staged)
    assert _invalid("llm-request", lines) == []
    assert {line["stage"] for line in lines} == {0, 1}
    assert all(line.get("warmup", False) == (line["sent_s"] < 0.5) for line in lines)
    assert any(line.get("warmup") for line in lines) and "request_id" not in lines[0]
    lines = _lines(turns)
    assert _invalid("llm-request", lines) == []  # -n counts sessions: 8 of 2 turns
    assert sorted((line["session"], line["turn"]) for line in lines) == [
        (s, t) for s in range(8) for t in (1, 2)
    ]


def test_a_killed_load_keeps_the_whole_lines_it_wrote(tmp_path):
    out = tmp_path / "r.jsonl"
    with start_llm_server(**QUICK) as llm:
        argv = ["llm", "-z", "60s", "-c", "2", "--output-tokens", "fixed:3", "--workers", "2"]
        proc = start_cli(*argv, "--requests-out", str(out), llm.url + "/openai")
        try:
            deadline = time.monotonic() + 60
            while not out.exists() or out.stat().st_size < 4000:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no lines written"
                time.sleep(0.1)
            tree = [*psutil.Process(proc.pid).children(recursive=True), psutil.Process(proc.pid)]
            for p in tree:  # a crash of the whole load: its workers and the parent at once
                p.send_signal(signal.SIGKILL)
            psutil.wait_procs(tree, timeout=30)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    text = out.read_text()
    assert text.endswith("\n")
    lines = [json.loads(line) for line in text.splitlines()]
    assert len(lines) > 10 and _invalid("llm-request", lines) == []


@pytest.mark.parametrize("on", [False, True])
def test_without_the_flag_no_code_of_the_log_runs(on, tmp_path):
    """Its cost when off is nothing: not one call into kfp_bench/load/requests_out.py (with
    the flag, the same probe sees its calls, so the probe can fail)."""
    calls = []

    def probe(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.endswith("requests_out.py"):
            calls.append(frame.f_code.co_name)

    more = ["--requests-out", str(tmp_path / "r.jsonl")] if on else []
    with start_llm_server(**QUICK) as llm:
        sys.setprofile(probe)
        try:
            code = main(["llm", "-n", "8", "-c", "2", "--output-tokens", "fixed:3", *more,
                         llm.url + "/openai"])  # fmt: skip
        finally:
            sys.setprofile(None)
    assert code == 0
    assert bool(calls) == on, sorted(set(calls))


def test_a_csv_load_writes_its_rows_and_its_lines(fault_server, tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    argv = ["load", "-n", "30", "-c", "2", "-o", "csv", "--requests-out", str(out)]
    assert main([*argv, fault_server.url + "/"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()[1:]  # after hey's header
    lines = _lines(out)
    assert len(rows) == len(lines) == 30 and _invalid("load-request", lines) == []
    assert sorted(float(r.split(",")[0]) for r in rows) == pytest.approx(
        sorted(line["latency_ms"] / 1000 for line in lines), abs=1e-4
    )
