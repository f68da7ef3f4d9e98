"""The acceptance test of the server metrics: ``kfp-bench llm`` with the built-in
kserve-predictor profile against a real Prometheus scraping the local LLM server (which exports
vLLM's metrics), and a direct scrape of the same server; then ``kfp-bench report`` draws the
server's series under the client's on one time axis. Real parts only: Debian's prometheus, the
local LLM server, the CLI in its own process."""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path

import pytest

from kfp_bench.metrics import series as store
from kfp_bench.metrics.series import percentiles
from kfp_bench.sandbox.llm_server import start_llm_server
from tests.conftest import run_cli
from tests.metrics.prometheus_server import BINARY, prometheus, query, wait_scraped

pytestmark = pytest.mark.skipif(
    not shutil.which("prometheus") and not Path(BINARY).exists(),
    reason="Debian prometheus not installed (scripts/system-deps.sh)",
)
#: The labels a Kubernetes scrape config would give the predictor pod's series.
POD = {"namespace": "bench", "pod": "llm-predictor-00001-deployment-0"}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    work = tmp_path_factory.mktemp("llm-prom")
    with start_llm_server(first_token_ms=40, token_gap_ms=10) as llm:
        target = urllib.parse.urlsplit(llm.url).netloc
        with prometheus(work, {target: POD}) as prom:
            wait_scraped(prom, 1)
            out = work / "run.json"
            done = run_cli(
                "llm", llm.url, "-z", "6s", "-c", "4", "--max-tokens", "8",
                "--metrics-profile", "kserve-predictor", "--prometheus-url", prom,
                "--metrics-var", "namespace=bench", "--metrics-var", "isvc=llm",
                "--scrape", f"{llm.url}/metrics", "--json-out", str(out),
            )  # fmt: skip
            assert done.returncode == 0, done.stderr
            # What Prometheus itself computes over the same window, for the percentile check.
            server = store.load_beside(out)
            elapsed = int(server.window[1] - server.window[0]) + 1
            asked = (
                "histogram_quantile(0.5, sum by (le) (increase("
                f'vllm:time_to_first_token_seconds_bucket{{namespace="bench"}}[{elapsed}s])))'
            )
            # At the load's end and one scrape after it, not now: what the command does after
            # the load (the profile's queries, saving) took over the window's length on a busy
            # machine, and a window past the load holds no increase (NaN).
            prom_p50 = float(query(prom, asked, at=server.window[1] + 1)[0]["value"][1])
    report = run_cli("report", str(out), "--out", str(work / "report"))
    assert report.returncode == 0, report.stderr
    return {
        "stats": json.loads(out.read_text()),
        "server": server,
        "stderr": done.stderr,
        "report": work / "report",
        "prom_p50": prom_p50,
    }


def test_series_cover_the_load_window(measured):
    stats, server = measured["stats"], measured["server"]
    start, end = stats["started_at"], stats["started_at"] + stats["duration_s"]
    assert not server.flags, server.notes
    # What the local server does not export (no Knative in front, not a predict model) is
    # said, not flagged.
    absent = {n.split(":")[0] for n in server.notes}
    assert all("no series over the window" in n for n in server.notes), server.notes
    assert absent == {
        "kservePredict", "queueProxyDepth", "activatorConcurrency", "replicas",
        "replicasDesired",
    }  # fmt: skip
    running = [s for s in server.series.values() if s["metric"] == "vllmRequestsRunning"]
    assert len(running) == 1, sorted(s["metric"] for s in server.series.values())
    times = sorted(running[0]["points"])
    step = server.step_s
    assert times[0] <= start + step and times[-1] >= end - step, (times[0], times[-1], start, end)
    # The engine's queue was busy while the client was: 4 streams at a time.
    assert max(running[0]["points"].values()) >= 1
    assert running[0]["panel"] == "ttft"
    # ... and the client's TTFT series they are drawn under: a mean per wall-clock second over
    # the first tokens that came in it, from the load's first seconds to its last, every request
    # that got one counted once, none sooner than the server's first-token delay (40 ms).
    ttft = [r for r in stats["series"] if r["firsts"]]
    assert ttft[0]["t"] <= start + 2 and ttft[-1]["t"] >= end - 2, (ttft[0], ttft[-1], start, end)
    assert sum(r["firsts"] for r in ttft) >= stats["counts"]["completed"] > 0
    assert all(r["ttft_mean_ms"] >= 40 for r in ttft), ttft


def test_scraped_ttft_histogram_counts_every_request(measured):
    stats, server = measured["stats"], measured["server"]
    scraped = [h for h in server.histograms.values() if h["metric"].startswith("vllm:time_to_")]
    assert len(scraped) == 1
    count = percentiles(scraped[0]["buckets"])["count"]
    client = stats["hists"]["ttft"] if "hists" in stats else None
    completed = stats["counts"]["completed"]
    assert count == completed, (count, completed, client is not None)


def test_server_percentiles_as_prometheus_computes_them(measured):
    """The profile's TTFT buckets give the p50 Prometheus's own histogram_quantile gives over
    the same window (within the increase() extrapolation's error: the same bucket)."""
    server = measured["server"]
    prof = [h for h in server.histograms.values() if h["metric"] == "vllmTTFT"]
    assert len(prof) == 1
    p50 = percentiles(prof[0]["buckets"])[0.5]
    assert p50["lower"] <= measured["prom_p50"] <= p50["upper"], (p50, measured["prom_p50"])
    # The server's first token leaves 40 ms after the request arrived: that bucket.
    assert (p50["lower"], p50["upper"]) == (0.04, 0.06)


def test_report_draws_the_server_under_the_client(measured):
    html = (measured["report"] / "report.html").read_text()
    assert 'id="fig-server_ttft"' in html
    assert "Server metrics" in html and "client − server (ms)" in html
    md = (measured["report"] / "summary.md").read_text()
    assert "vllmTTFT" in md and "ttft p50" in md
