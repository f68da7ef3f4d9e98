"""``stamped.stamp_time``: a kernel stamp (wall clock) on the engine's clock, by one clock pair
for the reads of ``PAIR_REUSE_S``. Both clocks are scripted (no real stamp can be placed on
demand): the engine's by a list of readings, which raises once a reading is taken that the
script did not expect, and the wall clock by a constant."""

from __future__ import annotations

import types

import pytest

from kfp_bench.load import stamped

WALL = 1_800_000_000 * 10**9  # ns


@pytest.fixture
def clocks(monkeypatch):
    monkeypatch.setattr(stamped, "_pair", [float("-inf"), 0])
    monkeypatch.setattr(stamped, "time", types.SimpleNamespace(time_ns=lambda: WALL))

    def script(*readings):
        it = iter(readings)
        monkeypatch.setattr(stamped, "clock", lambda: next(it))

    return script


def test_one_pair_serves_the_reads_of_its_window(clocks):
    reuse = stamped.PAIR_REUSE_S
    # read 1: now, then the pair's bracket (10 s, 1 µs wide); read 2 within the window: now
    # only (another pair would read the clock again); read 3 past it: now, a new pair
    later = 10.0 + 2 * reuse
    clocks(10.0, 10.0, 10.000001, 10.0 + reuse / 2, later, later, later + 1e-6)
    assert stamped.stamp_time(WALL - 10**6) == pytest.approx(10.0000005 - 0.001, abs=1e-9)
    # a stamp after the pair but before this read: its place on the engine's clock
    t = stamped.stamp_time(WALL + int(reuse / 4 * 1e9))
    assert t == pytest.approx(10.0000005 + reuse / 4, abs=1e-9)
    # the new pair (the same wall time, the engine's clock on: the wall clock stepped back)
    # converts by itself, not by the old one
    assert stamped.stamp_time(WALL - 10**6) == pytest.approx(later + 5e-7 - 0.001, abs=1e-9)


def test_a_stamp_after_the_read_or_a_minute_old_is_no_time(clocks):
    clocks(5.0, 5.0, 5.000001, 5.001, 5.003)
    assert stamped.stamp_time(WALL + 10**8) is None  # 0.1 s after the read: the wall stepped
    assert stamped.stamp_time(WALL - 61 * 10**9) is None  # older than MAX_AGE_S
    # within the pair's own error after the read: the read's time
    assert stamped.stamp_time(WALL + int((5.003 - 5.0000005 + 10e-6) * 1e9)) == 5.003
