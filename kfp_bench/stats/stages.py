"""Figures per stage of a staged load (``--stages``): mergeable, as the whole run's are.

A request belongs to the stage its *intended* send time falls in (the schedule's, never the
moment it went out), so a stage's counts are the schedule's even when the client ran late.
``StageStats`` keeps, per stage, the requests, those that succeeded, sums (the LLM load's output
tokens) and an HDR histogram per latency (µs, from the intended send time). The stage bounds come
from ``load.stages.bounds`` as plain dicts, so that this module does not import the load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kfp_bench.errors import ResultsError
from kfp_bench.stats.hdr import Histogram

_BOUND_KEYS = ("stage", "kind", "start_s", "end_s", "first", "requests")


@dataclass
class StageStats:
    """Per-stage figures. ``bounds``: one dict per stage (``load.stages.bounds``); ``metrics``:
    the latency names kept per stage (``latency`` for the plain load; ``ttft``, ``e2e`` for
    the LLM load); ``sums``: the counts summed per stage besides requests and ok."""

    bounds: list
    metrics: tuple = ("latency",)
    sums: tuple = ()
    counts: list = field(default_factory=list)
    hists: list = field(default_factory=list)

    def __post_init__(self):
        n = len(self.bounds)
        if not self.counts:
            keys = ("requests", "ok", *self.sums)
            self.counts = [dict.fromkeys(keys, 0) for _ in range(n)]
        if not self.hists:
            self.hists = [{m: Histogram() for m in self.metrics} for _ in range(n)]
        self._ends = np.array([b["end_s"] for b in self.bounds], dtype=np.float64)

    def stage_of(self, offsets: np.ndarray) -> np.ndarray:
        """The stage index of each intended send time (seconds from the start)."""
        idx = np.searchsorted(self._ends, offsets, side="right")
        return np.minimum(idx, len(self.bounds) - 1)

    def add(self, offsets: np.ndarray, ok: np.ndarray, sums=None, **values) -> None:
        """Add rows: their intended ``offsets``, which succeeded (``ok``), ``sums`` (name: one
        number per row) and, per metric, ``(microseconds, mask)``: the rows that have one."""
        stage = self.stage_of(offsets)
        for k in np.unique(stage).tolist():
            rows = stage == k
            c = self.counts[k]
            c["requests"] += int(np.count_nonzero(rows))
            c["ok"] += int(np.count_nonzero(ok & rows))
            for name, per_row in (sums or {}).items():
                c[name] += int(np.asarray(per_row)[rows].sum())
            for name, (us, mask) in values.items():
                self.hists[k][name].record_many(us[rows & mask])

    def merge(self, other: StageStats) -> None:
        if [b["end_s"] for b in other.bounds] != [b["end_s"] for b in self.bounds]:
            raise ResultsError("cannot merge results of different --stages; merge one run's")
        for mine, theirs in zip(self.counts, other.counts, strict=True):
            for k in mine:
                mine[k] += theirs.get(k, 0)
        for mine, theirs in zip(self.hists, other.hists, strict=True):
            for m in self.metrics:
                mine[m].merge(theirs[m])

    def to_dict(self) -> dict:
        return {
            "bounds": self.bounds,
            "metrics": list(self.metrics),
            "sums": list(self.sums),
            "counts": self.counts,
            "histogram": [{m: h[m].encode() for m in self.metrics} for h in self.hists],
            "summary": self.summary(),
        }

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> StageStats:
        try:
            bounds = [{k: b[k] for k in _BOUND_KEYS} for b in doc["bounds"]]
            metrics = tuple(doc["metrics"])
            hists = [{m: Histogram.decode(h[m]) for m in metrics} for h in doc["histogram"]]
            counts = [{k: int(v) for k, v in c.items()} for c in doc["counts"]]
            if not (len(bounds) == len(hists) == len(counts)) or not bounds:
                raise ValueError("stages")
            return cls(bounds, metrics, tuple(doc.get("sums", ())), counts, hists)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ResultsError(
                f"{source}: malformed stages ({exc!r} is missing or wrong)"
            ) from None

    def summary(self) -> list[dict]:
        """One row per stage: its place, the schedule's and the measured requests, successes,
        throughput (successes per second of the stage) and p50/p99 of each metric in ms (None
        when the stage has none)."""
        rows = []
        for b, c, h in zip(self.bounds, self.counts, self.hists, strict=True):
            dur = b["end_s"] - b["start_s"]
            row = {**b, "scheduled": b["requests"], **c}
            row["throughput"] = c["ok"] / dur if dur > 0 else 0.0
            for name in self.sums:
                row[f"{name}_per_s"] = c[name] / dur if dur > 0 else 0.0
            for m in self.metrics:
                p = h[m].percentiles_us((50.0, 99.0)) if h[m].count else None
                row[m] = {"p50": p[50.0] / 1000, "p99": p[99.0] / 1000} if p else None
            rows.append(row)
        return rows


#: What the LLM load keeps per stage.
LLM_METRICS = ("ttft", "e2e")
LLM_SUMS = ("tokens",)
