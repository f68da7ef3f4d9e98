"""The per-second TTFT columns of ``stats.token_series``: exact merges, and older files."""

from __future__ import annotations

import numpy as np

from kfp_bench.stats.token_series import TokenSeries


def test_firsts_are_counted_in_the_second_they_came_and_merge_exactly():
    a, b = TokenSeries(), TokenSeries()
    a.add_firsts(np.array([100.2, 100.9, 101.5]), np.array([0.030, 0.050, 0.100]))
    b.add_firsts(np.array([100.5]), np.array([0.020]))
    a.merge(b)
    rows = {r["t"]: r for r in a.rows()}
    assert (rows[100]["firsts"], rows[100]["ttft_us"]) == (3, 100_000)
    assert rows[100]["ttft_mean_ms"] == 100_000 / 3 / 1e3
    assert (rows[101]["firsts"], rows[101]["ttft_mean_ms"]) == (1, 100.0)
    assert TokenSeries.from_rows(a.rows()).rows() == a.rows()


def test_a_second_without_a_first_token_has_no_mean_and_older_rows_read():
    s = TokenSeries()
    s.add_chunks(np.array([7.5]))
    (row,) = s.rows()
    assert row["firsts"] == 0 and row["ttft_mean_ms"] is None
    old = {"t": 7, "requests": 1, "failures": 0, "output_tokens": 3, "chunks": 3,
           "inflight_us": 10}  # fmt: skip
    (back,) = TokenSeries.from_rows([old]).rows()
    assert back["requests"] == 1 and back["firsts"] == 0 and back["ttft_mean_ms"] is None
