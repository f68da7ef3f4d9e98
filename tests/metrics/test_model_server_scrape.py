"""A direct scrape of the local KServe model server (the real kserve ModelServer) while the
predict load runs: its own ``request_predict_seconds`` histogram (python/kserve/kserve/metrics.py,
kserve/kserve@aaac4e29) is kept as its growth over the window, one count per request the
server predicted, beside the client's latency."""

from __future__ import annotations

import json

from kfp_bench.metrics import series as store
from kfp_bench.metrics.series import percentiles
from tests.conftest import run_cli

IRIS = {"instances": [[6.8, 2.8, 4.8, 1.4]]}


def test_scrape_counts_every_predict(model_server, tmp_path):
    body = tmp_path / "body.json"
    body.write_text(json.dumps(IRIS))
    out = tmp_path / "run.json"
    done = run_cli(
        "load", model_server.v1_predict_url, "-n", "60", "-c", "2", "-m", "POST",
        "-D", str(body), "-T", "application/json",
        "--scrape", f"{model_server.url}/metrics", "--metrics-step", "0.5",
        "--json-out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    server = store.load_beside(out)
    assert not server.flags, server.notes
    (h,) = [h for h in server.histograms.values() if h["metric"] == "request_predict_seconds"]
    assert h["compare"] == "latency"
    assert percentiles(h["buckets"])["count"] == 60


def test_predict_text_and_markdown_show_the_server_section(model_server, tmp_path):
    """The predict load's server section is in every report, not the HTML alone: ``kfp-bench
    report FILE.json`` prints it under hey's layout, and a results directory's summary.md has
    it: the server's p50/p90/p99 from request_predict_seconds, the bucket holding each (its
    resolution), the client's figure and the difference named."""
    from kfp_bench.results import write_results
    from kfp_bench.stats import store as stats_store

    body = tmp_path / "body.json"
    body.write_text(json.dumps(IRIS))
    out = tmp_path / "run.json"
    done = run_cli(
        "load", model_server.v1_predict_url, "-n", "40", "-c", "2", "-m", "POST",
        "-D", str(body), "-T", "application/json",
        "--scrape", f"{model_server.url}/metrics", "--json-out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = run_cli("report", str(out))
    assert text.returncode == 0, text.stderr
    section = text.stdout.split("Server metrics:\n", 1)[1]
    assert "client − server (ms)" in section and "its bucket (ms)" in section
    rows = [line.split() for line in section.splitlines() if "request_predict_seconds" in line]
    assert [r[:2] for r in rows] == [["latency", "p50"], ["latency", "p90"], ["latency", "p99"]]
    assert all(r[3] == "40" for r in rows)  # the server counted every request the client sent
    assert all("–" in r[5] for r in rows)  # the bucket: lower–upper

    res = tmp_path / "results"
    write_results(res, load=stats_store.load(str(out)))
    store.save(store.load_beside(out), res / "load.server.json")
    bundle = run_cli("report", str(res), "--out", str(tmp_path / "report"))
    assert bundle.returncode == 0, bundle.stderr
    md = (tmp_path / "report" / "summary.md").read_text()
    part = md.split("## Server metrics\n", 1)[1]
    assert "| figure | server histogram | server count |" in part
    assert part.count("| request_predict_seconds | 40 |") == 3
    assert "Window " in part
