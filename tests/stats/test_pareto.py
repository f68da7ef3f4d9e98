"""The Pareto front of an LLM sweep (kfp_bench.stats.pareto): a level is on it when no other is
at least as good on both axes and better on one."""

from __future__ import annotations

import pytest

from kfp_bench.stats.pareto import front, pareto_rows, per_user


def test_a_level_beaten_on_both_axes_is_off_the_front():
    # (per user, in all): the second beats the first on both; the third trades one for the other
    assert front([(10, 100), (12, 150), (5, 300)]) == [False, True, True]


def test_a_level_beaten_on_one_axis_and_equal_on_the_other_is_off_the_front():
    assert front([(10, 100), (10, 120), (8, 120)]) == [False, True, False]


def test_equal_levels_are_both_on_the_front():
    assert front([(10, 100), (10, 100)]) == [True, True]


def test_an_unknown_figure_is_on_no_front_and_beats_nothing():
    assert front([(None, 1000), (10, 100), (float("nan"), 5)]) == [False, True, False]


@pytest.mark.parametrize(("tpot", "expected"), [(20.0, 50.0), (0, None), (None, None)])
def test_per_user_is_a_thousand_over_tpot_p50(tpot, expected):
    assert per_user({"tpot_p50_ms": tpot}) == expected


def test_the_rows_carry_the_front_and_tokens_per_unit_of_price():
    rows = [
        {"level": 1.0, "tpot_p50_ms": 10.0, "output_tokens_per_s": 90.0},
        {"level": 4.0, "tpot_p50_ms": 12.5, "output_tokens_per_s": 300.0},
        {"level": 8.0, "tpot_p50_ms": 25.0, "output_tokens_per_s": 280.0},
    ]
    got = pareto_rows(rows, per_hour=2.0)
    assert [p["front"] for p in got] == [True, True, False]
    assert [p["per_user"] for p in got] == [100.0, 80.0, 40.0]
    assert got[1]["tokens_per_price"] == 300.0 * 3600 / 2.0
    assert all(p["tokens_per_price"] is None for p in pareto_rows(rows))
