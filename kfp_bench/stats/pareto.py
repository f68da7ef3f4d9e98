"""The trade an LLM sweep shows: what one user gets (output tokens/s per stream, 1000 / TPOT p50)
against what the server serves (output tokens/s in all, and per unit of price when the sweep was
priced), and the levels on the Pareto front, those that no other level beats on both.

A level is dominated when another is at least as good on both axes and better on one; every
level not dominated is on the front. A level with either figure unknown (no completed request,
no token counts) is on no front and dominates nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def per_user(row: dict) -> float | None:
    """Output tokens/s one stream sees while it decodes: 1000 / TPOT p50 (ms); None unknown."""
    tpot = row.get("tpot_p50_ms")
    return 1000.0 / tpot if isinstance(tpot, int | float) and tpot > 0 else None


def front(points: Sequence[tuple[float | None, float | None]]) -> list[bool]:
    """For each (x, y) point, both to be maximised: whether it is on the Pareto front."""

    def known(p) -> bool:
        return all(isinstance(v, int | float) and math.isfinite(v) for v in p)

    def beats(a, b) -> bool:
        return a[0] >= b[0] and a[1] >= b[1] and (a[0] > b[0] or a[1] > b[1])

    return [known(p) and not any(known(q) and beats(q, p) for q in points) for p in points]


def pareto_rows(rows: Sequence[dict], per_hour: float = 0.0) -> list[dict]:
    """A sweep's rows (``stats.rate_sweep.row``) as Pareto points: ``level``, ``per_user``,
    ``output_tokens_per_s``, ``tokens_per_price`` (output tokens per unit of ``per_hour``, None
    without a price) and ``front``."""
    out = []
    for r in rows:
        total = r.get("output_tokens_per_s")
        priced = per_hour > 0 and isinstance(total, int | float)
        out.append({
            "level": r["level"], "per_user": per_user(r), "output_tokens_per_s": total,
            "tokens_per_price": total * 3600.0 / per_hour if priced else None,
        })  # fmt: skip
    marks = front([(p["per_user"], p["output_tokens_per_s"]) for p in out])
    return [{**p, "front": on} for p, on in zip(out, marks, strict=True)]
