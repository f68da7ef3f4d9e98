"""``--repeat``'s intervals: Student t's 95% interval over the runs' values, checked against
scipy's quantiles (the test environment has scipy; the package tables them)."""

from __future__ import annotations

import math

import pytest
from scipy import stats as sp

from kfp_bench.stats.confidence import T975, interval, intervals


def test_the_tabled_quantiles_are_students():
    for df, t in enumerate(T975, start=1):
        assert t == pytest.approx(sp.t.ppf(0.975, df), abs=5e-4)


def test_the_interval_is_the_mean_plus_or_minus_t_standard_errors():
    ci = interval([10.0, 12.0, 11.0])
    half = 4.303 * 1.0 / math.sqrt(3)
    assert ci == {"mean": 11.0, "low": 11.0 - half, "high": 11.0 + half, "n": 3}
    assert interval([5.0]) is None and interval([None, 2.0]) is None  # no spread: no interval
    assert intervals([{"rps": 1.0}, {"rps": 1.0}], ("rps",))["rps"]["low"] == 1.0
