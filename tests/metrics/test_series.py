"""The server series' store: percentiles from cumulative buckets (histogram_quantile's
interpolation), the merge of several pods' files, and the JSON round trip."""

from __future__ import annotations

import json
import math

import pytest

from kfp_bench.errors import ResultsError
from kfp_bench.metrics import series as store
from kfp_bench.metrics.series import METRICS_MISSING, ServerSeries, percentiles

# vLLM's first TTFT buckets, cumulative: 10 requests, 4 within 40 ms, 9 within 60 ms.
BUCKETS = [[0.02, 0.0], [0.04, 4.0], [0.06, 9.0], [0.1, 10.0], [math.inf, 10.0]]


def test_percentiles_interpolate_inside_the_bucket():
    p = percentiles(BUCKETS, (0.5, 0.9, 0.95))
    assert p["count"] == 10
    # rank 5: one past the 4 of the 0.04 bucket, of the 5 in (0.04, 0.06]
    assert p[0.5] == {"value": pytest.approx(0.044), "lower": 0.04, "upper": 0.06}
    assert p[0.9]["value"] == pytest.approx(0.06)
    assert (p[0.95]["lower"], p[0.95]["upper"]) == (0.06, 0.1)


def test_a_quantile_in_the_inf_bucket_is_the_highest_finite_bound():
    p = percentiles([[0.1, 1.0], [math.inf, 10.0]], (0.99,))
    assert p[0.99] == {"value": 0.1, "lower": 0.1, "upper": math.inf}


def test_no_samples_no_percentiles():
    assert percentiles([[0.1, 0.0], [math.inf, 0.0]]) == {"count": 0}
    assert percentiles([]) == {"count": 0}


def _pod(source: str, t0: float) -> ServerSeries:
    s = ServerSeries(window=(t0, t0 + 10), step_s=1.0)
    s.add_points(source, "vllm:num_requests_running", {"pod": source}, [(t0, 1), (t0 + 1, 2)])
    s.add_points("http://prom", "queue", {}, [(t0, 0), (t0 + 1, float("nan"))], panel="ttft")
    s.add_histogram(source, "vllm:time_to_first_token_seconds", "ttft", BUCKETS)
    return s


def test_pods_merge_by_source_and_time():
    a, b = _pod("http://pod-a/metrics", 100.0), _pod("http://pod-b/metrics", 103.0)
    a.merge(b)
    assert a.window == (100.0, 113.0)
    per_pod = [s for s in a.series.values() if s["metric"] == "vllm:num_requests_running"]
    assert len(per_pod) == 2
    # the same Prometheus answered both pods: one series, each second once
    shared = [s for s in a.series.values() if s["metric"] == "queue"]
    assert len(shared) == 1 and sorted(shared[0]["points"]) == [100.0, 101.0, 103.0, 104.0]
    assert len(a.histograms) == 2


def test_round_trip_keeps_nan_and_flags(tmp_path):
    s = _pod("http://pod-a/metrics", 100.0)
    s.note("cannot query http://prom/api/v1/query_range: refused")
    s.note("queue: no series over the window", failed=False)
    path = store.path_beside(tmp_path / "run.json")
    assert path.name == "run.server.json"
    store.save(s, path)

    def strict(name):
        raise AssertionError(f"{name} is not JSON")

    json.loads(path.read_text(), parse_constant=strict)  # NaN stored as a string
    back = store.load_beside(tmp_path / "run.json")
    assert back.flags == [METRICS_MISSING] and back.notes == s.notes
    queue = next(x for x in back.series.values() if x["metric"] == "queue")
    assert math.isnan(queue["points"][101.0]) and queue["panel"] == "ttft"
    assert back.to_dict() == s.to_dict()


def test_a_file_of_another_kind_is_refused(tmp_path):
    (tmp_path / "x.json").write_text('{"version": 99}')
    with pytest.raises(ResultsError, match="not a server metrics file"):
        store.load(tmp_path / "x.json")
    assert store.load_beside(tmp_path / "missing.json") is None


def test_merge_beside_the_merged_results(tmp_path):
    store.save(_pod("http://pod-a/metrics", 100.0), tmp_path / "a.server.json")
    store.save(_pod("http://pod-b/metrics", 103.0), tmp_path / "b.server.json")
    got = store.merge_beside([tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"],
                             tmp_path / "all.json")  # fmt: skip
    assert got == tmp_path / "all.server.json"
    merged = store.load(got)
    assert merged.window == (100.0, 113.0) and len(merged.histograms) == 2
    assert store.merge_beside([tmp_path / "c.json"], tmp_path / "none.json") is None
