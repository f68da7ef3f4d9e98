"""Confidence intervals of a figure over repeated runs (``kfp-bench llm --repeat K``).

Student's t over the K runs' values: each run's figure (a percentile or rate over hundreds of
requests) is close to normal, the runs are independent, and K is small (3 to 10), where a
bootstrap has too few distinct resamples (10 for K = 3) to give an interval at all. Its
quantiles are tabled (two-sided 95%), so that no scipy is needed at run time.
"""

from __future__ import annotations

import math
import statistics

#: t(0.975, df) for df = 1..30 (Student's t, two-sided 95%); beyond 30, the normal's 1.96.
T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
#: The headline figures of an LLM run given an interval (a sweep row's keys, ``ROW_KEYS``).
HEADLINE = (
    "rps", "output_tokens_per_s", "ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms",
    "tpot_p50_ms", "e2e_p99_ms", "goodput_rps", "good_ratio",
)  # fmt: skip


def interval(values: list[float]) -> dict | None:
    """The mean of ``values`` and its 95% interval, ``{"mean", "low", "high", "n"}``; None for
    fewer than two values (no spread to measure)."""
    xs = [float(v) for v in values if v is not None]
    if len(xs) < 2:
        return None
    mean = statistics.fmean(xs)
    df = len(xs) - 1
    t = T975[df - 1] if df <= len(T975) else 1.96
    half = t * statistics.stdev(xs) / math.sqrt(len(xs))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": len(xs)}


def intervals(rows: list[dict], keys: tuple[str, ...] = HEADLINE) -> dict[str, dict | None]:
    """Each of ``keys``' interval over ``rows`` (one row per run of the same level)."""
    return {k: interval([r.get(k) for r in rows]) for k in keys}
