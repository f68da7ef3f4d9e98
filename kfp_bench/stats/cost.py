"""Cost of serving a load: the serving capacity's price per hour (``cost_per_hour``, in the
user's currency) spread over what the load got served in its measured window.

The window is the load's own: the predict load's duration, the LLM load's measured time (its
duration less the warm-up), so the capacity is paid for the time the load took at the throughput
it achieved. Cost per thousand requests divides by the successful requests (predict: a 1xx-3xx
response; LLM: a completed stream), cost per million output tokens by the output tokens served
in the window. A count that is unknown (LLM tokens without usage or a tokenizer) or zero gives
an unknown cost (None), never 0 or a division by zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: Where a result keeps the price it was given: LoadStats/LlmStats ``options``, summary.json.
KEY = "cost_per_hour"


FIX = "give the serving nodes' or GPUs' price per hour, a number >= 0 (e.g. 2.5; 0: none)"


def priced(stats, given):
    """``stats`` (a load or LLM result) with the price of ``given`` (``--cost-per-hour``, or the
    pipeline's parameter: its ``cost_per_hour``) in its options, saved with it and read by the
    reports; ``stats`` unchanged without one."""
    if stats is not None and getattr(given, KEY, 0):
        stats.options[KEY] = getattr(given, KEY)
    return stats


def is_price(value) -> bool:
    """0 (no price) or a positive finite number."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return ok and math.isfinite(value) and value >= 0


@dataclass(frozen=True, slots=True)
class Cost:
    """The price of ``window_s`` seconds of serving at ``per_hour``, and what it bought: the
    successful ``requests`` and the ``output_tokens`` (None: unknown, or not an LLM load)."""

    per_hour: float
    window_s: float
    requests: int
    output_tokens: int | None = None

    @property
    def total(self) -> float:
        """The cost of the window."""
        return self.per_hour * self.window_s / 3600.0

    @property
    def per_thousand_requests(self) -> float | None:
        return 1000.0 * self.total / self.requests if self.requests > 0 else None

    @property
    def per_million_output_tokens(self) -> float | None:
        if not self.output_tokens:  # None (unknown) or 0 (nothing served): no price per token
            return None
        return 1e6 * self.total / self.output_tokens


def of_llm(summary, per_hour) -> Cost | None:
    """The cost of an LLM load (an ``LlmSummary``): its measured window, its completed streams
    and its output tokens (None when unknown); None without a price."""
    if not per_hour:
        return None
    return Cost(float(per_hour), summary.measured_s, summary.completed, summary.output_tokens)


def of_load(requests: int, errors: int, duration_s: float, per_hour) -> Cost | None:
    """The cost of a predict load of ``requests``, ``errors`` of them failed, over
    ``duration_s``; None without a price."""
    if not per_hour:
        return None
    return Cost(float(per_hour), duration_s, max(requests - errors, 0))


def llm_metrics(cost: Cost | None) -> dict[str, float | None]:
    """``cost_per_million_output_tokens`` (None when the tokens are unknown: null in
    metrics.json, as the token rates) and ``cost_per_thousand_requests``; none without a cost."""
    if cost is None:
        return {}
    return {
        "cost_per_million_output_tokens": cost.per_million_output_tokens,
        "cost_per_thousand_requests": cost.per_thousand_requests,
    }


def load_metrics(cost: Cost | None) -> dict[str, float]:
    """``load_cost_per_thousand_requests`` when known (metrics.py leaves unknowns out)."""
    if cost is None or cost.per_thousand_requests is None:
        return {}
    return {"load_cost_per_thousand_requests": cost.per_thousand_requests}
