"""Figures per turn of a multi-turn load (``llm --multi-turn``): mergeable, as the run's are.

A row belongs to the turn its session was at (1 to ``turns``, ``records.StreamBatch.turns``).
The input tokens are the server's count (usage's ``prompt_tokens``: the whole history, so they
grow with the turn). Integer counts and histograms only, so a merge over processes is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kfp_bench.errors import ResultsError
from kfp_bench.stats.cached import hit_rate
from kfp_bench.stats.hdr import Histogram

METRICS = ("ttft", "e2e")
#: Counted since the usage's cached tokens were read: 0 in results saved before.
_CACHED = ("cached_tokens", "cached_prompt")
_COUNTS = ("requests", "completed", "input_tokens", "input_counted", "output_tokens", *_CACHED)


@dataclass
class TurnStats:
    """Per-turn figures of sessions of ``turns`` turns."""

    turns: int
    counts: list = field(default_factory=list)
    hists: list = field(default_factory=list)

    def __post_init__(self):
        if not self.counts:
            self.counts = [dict.fromkeys(_COUNTS, 0) for _ in range(self.turns)]
        if not self.hists:
            self.hists = [{m: Histogram() for m in METRICS} for _ in range(self.turns)]

    def add(self, turn, completed, prompt_tokens, output_tokens, ttft, e2e_us, cached) -> None:
        """Add rows: each one's ``turn`` (from 1), whether it ``completed``, its prompt tokens
        (-1: unknown) and output tokens, ``ttft`` as (µs, mask of the rows that have one), its
        e2e in µs, and ``cached`` as (the rows whose usage counted the prompt, their cached
        tokens): ``stats.cached.usage_rows``."""
        turn = np.asarray(turn, dtype=np.int64)
        if turn.size and (turn.min() < 1 or turn.max() > self.turns):
            raise ResultsError(f"a stream row of turn {int(turn.max())} in sessions of "
                               f"{self.turns} turns (a bug in the request loop)")  # fmt: skip
        ttft_us, has = ttft
        for k in np.unique(turn).tolist():
            rows = turn == k
            c = self.counts[k - 1]
            c["requests"] += int(np.count_nonzero(rows))
            c["completed"] += int(np.count_nonzero(rows & completed))
            known = rows & (prompt_tokens >= 0)
            c["input_tokens"] += int(prompt_tokens[known].sum())
            c["input_counted"] += int(np.count_nonzero(known))
            c["output_tokens"] += int(output_tokens[rows].sum())
            counted = rows & cached[0]
            c["cached_tokens"] += int(cached[1][counted].sum())
            c["cached_prompt"] += int(prompt_tokens[counted].sum())
            self.hists[k - 1]["ttft"].record_many(ttft_us[rows & has])
            self.hists[k - 1]["e2e"].record_many(e2e_us[rows])

    def merge(self, other: TurnStats) -> None:
        if other.turns != self.turns:
            raise ResultsError(
                f"cannot merge sessions of {self.turns} and {other.turns} turns; merge one run's"
            )
        for mine, theirs in zip(self.counts, other.counts, strict=True):
            for k in _COUNTS:
                mine[k] += theirs[k]
        for mine, theirs in zip(self.hists, other.hists, strict=True):
            for m in METRICS:
                mine[m].merge(theirs[m])

    def to_dict(self) -> dict:
        return {
            "turns": self.turns,
            "counts": self.counts,
            "histogram": [{m: h[m].encode() for m in METRICS} for h in self.hists],
            "out_of_range": [{m: h[m].out_of_range for m in METRICS} for h in self.hists],
        }

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> TurnStats:
        try:
            turns = int(doc["turns"])
            counts = [{k: int(c.get(k, 0) if k in _CACHED else c[k]) for k in _COUNTS}
                      for c in doc["counts"]]  # fmt: skip
            lost = doc["out_of_range"]
            hists = [
                {m: Histogram.decode(h[m], int(lost[i][m])) for m in METRICS}
                for i, h in enumerate(doc["histogram"])
            ]
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ResultsError(f"{source}: malformed per-turn figures ({exc!r})") from None
        if len(counts) != turns or len(hists) != turns:
            raise ResultsError(f"{source}: per-turn figures for {len(counts)} of {turns} turns")
        return cls(turns, counts, hists)

    def summary(self, cached_known: bool = False) -> list[dict]:
        """One dict per turn: turn, requests, completed, failed, input_tokens_mean (None when
        no row had a count), output_tokens, cached_hit_rate (the usage's cached tokens over its
        prompt tokens; None unless ``cached_known``, the server said them in the run), and per
        metric count, p50 and p99 in ms (None when no sample)."""
        out = []
        for i, (c, h) in enumerate(zip(self.counts, self.hists, strict=True)):
            row = {"turn": i + 1, "requests": c["requests"], "completed": c["completed"]}
            row["failed"] = c["requests"] - c["completed"]
            n = c["input_counted"]
            row["input_tokens_mean"] = c["input_tokens"] / n if n else None
            row["output_tokens"] = c["output_tokens"]
            row["cached_hit_rate"] = hit_rate(c["cached_tokens"], c["cached_prompt"], cached_known)
            for m in METRICS:
                p = h[m].percentiles_us((50.0, 99.0)) if h[m].count else None
                row[m] = {"count": h[m].count, "p50": p and p[50.0] / 1000,
                          "p99": p and p[99.0] / 1000}  # fmt: skip
            out.append(row)
        return out
