"""Each metric printed at the resolution of its source (``report.metrics.resolution``): the run
times at their server's timestamps', an HDR percentile to the microsecond, the rest as they
always printed."""

from __future__ import annotations

import io

import pytest

from kfp_bench.figures import HDR_MS
from kfp_bench.report.metrics import resolution
from kfp_bench.report.rebuild import write_diff


@pytest.mark.parametrize(
    ("name", "res"),
    [
        ("run_duration_p50_s", 1.0),
        ("run_queue_delay_max_s", 1.0),
        ("run_execution_mean_s", 0.01),  # over its count of runs: two decimals finer
        ("run_duration_s", 0.5),  # a regression test's median: half way between two
        ("load_p99_ms", HDR_MS),
        ("load_uncorrected_p99_9_ms", HDR_MS),
        ("load_no_response_p50_ms", HDR_MS),
        ("ttft_p99_ms", HDR_MS),
        ("ttft_turn2_p50_ms", HDR_MS),
        ("itl_max_ms", HDR_MS),
        ("load_mean_ms", None),  # a mean: finer than its samples
        ("api_create_run_p99_ms", None),  # the driver's monotonic clock
        ("run_duration_count", None),
        ("load_rps", None),
    ],
)
def test_the_resolution_of_each_metric(name, res):
    assert resolution(name, 1.0) == pytest.approx(res)


def test_run_times_of_unknown_resolution_print_as_they_always_did():
    assert resolution("run_duration_p50_s", None) is None


def test_compare_prints_each_sides_run_times_at_its_own_resolution():
    a = {"run_duration_p50_s": 8.0, "run_duration_mean_s": 8.4, "run_time_resolution_s": 1.0}
    b = {"run_duration_p50_s": 10.0, "run_duration_mean_s": 9.6, "load_p50_ms": 0.512}
    out = io.StringIO()
    write_diff(a, b, "a", "b", out)
    rows = {line.split()[0]: line.split()[1:] for line in out.getvalue().splitlines()[4:]}
    assert rows["run_duration_p50_s"] == ["8", "10.00", "+25.0%"]  # b: resolution unknown
    assert rows["run_duration_mean_s"] == ["8.40", "9.600", "+14.3%"]
    assert rows["load_p50_ms"] == ["–", "0.512"]
