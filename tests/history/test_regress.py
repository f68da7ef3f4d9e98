"""The regression verdict on synthetic results: a real slowdown is named, noise is not, and a
baseline with too few samples is refused."""

from __future__ import annotations

import numpy as np
import pytest

from kfp_bench.cli import main
from kfp_bench.errors import BaselineError
from kfp_bench.history import regress
from kfp_bench.results import read_results
from kfp_bench.stats import store
from kfp_bench.stats.hdr import Histogram
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.rate_sweep import LlmSweep, find_llm_knee
from tests.stats.streams import batch, stream
from tests.synthetic import make_results


@pytest.fixture(scope="module")
def baseline(tmp_path_factory):
    d = tmp_path_factory.mktemp("base")
    return [read_results(make_results(d / f"b{i}", seed=10 + i)) for i in range(2)]


def test_a_slowdown_is_a_regression(tmp_path, baseline):
    current = read_results(make_results(tmp_path / "slow", seed=3, slow=1.4))
    v = regress.compare(current, baseline)
    assert v.regression
    names = {t.metric for t in v.regressed}
    assert {"run_duration_s", "api_create_run_ms", "load_latency_ms"} <= names
    assert v.metrics()["regression"] == 1 and v.metrics()["baseline_results"] == 2
    assert "REGRESSION" in v.headline()


def test_noise_is_not_a_regression(tmp_path, baseline):
    current = read_results(make_results(tmp_path / "same", seed=4))
    v = regress.compare(current, baseline)
    assert not v.regression, v.headline()
    assert v.metrics()["regression"] == 0
    assert all(0 <= t.p_adjusted <= 1 for t in v.tests)
    # One call of upload_pipeline a night is never tested, and says so.
    assert "api_upload_pipeline_ms" in v.skipped


def test_more_failures_are_a_regression(tmp_path, baseline):
    current = read_results(make_results(tmp_path / "failing", seed=5, failed=15))
    v = regress.compare(current, baseline)
    assert [t.metric for t in v.regressed] == ["runs_failed"]


def test_a_small_significant_drift_is_not_a_regression(tmp_path, baseline):
    """A 3 % slowdown over many samples may be significant; it is below the minimum effect."""
    current = read_results(make_results(tmp_path / "drift", seed=6, slow=1.03))
    assert not regress.compare(current, baseline).regression


def test_too_few_samples_are_refused(tmp_path):
    tiny = read_results(make_results(tmp_path / "tiny", runs=3, failed=0, load=False))
    other = read_results(make_results(tmp_path / "tiny2", seed=2, runs=3, failed=0, load=False))
    with pytest.raises(BaselineError, match="too few samples.*need 8"):
        regress.compare(tiny, [other])
    with pytest.raises(BaselineError, match="no earlier results"):
        regress.compare(tiny, [])


def test_hdr_samples_follow_the_histogram():
    h = Histogram()
    rng = np.random.default_rng(0)
    values = rng.lognormal(np.log(5000), 0.5, 50_000).astype(np.int64)
    h.record_many(values)
    s = regress.hdr_samples(h, 2000)
    assert s.size == 2000
    for q in (10, 50, 90, 99):
        assert np.percentile(s, q) == pytest.approx(np.percentile(values, q), rel=0.02)
    small = Histogram()
    small.record_many(np.array([100, 200, 300]))
    assert sorted(regress.hdr_samples(small, 2000)) == pytest.approx([100, 200, 300], rel=0.01)


# -- repeated results: the verdict over their intervals -----------------------------------------
def _repeats(**figures) -> dict:
    """A --repeat result's ``repeats``: each figure as (mean, low, high) over 3 runs."""
    return {"runs": 3, "confidence": 0.95, "method": "Student t over the runs' values",
            "intervals": {k: {"mean": m, "low": lo, "high": hi, "n": 3}
                          for k, (m, lo, hi) in figures.items()}}  # fmt: skip


def test_repeats_regress_only_when_the_new_interval_is_wholly_worse():
    base = _repeats(ttft_p99_ms=(100, 95, 105), output_tokens_per_s=(1000, 980, 1020),
                    itl_p99_ms=(20, 19, 21), rps=(10, 9.8, 10.2))  # fmt: skip
    worse = _repeats(ttft_p99_ms=(130, 120, 140), output_tokens_per_s=(850, 800, 900),
                     itl_p99_ms=(24, 18, 30), rps=(10.1, 9.9, 10.3))  # fmt: skip
    v = regress.compare_repeats(worse, base, names=["a.json"])
    assert v.regression
    got = {t.metric: t.regressed for t in v.tests}
    # TTFT up 30% and throughput down 15%, intervals apart: regressions; ITL's mean is 20% worse
    # but its wide interval overlaps the baseline's: not one; rps did not get worse
    assert got == {"ttft_p99_ms": True, "output_tokens_per_s": True, "itl_p99_ms": False,
                   "rps": False}, v.tests  # fmt: skip
    assert "good_ratio" in v.skipped and "regression_min_p_value" not in v.metrics()
    ttft = next(t for t in v.tests if t.metric == "ttft_p99_ms")
    assert ttft.current_ci == (120, 140) and ttft.baseline_ci == (95, 105)


def test_repeats_apart_but_better_or_by_less_than_the_minimum_effect_are_no_regression():
    base = _repeats(ttft_p99_ms=(100, 99, 101), output_tokens_per_s=(1000, 990, 1010))
    better = _repeats(ttft_p99_ms=(80, 78, 82), output_tokens_per_s=(1200, 1150, 1250))
    assert not regress.compare_repeats(better, base, names=["a"]).regression
    slight = _repeats(ttft_p99_ms=(105, 104, 106), output_tokens_per_s=(950, 945, 955))
    v = regress.compare_repeats(slight, base, names=["a"])  # apart, but 5% moves
    assert not v.regression and len(v.tests) == 2
    with pytest.raises(BaselineError, match="no figure has an interval in both a"):
        regress.compare_repeats(_repeats(), base, names=["a"])


def test_compare_of_two_repeat_files_gives_the_interval_verdict(tmp_path, capsys):
    def run() -> LlmStats:  # one run's stats: three streams (the verdict reads the intervals)
        s = LlmStats()
        s.add_batch(batch(*[stream(k, [k + 0.1, k + 0.2], k + 0.3) for k in range(3)]))
        return s.close(3.0)

    def saved(name, repeats):
        steps = [run() for _ in range(3)]
        sweep = LlmSweep("concurrency", [1.0] * 3, steps, find_llm_knee([1.0] * 3, steps),
                         repeats=repeats)  # fmt: skip
        return str(store.save(sweep, tmp_path / name))

    a = saved("a.json", _repeats(ttft_p99_ms=(100, 95, 105)))
    b = saved("b.json", _repeats(ttft_p99_ms=(130, 120, 140)))
    assert main(["compare", a, b]) == 0  # a verdict, no gate
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "! ttft_p99_ms\t100 [95, 105]\t130 [120, 140]\t+30.0%" in out
    assert main(["compare", a, b, "--fail-on-regression"]) == 3
    assert main(["compare", b, a, "--fail-on-regression"]) == 0  # faster: no regression
