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
