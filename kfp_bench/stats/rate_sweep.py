"""A rate sweep saved whole (``kfp-bench sweep --json-out``): its rows, its knee and every step's
load result, so that ``kfp-bench report`` prints each step as ``kfp-bench load`` would.

The document keeps summary.json's two keys (``sweep``: the rows, ``sweep_knee``: the knee) at
its top, as the file had them before, and adds its format, kind and ``steps`` (each a load
result document, ``LoadStats.to_dict``). ``load.sweep.SweepResult.to_dict`` writes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kfp_bench.errors import ResultsError
from kfp_bench.stats import document
from kfp_bench.stats.load import LoadStats

FORMAT = "kfp-bench/sweep"
KIND = "sweep"
FORMAT_VERSION = 1


def document_of(rows: list[dict], knee: dict, steps: list[LoadStats]) -> dict:
    """The saved sweep: summary.json's keys, then what it is and each step's load result."""
    return {
        "sweep": rows,
        "sweep_knee": knee,
        "format": FORMAT,
        "kind": KIND,
        "format_version": FORMAT_VERSION,
        "steps": [st.to_dict() for st in steps],
    }


@dataclass
class RateSweep:
    """A saved rate sweep read back: ``rows`` and ``knee`` as summary.json has them, and each
    step's ``LoadStats`` (one per row, in order)."""

    rows: list[dict]
    knee: dict
    steps: list[LoadStats]

    @property
    def flags(self) -> list[str]:
        return sorted({f for st in self.steps for f in st.flags})

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> RateSweep:
        document.check(
            doc, source, fmt=FORMAT, kind=KIND, version=FORMAT_VERSION, what="rate sweep",
            written_by="kfp-bench sweep --json-out",
        )  # fmt: skip
        try:
            steps = [
                LoadStats.from_dict(d, f"{source} step {i}") for i, d in enumerate(doc["steps"])
            ]
            rows, knee = list(doc["sweep"]), dict(doc["sweep_knee"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(f"{source}: malformed rate sweep ({exc!r})") from None
        if len(steps) != len(rows):
            raise ResultsError(
                f"{source}: malformed rate sweep ({len(rows)} rows, {len(steps)} steps)"
            )
        return cls(rows, knee, steps)
