"""The prefix-cache hit rate a report shows for a ``--shared-prefix`` load, against what the
prompts and the block arithmetic predict. Real parts only: the local LLM server (vLLM's
counters, its truth log of what arrived in which order), Debian's Prometheus scraping it with
the built-in kserve-predictor profile, a direct ``--scrape`` of the same page, and the CLI in
its own processes (``kfp-bench llm``, then ``kfp-bench report``)."""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load.prompts import Dist
from kfp_bench.load.shared_prefix import SharedPrefix, shared_prefix_prompts
from kfp_bench.metrics import profile, series
from kfp_bench.metrics.series import ServerSeries, prefix_hit_rates
from kfp_bench.report.server_plots import prefix_lines
from kfp_bench.sandbox.llm_server import start_llm_server
from tests.conftest import run_cli
from tests.metrics.prometheus_server import BINARY, prometheus, wait_scraped

POD = {"namespace": "bench", "pod": "llm-predictor-00001-deployment-0"}
SPEC = "3,4,40,8"  # 3 groups of 4 users: a 40-word system prompt, an 8-word question: 3 blocks
BLOCK = 16  # the server's (vLLM's default) block size


def predicted(truth, prompts) -> tuple[int, int]:
    """(hits, queries) in the server's tokens, from the requests in the order the server took
    them: each hits the whole blocks it shares from the start with a sequence computed before
    it (an earlier prompt and its answer but the last token), at most the blocks before its
    own last token."""
    text = {hashlib.sha256(p.text.encode()).hexdigest(): p.text for p in prompts}
    seen: list[list[str]] = []
    hits = queries = 0
    for r in sorted(truth.requests.values(), key=lambda r: r["arrived"]):
        if r["outcome"] == "rejected":
            continue
        words = text[r["prompt_sha256"]].split()
        shared = max((_common(words, s) for s in seen), default=0)
        hits += min(shared // BLOCK, (len(words) - 1) // BLOCK) * BLOCK
        queries += len(words)
        seen.append(words + [f"t{i}" for i in range(r["completion_tokens"] - 1)])
    return hits, queries


def _common(a: list[str], b: list[str]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    if not shutil.which("prometheus") and not Path(BINARY).exists():
        pytest.skip("Debian prometheus not installed (scripts/system-deps.sh)")
    work = tmp_path_factory.mktemp("prefix")
    truth_log = work / "truth.jsonl"
    with start_llm_server(first_token_ms=20, token_gap_ms=10, truth_log=truth_log) as llm:
        target = urllib.parse.urlsplit(llm.url).netloc
        with prometheus(work, {target: POD}) as prom:
            wait_scraped(prom, 1)
            out = work / "run.json"
            done = run_cli(
                "llm", llm.url, "--shared-prefix", SPEC, "--output-tokens", "3",
                "-z", "5s", "--rate", "6", "-c", "2", "--no-model-check",
                "--metrics-profile", "kserve-predictor", "--prometheus-url", prom,
                "--metrics-var", "namespace=bench", "--metrics-var", "isvc=llm",
                "--scrape", f"{llm.url}/metrics", "--json-out", str(out),
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
        report = run_cli("report", str(out), "--out", str(work / "report"))
        assert report.returncode == 0, report.stderr
        server = series.load_beside(out)
        sent = json.loads(out.read_text())["counts"]["requests"]
        truth = llm.truth(count=sent)
        assert len(truth.requests) == sent, (len(truth.requests), sent)
    prompts = shared_prefix_prompts(SharedPrefix.parse(SPEC), Dist.parse("3"), 0)
    return {"server": server, "report": report.stdout, "dir": work / "report",
            "truth": predicted(truth, prompts), "live": done.stdout}  # fmt: skip


def test_the_scraped_hit_rate_is_what_the_prompts_predict(measured):
    hits, queries = measured["truth"]
    assert 0 < hits < queries  # the groups' later users hit their system prompt's blocks
    scraped = [r for r in prefix_hit_rates(measured["server"]) if r["hits"] is not None]
    assert len(scraped) == 1, scraped
    assert (scraped[0]["hits"], scraped[0]["queries"]) == (hits, queries)
    assert scraped[0]["rate"] == hits / queries


def test_prometheus_gives_the_same_rate_within_a_block(measured):
    """increase() extrapolates hits and queries over the same samples: the ratio holds, to
    within the rounding of one block of the tokens queried."""
    hits, queries = measured["truth"]
    prom = [r for r in prefix_hit_rates(measured["server"]) if r["hits"] is None]
    assert len(prom) == 1, (prom, measured["server"].notes)
    assert "vllmPrefixCacheHitRate" in prom[0]["source"]
    assert abs(prom[0]["rate"] - hits / queries) <= BLOCK / queries, (prom, hits, queries)


def test_the_reports_show_it(measured):
    hits, queries = measured["truth"]
    shown = f"{hits / queries:.2%}"
    for text in (measured["report"], measured["live"]):  # kfp-bench report, kfp-bench llm
        assert f"Prefix-cache hit rate over the load:\t{shown}" in text, text
        assert f"{hits:,} of {queries:,} prompt tokens served from cache" in text
    md = (measured["dir"] / "summary.md").read_text()
    assert f"Prefix-cache hit rate over the load: {shown}" in md
    assert "Prefix-cache hit rate over the load" in (measured["dir"] / "report.html").read_text()


def test_a_server_without_the_counters_reads_not_exposed():
    server = ServerSeries(window=(1.0, 2.0))
    server.add_points("http://x/metrics", "vllm:num_requests_running", {}, [(1.0, 0.0)])
    assert prefix_hit_rates(server) == []
    assert prefix_lines(server) == [
        "Prefix-cache hit rate: not exposed (no vllm:prefix_cache_hits/queries counters in the "
        "scrapes, no profile entry with figure: prefix_hit_rate)"
    ]


def test_the_counters_grow_from_the_first_scrape_to_the_last_by_source():
    """Each source's growth over the window, its label sets summed; vLLM before 0.9's names
    (vllm:gpu_prefix_cache_*) where the new ones are not exposed."""
    server = ServerSeries(window=(1.0, 3.0))
    new, old = "http://a/metrics", "http://b/metrics"
    for engine, base in (("0", 100.0), ("1", 0.0)):
        labels = {"engine": engine}
        server.add_points(new, "vllm:prefix_cache_hits_total", labels, [(1, base), (3, base + 30)])
        server.add_points(new, "vllm:prefix_cache_queries_total", labels, [(1, 0), (3, 50)])
    server.add_points(old, "vllm:gpu_prefix_cache_hits_total", {}, [(1, 5), (2, 5), (3, 5)])
    server.add_points(old, "vllm:gpu_prefix_cache_queries_total", {}, [(1, 7), (3, 7)])
    assert prefix_hit_rates(server) == [
        {"source": new, "rate": 0.6, "hits": 60.0, "queries": 100.0},
        {"source": old, "rate": None, "hits": 0.0, "queries": 0.0},  # no prompt in the window
    ]
    assert prefix_lines(server)[1] == (
        f"Prefix-cache hit rate over the load: no prompt tokens queried ({old})"
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"figure": "hit_rate", "instant": True}, "'figure' must be one of prefix_hit_rate"),
        ({"figure": "prefix_hit_rate"}, "add 'instant: true'"),
    ],
)
def test_a_bad_figure_entry_is_refused(entry, message):
    doc = [{"query": "sum(up)", "metricName": "x", **entry}]
    with pytest.raises(ConfigError, match=message):
        profile.parse(doc, "p.yaml")
