"""The watcher's rows and the sweep's rows in a results directory make a full report bundle: a
real load against the sandbox model server, its series joined with recorded replica samples."""

from __future__ import annotations

import json

from kfp_bench.kserve.watch import ReplicaSample, replica_rows, watcher_doc
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.sweep import run_sweep
from kfp_bench.load.workers import run_load
from kfp_bench.report.bundle import write_bundle
from kfp_bench.results import read_results, write_results
from kfp_bench.steps.load_params import DEFAULT_PAYLOAD


def test_replicas_and_sweep_rows_reach_the_report(model_server, tmp_path):
    opts = LoadOptions(
        url=model_server.v1_predict_url,
        method="POST",
        body=DEFAULT_PAYLOAD.encode(),
        content_type="application/json",
        rate=20,
        duration=3,
    )
    stats = run_load(opts)
    series = stats.series.rows()
    t0 = series[0]["t"]
    samples = [
        ReplicaSample(t0 + i, r, r, d, r) for i, (r, d) in enumerate([(1, 1), (1, 4), (4, 4)])
    ]
    extra = replica_rows(watcher_doc(samples, target=1, knative=True), series)
    extra.update(run_sweep(opts, [5, 10], 0.5).as_dict())
    write_results(tmp_path, load=stats, extra=extra)
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["replicas"][1]["panic"] is True and "expected" in summary["replicas"][0]
    assert [r["rate"] for r in summary["sweep"]] == [5, 10] and "sweep_knee" in summary
    files = write_bundle(read_results(tmp_path), tmp_path / "report", kde=False)
    md = files["summary.md"].read_text()
    assert "Rate sweep" in md and "Ready replicas" in md
    metrics = json.loads(files["metrics.json"].read_text())
    assert metrics["replicas_max"] == 4 and "sweep_max_rps" in metrics


def test_sweep_rows_get_max_replicas_from_the_watchers_window():
    from kfp_bench.kserve.watch import sweep_max_replicas

    doc = {
        "samples": [
            {"t": 100.0, "ready": 1, "total": 1},
            {"t": 104.0, "ready": 3, "total": 3},
            {"t": 111.0, "ready": 7, "total": 8},
            {"t": 130.0, "ready": 9, "total": 9},
        ]
    }
    rows = [
        {"rate": 5, "started_at": 100.0, "duration_s": 5.0},
        {"rate": 50, "started_at": 110.0, "duration_s": 5.0},
        {"rate": 500, "started_at": 200.0, "duration_s": 5.0},
    ]
    out = sweep_max_replicas(rows, doc)
    assert [r.get("max_replicas") for r in out] == [3, 7, None]
    assert "max_replicas" not in rows[0]  # the input rows are left as they were
