"""``kfp-bench llm`` reading the usage's ``prompt_tokens_details.cached_tokens``: the client's
prefix-cache hit rate against the server's own count. Real parts: the local LLM server (its
prefix cache, its vLLM counters on /metrics and the cached tokens of each request in its truth
log) and the CLI in its own process; ``kfp-bench report`` rebuilds the same figures."""

from __future__ import annotations

import json
import urllib.request
from collections import defaultdict

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kfp_bench.sandbox.llm_server import start_llm_server
from tests.conftest import run_cli

QUICK = {"first_token_ms": 5, "token_gap_ms": 1}


def _counters(url: str) -> tuple[float, float]:
    """The server's (prefix_cache_hits, prefix_cache_queries) counters, in tokens."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as resp:
        text = resp.read().decode()
    got = {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}
    return got["vllm:prefix_cache_hits_total"], got["vllm:prefix_cache_queries_total"]


def _shared_prefix(url: str, out, *more: str):
    return run_cli(
        "llm", url, "--shared-prefix", "3,4,40,8", "--output-tokens", "3", "-n", "24",
        "-c", "2", "--no-model-check", "--json-out", str(out), *more,
    )  # fmt: skip


def test_the_client_counts_the_cached_tokens_the_server_counted(tmp_path):
    out = tmp_path / "run.json"
    with start_llm_server(truth_log=tmp_path / "truth.jsonl", **QUICK) as llm:
        done = _shared_prefix(llm.url, out, "--scrape", f"{llm.url}/metrics")
        assert done.returncode == 0, done.stderr
        hits, queries = _counters(llm.url)
        truth = llm.truth(count=24)
    logged = [r["cached_tokens"] for r in truth.requests.values()]
    assert len(logged) == 24 and sum(logged) == hits > 0
    assert 0 in logged  # a group's first request hits nothing: its usage says nothing (vLLM)
    cached = json.loads(out.read_text())["summary"]["cached"]
    assert cached["cached_tokens"] == hits and cached["prompt_tokens"] == queries
    assert cached["hit_rate"] == hits / queries
    assert cached["reported"] == sum(1 for n in logged if n) < cached["requests"] == 24
    shown = f"{hits / queries:.2%}"
    assert f"Cached input tokens:\t{int(hits)} of {int(queries)} ({shown})" in done.stdout
    report = run_cli("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    for text in (done.stdout, report.stdout):  # the server's rate, and the client's beside it
        server = text.index(f"Prefix-cache hit rate over the load:\t{shown}")
        client = text.index(f"Prefix-cache hit rate from the usage:\t{shown}")
        assert 0 < client - server < 200, text
    md = (tmp_path / "report" / "summary.md").read_text()
    assert f"| cached input tokens | {int(hits):,} of {int(queries):,} ({shown}) |" in md
    html = (tmp_path / "report" / "report.html").read_text()
    assert f"Prefix-cache hit rate from the usage: {shown}" in html


def test_per_turn_and_per_session_as_the_server_counted_them(tmp_path):
    """Turn k carries the earlier turns' prompts and answers: their full blocks hit."""
    out = tmp_path / "run.json"
    with start_llm_server(truth_log=tmp_path / "truth.jsonl", **QUICK) as llm:
        done = run_cli(
            "llm", llm.url, "--endpoint", "chat", "--multi-turn", "3", "-n", "4", "-c", "2",
            "--input-tokens", "fixed:40", "--max-tokens", "4", "--no-model-check",
            "--json-out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        truth = llm.truth(count=12)  # 4 sessions of 3 turns
    by_turn, by_session = defaultdict(lambda: [0, 0]), defaultdict(lambda: [0, 0])
    for r in truth.requests.values():
        for key, into in (((len(r["messages"]) + 1) // 2, by_turn),
                          (r["messages"][0]["sha256"], by_session)):  # fmt: skip
            into[key][0] += r["cached_tokens"]
            into[key][1] += r["prompt_tokens"]
    assert len(by_session) == 4 and by_turn[1][0] == 0 < by_turn[2][0] < by_turn[3][0]
    summary = json.loads(out.read_text())["summary"]
    rates = [row["cached_hit_rate"] for row in summary["turns"]]
    assert rates == [by_turn[k][0] / by_turn[k][1] for k in (1, 2, 3)]
    sessions = sorted(c / p for c, p in by_session.values())
    got = summary["cached"]["sessions"]
    assert got["count"] == 4 and (got["min"], got["max"]) == (sessions[0], sessions[-1])
    assert got["mean"] == pytest.approx(sum(sessions) / 4, abs=1e-12)
    assert f"\t{rates[2]:.2%}\t" in done.stdout  # the per-turn table's cached column
    assert "Cached per session:\t4 sessions: min " in done.stdout


def test_a_server_that_sends_no_details_reads_unknown_not_0(tmp_path):
    out = tmp_path / "run.json"
    with start_llm_server(enable_prompt_tokens_details=False, **QUICK) as llm:
        done = _shared_prefix(llm.url, out, "--scrape", f"{llm.url}/metrics")
        assert done.returncode == 0, done.stderr
        hits, _ = _counters(llm.url)
    assert hits > 0  # its cache hit; its usage did not say so
    cached = json.loads(out.read_text())["summary"]["cached"]
    assert cached["cached_tokens"] is None and cached["hit_rate"] is None
    assert "Cached input tokens:\tunknown (no usage.prompt_tokens_details)" in done.stdout
    assert "Prefix-cache hit rate from the usage:\tunknown" in done.stdout
