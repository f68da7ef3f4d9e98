"""The regression verdict on synthetic results: a real slowdown is named, noise is not, and a
baseline with too few samples is refused."""

from __future__ import annotations

import numpy as np
import pytest

from kfp_bench.errors import BaselineError
from kfp_bench.history import regress
from kfp_bench.results import read_results
from kfp_bench.stats.hdr import Histogram
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
