"""Scrape auth and ``kfp-bench merge``: ``--scrape-header`` reaches an endpoint that refuses a
request without its bearer token, and the token is in nothing the CLI prints or writes; the
server files beside two results merge beside the merged result.

The endpoint is a loopback server answering 401 without the token, as Istio's
RequestAuthentication and an AuthorizationPolicy in front of a predictor would (neither can run
here); behind it, the page of the real local LLM server.
"""

from __future__ import annotations

import json
import secrets
import urllib.request

import pytest

from kfp_bench.metrics import series as store
from kfp_bench.sandbox.llm_server import start_llm_server
from tests.conftest import run_cli
from tests.loopback import Handler, serving
from tests.test_token_leak import _forms

TOKEN = "scrape-" + secrets.token_hex(12)


@pytest.fixture(scope="module")
def guarded():
    """``(metrics URL behind the token, LLM URL)``."""
    with start_llm_server(first_token_ms=5, token_gap_ms=1) as llm:

        class Guard(Handler):
            def do_GET(self):
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self.send(401, {"error": "RBAC: access denied"})
                    return
                with urllib.request.urlopen(f"{llm.url}/metrics", timeout=10) as resp:
                    self.send(200, resp.read(), "text/plain; version=0.0.4")

        with serving(Guard) as url:
            yield f"{url}/metrics", llm.url


def _llm(llm_url: str, out, *extra: str):
    step = ("--metrics-step", "0.5") if "--scrape" in extra else ()  # refused without a scrape
    return run_cli(
        "llm", llm_url, "-n", "6", "-c", "2", "--max-tokens", "4", *step,
        "--json-out", str(out), *extra,
    )  # fmt: skip


def _leaks(texts) -> list[str]:
    forms = _forms(TOKEN)
    return [t[:80] for t in texts if any(f in t.encode() for f in forms)]


def test_the_header_reaches_the_endpoint_and_nothing_keeps_the_token(guarded, tmp_path):
    metrics, llm = guarded
    out = tmp_path / "run.json"
    done = _llm(llm, out, "--scrape", metrics, "--scrape-header", f"Authorization: Bearer {TOKEN}")
    assert done.returncode == 0, done.stderr
    server = store.load_beside(out)
    assert not server.flags, server.notes
    assert any(s["metric"] == "vllm:num_requests_running" for s in server.series.values())
    files = [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    assert not _leaks([done.stdout, done.stderr, *files])


def test_without_the_header_the_refusal_is_a_note(guarded, tmp_path):
    metrics, llm = guarded
    out = tmp_path / "run.json"
    done = _llm(llm, out, "--scrape", metrics)
    assert done.returncode == 0, done.stderr  # the load's figures stand
    server = store.load_beside(out)
    assert server.flags == [store.METRICS_MISSING]
    assert any("401" in n for n in server.notes), server.notes


@pytest.mark.parametrize(
    "header",
    [f"Bearer {TOKEN}", f"Authorization {TOKEN}", f"Authorization=Bearer {TOKEN}"],
    ids=["no-name", "no-colon", "equals"],  # the token is random: ids the same in each worker
)
def test_a_bad_header_is_refused_without_showing_it(guarded, tmp_path, header):
    metrics, llm = guarded
    done = _llm(llm, tmp_path / "run.json", "--scrape", metrics, "--scrape-header", header)
    assert done.returncode != 0
    assert "--scrape-header" in done.stderr and "'Name: value'" in done.stderr
    assert not _leaks([done.stdout, done.stderr])


def test_merge_merges_the_server_files_beside(guarded, tmp_path):
    metrics, llm = guarded
    header = ("--scrape-header", f"Authorization: Bearer {TOKEN}")
    a, b, merged = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "ab.json"
    for out in (a, b):
        assert _llm(llm, out, "--scrape", metrics, *header).returncode == 0
    done = run_cli("merge", str(a), str(b), "-o", str(merged))
    assert done.returncode == 0, done.stderr
    got = store.load_beside(merged)
    assert got is not None, done.stderr
    sa, sb = store.load_beside(a), store.load_beside(b)
    assert got.window == (min(sa.window[0], sb.window[0]), max(sa.window[1], sb.window[1]))
    running = [s for s in got.series.values() if s["metric"] == "vllm:num_requests_running"]
    points = sum(len(s["points"]) for s in running)
    assert points == sum(
        len(s["points"])
        for part in (sa, sb)
        for s in part.series.values()
        if s["metric"] == "vllm:num_requests_running"
    )


def test_merge_without_server_files_writes_none(guarded, tmp_path):
    _, llm = guarded
    a, merged = tmp_path / "a.json", tmp_path / "m.json"
    assert _llm(llm, a).returncode == 0
    assert run_cli("merge", str(a), str(a), "-o", str(merged)).returncode == 0
    assert store.load_beside(merged) is None


def test_the_pipeline_sends_the_pods_token_when_asked(guarded, tmp_path, monkeypatch, capfd):
    """metrics_scrape_token: the service-account token file (moved by $KFP_BENCH_SCRAPE_TOKEN,
    as a pod's kubelet would mount it) goes to the endpoint and into no output; missing, the
    load runs and the report says why the scrape was refused."""
    from kfp_bench.steps import llm_steps
    from kfp_bench.steps.params import BenchParams

    metrics, llm = guarded
    token = tmp_path / "token"
    token.write_text(TOKEN + "\n")
    monkeypatch.setenv("KFP_BENCH_SCRAPE_TOKEN", str(token))
    p = BenchParams(
        run_benchmark=False, run_load=False, run_llm=True, llm_url=llm, llm_model="kfp-bench-llm",
        llm_concurrency=2, llm_duration_sec=1.0, llm_output_tokens="fixed:4",
        metrics_scrape=metrics, metrics_scrape_token=True,
    ).check(fetch=False)  # fmt: skip
    out = tmp_path / "w0.json"
    llm_steps.llm_load(p, 0, str(out))
    server = store.ServerSeries.from_dict(json.loads(out.read_text())["server"])
    assert not server.flags, server.notes
    assert not _leaks([out.read_text(), *capfd.readouterr()])
    monkeypatch.setenv("KFP_BENCH_SCRAPE_TOKEN", str(tmp_path / "absent"))
    llm_steps.llm_load(p, 0, str(tmp_path / "w0-again.json"))
    doc = json.loads((tmp_path / "w0-again.json").read_text())
    notes = " ".join(doc["server"]["notes"])
    assert "metrics_scrape_token=True: no service-account token at" in notes
    assert "HTTP 401" in notes and doc["summary"]["completed"] > 0
