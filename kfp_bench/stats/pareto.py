"""The trade an LLM sweep shows: what one user gets (output tokens/s per stream, 1000 / TPOT p50)
against what the server serves (output tokens/s in all, per replica, per GPU, per unit of
price), and the levels on the Pareto front, those that no other level beats on both.

A level is dominated when another is at least as good on both axes and better on one; every
level not dominated is on the front. A level with either figure unknown (no completed request,
no token counts) is on no front and dominates nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from kfp_bench.stats.cost import KEY

#: The options keys a sweep's steps save the serving side's size under (``--replicas``,
#: ``--gpus``); the price is ``stats.cost.KEY``.
REPLICAS, GPUS = "replicas", "gpus"
#: The server side's axes, the first one every sweep compared gives first: (point key, label).
AXES = (
    ("per_gpu", "output tok/s per GPU"),
    ("per_replica", "output tok/s per replica"),
    ("tokens_per_price", "output tokens per unit of price"),
    ("output_tokens_per_s", "output tok/s in all"),
)
#: Each axis in a title: "Per user against ...".
SHORT = {
    "per_gpu": "per GPU", "per_replica": "per replica", "tokens_per_price": "per unit of price",
    "output_tokens_per_s": "in all",
}  # fmt: skip
PER_USER = "output tok/s per user (1000 / TPOT p50)"


@dataclass(frozen=True)
class Scale:
    """What served a sweep: its replicas and GPUs (0: not given) and price per hour (0: none)."""

    replicas: int = 0
    gpus: int = 0
    per_hour: float = 0.0

    @classmethod
    def of(cls, options: dict) -> Scale:
        """The scale a step's saved options carry (``--replicas``, ``--gpus``, the price)."""
        return cls(options.get(REPLICAS) or 0, options.get(GPUS) or 0, options.get(KEY) or 0.0)

    def divisors(self) -> dict[str, float]:
        """Each axis given, and the number output tokens/s is divided by for it."""
        out = {"per_gpu": self.gpus, "per_replica": self.replicas}
        out["tokens_per_price"] = self.per_hour / 3600.0  # tokens/s per (price/s): per unit
        out["output_tokens_per_s"] = 1
        return {k: v for k, v in out.items() if v}


#: No replicas, GPUs or price given.
UNSCALED = Scale()


def axis(*scales: Scale) -> tuple[str, str]:
    """The server side's axis of a front over sweeps of these scales: per GPU when all gave
    GPUs, else per replica, else per unit of price, else in all (``AXES``)."""
    given = set.intersection(*(set(s.divisors()) for s in scales)) if scales else set()
    return next((k, label) for k, label in AXES if k in given or k == "output_tokens_per_s")


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


def points(rows: Sequence[dict], scale: Scale = UNSCALED) -> list[dict]:
    """A sweep's rows (``stats.rate_sweep.row``) as Pareto points: ``level``, ``per_user``, and
    output tokens/s ``output_tokens_per_s``, ``per_replica``, ``per_gpu`` and
    ``tokens_per_price`` (output tokens per unit of price), each None when unknown or its
    divisor not given."""
    out = []
    for r in rows:
        total = r.get("output_tokens_per_s")
        known = isinstance(total, int | float)
        p = {"level": r["level"], "per_user": per_user(r)}
        for key, _ in AXES:
            div = scale.divisors().get(key)
            p[key] = total / div if known and div else None
        out.append(p)
    return out


def fronts(sweeps: dict[str, tuple[Sequence[dict], Scale]]) -> tuple[str, str, list[dict]]:
    """Sweeps by name (their rows and scale) on one axis (``axis`` of their scales): that axis's
    key and label, and every level as a point with ``sweep``, ``own`` (on its sweep's front)
    and ``front`` (on the front over all of them)."""
    y, label = axis(*(scale for _, scale in sweeps.values()))
    out = []
    for name, (rows, scale) in sweeps.items():
        mine = points(rows, scale)
        own = front([(p["per_user"], p[y]) for p in mine])
        out += [{**p, "sweep": name, "own": on} for p, on in zip(mine, own, strict=True)]
    joint = front([(p["per_user"], p[y]) for p in out])
    return y, label, [{**p, "front": on} for p, on in zip(out, joint, strict=True)]
