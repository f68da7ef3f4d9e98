"""The saturation knee of a sweep, for the predict load and the LLM load alike.

A point that got no response at all is neither the knee nor its baseline: a closed port is not
a saturated server. What a point's figures are is the caller's (``load.sweep``: p99 and success;
``stats.rate_sweep``: TTFT p99 and good share); ``Words`` names them in the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kfp_bench.figures import HDR_MS, fixed, pct

#: The latency multiple over the first step's past which a step is past the knee.
KNEE_FACTOR = 3.0


@dataclass(frozen=True, slots=True)
class Point:
    """One step of a sweep as the knee sees it: its rate or concurrency, the latency compared
    with the first step's (None: not measured), the share of requests served (success, or
    good), and whether any request got a response."""

    level: float
    latency_ms: float | None
    ratio: float
    answered: bool = True


@dataclass(frozen=True, slots=True)
class Words:
    """How a reason names the figures: ``latency`` ("p99"), the ``baseline`` it is compared
    with, the ``ratio`` ("success") and its decimals, and what follows the ratio's floor in the
    reason of no knee; ``names``: the saved keys of a knee's level, baseline and floor."""

    latency: str
    baseline: str
    ratio: str
    decimals: int
    floor_of: str = ""
    names: tuple = ("level", "baseline_ms", "min_ratio")


@dataclass(frozen=True, slots=True)
class Knee:
    """Where a sweep saturates: ``level`` the first step past the knee (None: none is),
    ``reason`` why (or why there is none), the baseline latency (0.0 when there is none), and
    the settings that placed it; ``names`` as ``Words.names``."""

    level: float | None
    reason: str
    baseline_ms: float
    factor: float
    min_ratio: float
    names: tuple = Words.names

    def as_dict(self) -> dict:
        level, baseline, floor = self.names
        return {
            level: self.level,
            "reason": self.reason,
            baseline: round(self.baseline_ms, 3),
            "factor": self.factor,
            floor: self.min_ratio,
        }


def find_knee(points: Sequence[Point], factor: float, min_ratio: float, words: Words) -> Knee:
    """The first point whose latency exceeds ``factor`` x the first answered point's, or whose
    ratio is below ``min_ratio``; the first is the baseline but is itself past the knee when its
    ratio is already too low. Points without a response are left out."""
    points = [p for p in points if p.answered]
    base = points[0].latency_ms if points else None

    def at(level: float | None, why: str) -> Knee:
        return Knee(level, why, base or 0.0, factor, min_ratio, words.names)

    if not points:
        return at(None, "no steps with a response")
    for p in points:
        if p.ratio < min_ratio:
            return at(p.level, f"{words.ratio} {pct(p.ratio, words.decimals)} < {min_ratio:.0%}")
        if p is points[0] or base is None or p.latency_ms is None:
            continue
        if p.latency_ms > factor * base:
            return at(
                p.level,
                f"{words.latency} {fixed(p.latency_ms, 1, HDR_MS)} ms > {factor:g}x "
                f"{words.baseline} {fixed(base, 1, HDR_MS)} ms",
            )
    return at(
        None, f"no step past {factor:g}x {words.latency} or under {min_ratio:.0%}{words.floor_of}"
    )
