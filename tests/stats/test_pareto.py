"""The Pareto front of an LLM sweep (kfp_bench.stats.pareto): a level is on it when no other is
at least as good on both axes and better on one."""

from __future__ import annotations

import pytest

from kfp_bench.stats.pareto import Scale, axis, front, fronts, per_user


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
    _, _, got = fronts({"sweep": (rows, Scale(per_hour=2.0))})
    assert [p["front"] for p in got] == [True, True, False]
    assert [p["per_user"] for p in got] == [100.0, 80.0, 40.0]
    assert got[1]["tokens_per_price"] == 300.0 * 3600 / 2.0
    assert all(p["tokens_per_price"] is None for p in fronts({"sweep": (rows, Scale())})[2])


def test_replicas_and_gpus_divide_the_total_and_gpus_come_first_on_the_axis():
    rows = [{"level": 1.0, "tpot_p50_ms": 10.0, "output_tokens_per_s": 400.0}]
    (p,) = fronts({"sweep": (rows, Scale(replicas=2, gpus=8))})[2]
    assert (p["per_replica"], p["per_gpu"], p["tokens_per_price"]) == (200.0, 50.0, None)
    assert axis(Scale(replicas=2, gpus=8))[0] == "per_gpu"
    assert axis(Scale(replicas=2), Scale(replicas=1, gpus=4))[0] == "per_replica"
    assert axis(Scale(per_hour=3.0), Scale(gpus=4))[0] == "output_tokens_per_s"


def test_two_sweeps_on_one_front_per_replica_not_in_all():
    """A serves more in all with four replicas, B more per replica with one: per replica, B's
    busiest level beats A's, and each sweep keeps its own front."""
    a = [{"level": 1.0, "tpot_p50_ms": 10.0, "output_tokens_per_s": 100.0},
         {"level": 8.0, "tpot_p50_ms": 20.0, "output_tokens_per_s": 800.0}]  # fmt: skip
    b = [{"level": 1.0, "tpot_p50_ms": 10.0, "output_tokens_per_s": 100.0},
         {"level": 4.0, "tpot_p50_ms": 20.0, "output_tokens_per_s": 300.0}]  # fmt: skip
    y, label, pts = fronts({"A": (a, Scale(replicas=4)), "B": (b, Scale(replicas=1))})
    assert (y, label) == ("per_replica", "output tok/s per replica")
    assert [(p["sweep"], p["own"], p["front"]) for p in pts] == [
        ("A", True, False), ("A", True, False), ("B", True, True), ("B", True, True),
    ]  # fmt: skip
    _, _, in_all = fronts({"A": (a, Scale()), "B": (b, Scale(replicas=1))})
    assert [p["front"] for p in in_all] == [True, True, True, False]
