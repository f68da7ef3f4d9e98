"""A stamp's age is read from two clocks; ``stamped.clock_pair`` reads them as one instant.

A preemption cannot be forced on demand, so the engine's clock is replaced by a scripted one
(the wall clock stays real): a first bracket widened by a "preemption" must not be the pair
used when a tighter one follows."""

from __future__ import annotations

import time

import pytest

from kfp_bench.load import stamped

#: Assertions about time: the timing tier (tests/README.md), held beside two busy loops.
pytestmark = pytest.mark.timing


def _scripted(monkeypatch, readings):
    it = iter(readings)
    monkeypatch.setattr(stamped, "clock", lambda: next(it))


def test_a_bracket_widened_by_a_preemption_is_read_again(monkeypatch):
    # 5 ms between the first two readings (preempted), then 2 µs
    _scripted(monkeypatch, [10.0, 10.005, 10.006, 10.006002])
    t, wall = stamped.clock_pair()
    assert t == (10.006 + 10.006002) / 2
    assert abs(wall - time.time_ns()) < 10**9


def test_a_tight_bracket_is_taken_at_once(monkeypatch):
    _scripted(monkeypatch, [1.0, 1.000001])  # a third reading would raise StopIteration
    assert stamped.clock_pair()[0] == 1.0000005


def test_three_wide_brackets_give_the_tightest(monkeypatch):
    _scripted(monkeypatch, [0.0, 0.004, 1.0, 1.001, 2.0, 2.003])
    assert stamped.clock_pair()[0] == 1.0005
