"""RunsStats: summary.json keys, percentiles, poll rounds, merge, and the server-side view."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kfp_bench.records import ApiCall, RunRecord, TaskRecord
from kfp_bench.stats.runs import OPERATIONS, RunsStats, histogram_quantile

DIST_KEYS = {"p50", "p90", "p99", "max", "mean"}
API_KEYS = {"count", "errors", "p50_ms", "p90_ms", "p99_ms", "max_ms"}


def _stats(n_runs=10, offset=0.0) -> RunsStats:
    s = RunsStats(requested=n_runs, benchmark_id="b", host="http://h")
    for i in range(n_runs):
        s.add(ApiCall("create_run", 1.0 + i, 0.010 + i / 1000))
        s.add(
            RunRecord(
                f"r{i}",
                f"kfp-bench-b-{i:05d}",
                "SUCCEEDED" if i % 5 else "FAILED",
                created_at=100.0,
                finished_at=110.0,
                queue_delay=1.0 + offset,
                execution=9.0,
                duration=10.0 + i + offset,
                tasks=(TaskRecord("t", "SUCCEEDED", 2.0),),
            )
        )
    for rnd in (1, 2, 3):
        for _ in range(2):
            s.add(ApiCall("list_runs", 2.0, 0.004, poll_round=rnd))
    s.add(ApiCall("get_run", 2.0, 0.5, "error", 503, "HTTP 503 Service Unavailable"))
    return s


def test_summary_has_the_issue_keys():
    doc = _stats().close(5.0, 0.5).summary()
    runs = doc["runs"]
    assert runs["requested"] == 10 and runs["created"] == 10
    assert runs["by_state"] == {"FAILED": 2, "SUCCEEDED": 8}
    for key in ("duration_s", "queue_delay_s", "execution_s"):
        assert DIST_KEYS <= set(runs[key])
    assert set(OPERATIONS) <= set(doc["api"])
    for op in OPERATIONS:
        assert API_KEYS <= set(doc["api"][op])
    assert doc["api_calls_total"] == 10 + 6 + 1
    assert doc["poll_rounds"] == 3 and doc["calls_per_poll_round"]["max"] == 2
    assert doc["api"]["get_run"]["errors"] == 1
    assert doc["client"] == {"cpu_s": 0.5, "wall_s": 5.0}
    json.dumps(doc, allow_nan=False)


def test_percentiles_are_numpys():
    doc = _stats().summary()
    durations = np.arange(10) + 10.0
    assert doc["runs"]["duration_s"]["p90"] == pytest.approx(np.percentile(durations, 90))
    assert doc["runs"]["duration_s"]["max"] == 19.0
    assert doc["api"]["create_run"]["p50_ms"] == pytest.approx(14.5)


def test_merge_equals_adding_everything_to_one():
    a, b = _stats(), _stats(offset=1.0)
    a.close(5.0, 1.0)
    b.started_at = a.started_at + 1
    b.close(5.0, 2.0)
    a.merge(b)
    doc = a.summary()
    assert doc["runs"]["requested"] == 20 and doc["runs"]["created"] == 20
    assert doc["runs"]["duration_s"]["count"] == 20
    assert doc["api"]["create_run"]["count"] == 20
    assert doc["poll_rounds"] == 6  # another driver's rounds are other rounds
    assert doc["client"]["cpu_s"] == 3.0 and doc["client"]["wall_s"] == pytest.approx(6.0)


def test_empty_stats_summarize_to_zeros():
    doc = RunsStats(requested=3).summary()
    assert doc["runs"]["created"] == 0 and doc["runs"]["duration_s"]["p99"] == 0.0
    assert doc["api"]["create_run"]["count"] == 0 and doc["poll_rounds"] == 0


def test_server_view_puts_both_sides_together():
    s = _stats()
    s.set_server(
        {
            "operations": {
                "create_run": {
                    "count": 10,
                    "errors": 0,
                    "sum_s": 0.05,
                    "buckets": [[0.001, 0], [0.005, 6], [0.01, 10], [float("inf"), 10]],
                }
            },
            "interval_s": 3.0,
        }
    )
    view = s.summary()["server"]["operations"]["create_run"]
    assert view["requests"] == 10 and view["mean_ms"] == 5.0
    assert view["client_mean_ms"] == pytest.approx(14.5)
    assert view["network_ms"] == pytest.approx(9.5)
    assert view["network_share"] == pytest.approx(9.5 / 14.5, abs=1e-4)
    assert view["p50_ms"] == pytest.approx(1 + 4 * 5 / 6, abs=1e-3)


def test_histogram_quantile_matches_prometheus():
    buckets = [[0.1, 10], [0.2, 20], [float("inf"), 20]]
    assert histogram_quantile(0.5, buckets) == pytest.approx(0.1)
    assert histogram_quantile(0.75, buckets) == pytest.approx(0.15)
    assert histogram_quantile(0.99, [[0.1, 0], [float("inf"), 5]]) == 0.1
    assert histogram_quantile(0.5, []) is None


@pytest.mark.parametrize("n", [1, 2, 3, 10, 101, 1000])
def test_percentiles_equal_numpys_to_the_bit(n):
    """The driver's steps install no numpy; their percentiles are still numpy's."""
    import random

    import numpy as np

    from kfp_bench.stats.runs import _percentile

    rng = random.Random(n)
    values = [rng.expovariate(1.0) for _ in range(n)]
    for p in (0.0, 37.5, 50.0, 90.0, 99.0, 100.0):
        assert _percentile(sorted(values), p) == float(np.percentile(np.array(values), p))


def test_the_kfp_driver_imports_no_numpy():
    import subprocess
    import sys

    script = (
        "import sys; sys.modules['numpy'] = None\n"
        "import kfp_bench.kfp.phases, kfp_bench.kfp.driver, kfp_bench.kfp.cleanup\n"
        "import kfp_bench.steps.start, kfp_bench.steps.child_runs\n"
        "import kfp_bench.steps.exit_handler"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)
