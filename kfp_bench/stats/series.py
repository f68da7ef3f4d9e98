"""Per-second time series of a load attack, mergeable across processes and machines.

Seconds are keyed by wall-clock (epoch) second, so that series recorded on different pods line up
when merged. Each second keeps a 2-digit HDR histogram while it is open; once a second can receive
no more samples it is closed into plain numbers plus its encoded histogram (a few hundred bytes),
so memory stays flat however long the attack runs. A second's percentiles are of its responses
only; its requests without one are counted (``no_response``), never timed in them.
"""

from __future__ import annotations

import numpy as np

from kfp_bench.stats.hdr import Histogram

PCTS = (50.0, 90.0, 99.0)
#: A second's counts, in its row's order.
COUNTS = ("requests", "errors", "no_response", "bytes_in", "inflight")


def _ms(us: int | None) -> float | None:
    return None if us is None else us / 1000


def _count(row: dict, name: str) -> int:
    return row.get(name, 0) if name == "no_response" else row[name]  # (absent from older results)


class _Open:
    __slots__ = (*COUNTS, "hist")

    def __init__(self):
        self.requests = self.errors = self.no_response = self.bytes_in = self.inflight = 0
        self.hist = Histogram(digits=2)


class Series:
    """Requests, errors, requests without a response, bytes, in-flight and latency percentiles
    (of the responses) for each second."""

    def __init__(self):
        self._open: dict[int, _Open] = {}
        self._closed: dict[int, dict] = {}

    def add(self, secs, lat_us, failed, bytes_in, answered=None):
        """Add samples (numpy arrays): each one's epoch second, latency (µs), failure flag, body
        bytes and whether it got a response (all did when ``answered`` is None); the latency of
        one that got none is left out."""
        if not secs.size:
            return
        if answered is None:
            answered = np.ones(secs.size, dtype=bool)
        lo, hi = int(secs.min()), int(secs.max())
        if lo == hi:  # the usual batch of a flush interval: one second, no masks, no sort
            self._add_to(lo, lat_us, failed, bytes_in, answered)
            return
        for sec in range(lo, hi + 1) if hi - lo < 8 else np.unique(secs).tolist():
            m = secs == sec
            if m.any():
                self._add_to(sec, lat_us[m], failed[m], bytes_in[m], answered[m])

    def _add_to(self, sec: int, lat_us, failed, bytes_in, answered) -> None:
        b = self._bucket(sec)
        b.requests += int(lat_us.size)
        b.errors += int(np.count_nonzero(failed))
        b.no_response += int(lat_us.size - np.count_nonzero(answered))
        b.bytes_in += int(bytes_in.sum())
        b.hist.record_many(lat_us[answered])

    def note_inflight(self, sec: int, inflight: int) -> None:
        """Keep the highest in-flight count seen during ``sec``."""
        b = self._bucket(sec)
        b.inflight = max(b.inflight, inflight)

    def close_before(self, sec: int) -> None:
        """Close every second before ``sec``: no sample can arrive for them any more."""
        for s in [s for s in self._open if s < sec]:
            b = self._open.pop(s)
            # A second without a response has no latency: None, never 0 ms.
            pct = b.hist.percentiles_us(PCTS) if b.hist.count else dict.fromkeys(PCTS)
            self._closed[s] = {
                "t": s,
                **{k: getattr(b, k) for k in COUNTS},
                **{f"p{p:g}_ms": _ms(pct[p]) for p in PCTS},
                "hist": b.hist.encode() if b.hist.count else "",
            }

    def _bucket(self, sec: int) -> _Open:
        b = self._open.get(sec)
        if b is None:
            b = self._open[sec] = _Open()
            if sec in self._closed:  # a late sample reopens its second
                self._reopen(sec, b)
        return b

    def _reopen(self, sec: int, b: _Open) -> None:
        old = self._closed.pop(sec)
        for k in COUNTS:
            setattr(b, k, _count(old, k))
        if old["hist"]:
            b.hist.merge(Histogram.decode(old["hist"]))

    # -- merge and persistence ---------------------------------------------------------------
    def merge(self, other: Series) -> None:
        """Add ``other``'s seconds; in-flight counts add up, since they are separate clients."""
        other.close_before(2**62)
        self.close_before(2**62)
        for s, row in other._closed.items():
            b = self._bucket(s)
            for k in COUNTS:
                setattr(b, k, getattr(b, k) + _count(row, k))
            if row["hist"]:
                b.hist.merge(Histogram.decode(row["hist"]))
        self.close_before(2**62)

    def rows(self) -> list[dict]:
        """All seconds, oldest first, with ``t`` the epoch second."""
        self.close_before(2**62)
        return [self._closed[s] for s in sorted(self._closed)]

    @classmethod
    def from_rows(cls, rows: list[dict]) -> Series:
        series = cls()
        series._closed = {int(r["t"]): dict(r) for r in rows}
        return series
