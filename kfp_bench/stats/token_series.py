"""Per-second series of a streaming (LLM) load: requests, failures, tokens and in-flight.

The sibling of ``series.Series`` for token streams: keyed by epoch second, so pods' series line
up, and integer counts only (in-flight as request-microseconds), so merging is exact addition.
A second counts the requests that ended in it (and their output tokens), the content chunks
that arrived in it, and the first chunks (with their TTFTs' sum) that arrived in it."""

from __future__ import annotations

import numpy as np

COUNTS = ("requests", "failures", "output_tokens", "chunks", "inflight_us", "firsts", "ttft_us")


def _add(table: dict[int, list[int]], secs: np.ndarray, col: int, weights=None) -> None:
    if not secs.size:
        return
    keys, inv = np.unique(secs, return_inverse=True)
    sums = np.bincount(inv, weights=weights, minlength=keys.size)
    for sec, v in zip(keys.tolist(), sums.tolist(), strict=True):
        table.setdefault(sec, [0] * len(COUNTS))[col] += int(round(v))


class TokenSeries:
    """Integer per-second counts of a token stream load; mergeable and JSON round-tripping."""

    def __init__(self):
        self._secs: dict[int, list[int]] = {}

    def add_ends(self, end_s: np.ndarray, failed: np.ndarray, tokens: np.ndarray) -> None:
        """Requests that ended at epoch times ``end_s`` (s), failed or not, with their tokens."""
        secs = np.floor(end_s).astype(np.int64)
        _add(self._secs, secs, 0)
        _add(self._secs, secs[failed], 1)
        _add(self._secs, secs, 2, tokens.astype(np.float64))

    def add_chunks(self, arrival_s: np.ndarray) -> None:
        """Content chunks that arrived at epoch times ``arrival_s`` (s)."""
        _add(self._secs, np.floor(arrival_s).astype(np.int64), 3)

    def add_firsts(self, first_s: np.ndarray, ttft_s: np.ndarray) -> None:
        """First content chunks that arrived at epoch times ``first_s`` (s), ``ttft_s`` after
        their requests were sent."""
        secs = np.floor(first_s).astype(np.int64)
        _add(self._secs, secs, 5)
        _add(self._secs, secs, 6, np.rint(ttft_s * 1e6))

    def add_inflight(self, start_s: np.ndarray, end_s: np.ndarray) -> None:
        """Requests in flight from ``start_s`` to ``end_s`` (epoch s): each second gets the
        microseconds of each request's interval that fall in it."""
        if not start_s.size:
            return
        end_s = np.maximum(end_s, start_s)
        first = np.floor(start_s).astype(np.int64)
        span = np.floor(end_s).astype(np.int64) - first + 1
        row = np.repeat(np.arange(start_s.size), span)
        offsets = np.cumsum(span) - span
        sec = first[row] + (np.arange(row.size) - offsets[row])
        overlap = np.minimum(end_s[row], sec + 1.0) - np.maximum(start_s[row], sec)
        # Each piece rounds on its own, so a batch split differently still sums the same.
        _add(self._secs, sec, 4, np.rint(overlap * 1e6))

    def merge(self, other: TokenSeries) -> None:
        """Add ``other``'s seconds; in-flight adds up, since the streams are separate clients."""
        for sec, counts in other._secs.items():
            mine = self._secs.setdefault(sec, [0] * len(COUNTS))
            for i, v in enumerate(counts):
                mine[i] += v

    def rows(self) -> list[dict]:
        """All seconds, oldest first, with ``t`` the epoch second."""
        out = []
        for sec in sorted(self._secs):
            row = {"t": sec, **dict(zip(COUNTS, self._secs[sec], strict=True))}
            row["inflight"] = row["inflight_us"] / 1e6
            row["ttft_mean_ms"] = row["ttft_us"] / row["firsts"] / 1e3 if row["firsts"] else None
            out.append(row)
        return out

    @classmethod
    def from_rows(cls, rows: list[dict]) -> TokenSeries:
        series = cls()
        # a results file from before the TTFT columns: 0 for them (no TTFT series drawn)
        series._secs = {int(r["t"]): [int(r.get(k, 0)) for k in COUNTS] for r in rows}
        return series
