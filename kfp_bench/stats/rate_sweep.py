"""A sweep, one load per level, and its saved document: a rate sweep (``kfp-bench sweep``) or an
LLM sweep (``kfp-bench llm --sweep-rates`` or ``--sweep-concurrency``).

Both documents hold their rows, their knee and every step's load result, so that ``kfp-bench
report`` prints each step as the single load would. A rate sweep's keeps summary.json's two keys
(``sweep``: the rows, ``sweep_knee``: the knee) at its top, as the file had them before, then its
format, kind and ``steps`` (``LoadStats.to_dict`` each; ``load.sweep.SweepResult.to_dict`` writes
it). An LLM sweep's (``kind: "llm-sweep"``) holds ``by``, ``rows``, ``knee`` and ``steps``
(``LlmStats.to_dict`` each). ``find_llm_knee`` names an LLM sweep's knee with the predict
sweep's function (``stats.knee``): the first level whose TTFT p99 exceeds ``factor`` times the
first level's, or whose completed (or, with an SLO, good) share falls below ``min_good``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kfp_bench.errors import ResultsError
from kfp_bench.outcome import failures, step_warnings
from kfp_bench.stats import document
from kfp_bench.stats import knee as kn
from kfp_bench.stats.knee import KNEE_FACTOR
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.load import LoadStats

FORMAT = "kfp-bench/sweep"
KIND = "sweep"
LLM_FORMAT = "kfp-bench/llm-sweep"
LLM_KIND = "llm-sweep"
FORMAT_VERSION = 1


def document_of(rows: list[dict], knee: dict, steps: list[LoadStats]) -> dict:
    """The saved rate sweep: summary.json's keys, then what it is and each step's load result."""
    return {
        "sweep": rows,
        "sweep_knee": knee,
        "format": FORMAT,
        "kind": KIND,
        "format_version": FORMAT_VERSION,
        "steps": [st.to_dict() for st in steps],
    }


class _Steps:
    """What both sweeps share: their steps' flags, and the steps read back."""

    steps: list

    @property
    def flags(self) -> list[str]:
        return sorted({f for st in self.steps for f in st.flags})

    @staticmethod
    def read(doc: dict, source: str, stats_type, build, *, what: str, **check):
        """``build(steps)`` of a saved sweep, its steps read as ``stats_type``; checked as
        ``document.check`` does, a ``ResultsError`` naming ``what`` when malformed."""
        document.check(doc, source, version=FORMAT_VERSION, what=what, **check)
        try:
            steps = [
                stats_type.from_dict(d, f"{source} step {i}") for i, d in enumerate(doc["steps"])
            ]
            return build(steps)
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(f"{source}: malformed {what} ({exc!r})") from None


@dataclass
class RateSweep(_Steps):
    """A saved rate sweep read back: ``rows`` and ``knee`` as summary.json has them, and each
    step's ``LoadStats`` (one per row, in order)."""

    rows: list[dict]
    knee: dict
    steps: list[LoadStats]

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> RateSweep:
        sweep = cls.read(
            doc, source, LoadStats,
            lambda steps: cls(list(doc["sweep"]), dict(doc["sweep_knee"]), steps),
            what="rate sweep", fmt=FORMAT, kind=KIND, written_by="kfp-bench sweep --json-out",
        )  # fmt: skip
        if len(sweep.steps) != len(sweep.rows):
            raise ResultsError(
                f"{source}: malformed rate sweep ({len(sweep.rows)} rows, {len(sweep.steps)} steps)"
            )
        return sweep


#: A step whose completed (or good, under an SLO) share is below this is past the knee.
KNEE_MIN_GOOD = 0.9
#: The reason's words: "TTFT p99 ... ms > 3x the first step's ... ms", "good 83.3% < 90%".
WORDS = kn.Words(
    latency="TTFT p99", baseline="the first step's", ratio="good", decimals=1, floor_of=" good",
    names=("level", "baseline_ttft_p99_ms", "min_good"),
)  # fmt: skip
#: The row of a step: the figures of goodput against load.
ROW_KEYS = (
    "level", "rps", "output_tokens_per_s", "ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms",
    "itl_p99_ms", "tpot_p50_ms", "e2e_p99_ms", "goodput_rps", "good_ratio", "failed",
)  # fmt: skip


def row(level: float, stats: LlmStats) -> dict:
    """One step's figures (``ROW_KEYS``); the latencies from the intended send in open loop;
    its ``failures`` and ``warnings`` (``outcome.step_warnings``) when it has some."""
    s = stats.summary()
    lat = s.latency_ms
    ttft = lat["ttft_intended" if s.corrected else "ttft"]
    e2e = lat["e2e_intended" if s.corrected else "e2e"]
    out = {
        "level": level,
        "rps": round(s.rps, 3),
        "output_tokens_per_s": (
            None if s.output_tokens_per_s is None else round(s.output_tokens_per_s, 1)
        ),  # None: unknown (no usage, no tokenizer)
        "ttft_p50_ms": ttft["p50"],
        "ttft_p99_ms": ttft["p99"],
        "itl_p50_ms": lat["itl"]["p50"],
        "itl_p99_ms": lat["itl"]["p99"],
        "tpot_p50_ms": lat["tpot"]["p50"],
        "e2e_p99_ms": e2e["p99"],
        "goodput_rps": round(s.goodput_rps, 3),
        "good_ratio": round(s.good_ratio, 4),
        "failed": s.failed,
    }
    fails = [f for f in failures(stats.flags) if f != "interrupted"]
    if fails:
        out["failures"] = fails
    if warned := step_warnings(stats.flags):
        out["warnings"] = warned
    return out


@dataclass
class LlmSweep(_Steps):
    """Every step of an LLM sweep: ``by`` "rate" or "concurrency", the levels, each step's
    stats, and the knee."""

    by: str
    levels: list
    steps: list
    knee: kn.Knee
    #: ``--find-max``'s search (``load.llm_find``): the boundary and every probe; None: a sweep.
    search: dict | None = None
    #: ``--repeat K`` of one level: each headline figure's 95% interval (``stats.confidence``).
    repeats: dict | None = None

    def rows(self) -> list[dict]:
        return [{**row(lv, st), "knee": lv == self.knee.level} for lv, st in self.zipped()]

    def zipped(self):
        return zip(self.levels, self.steps, strict=True)

    def sustained(self) -> tuple[float, LlmStats]:
        """The highest level before the knee (the first step when the first is past it)."""
        before = [
            (lv, st) for lv, st in self.zipped() if self.knee.level is None or lv < self.knee.level
        ]
        return before[-1] if before else (self.levels[0], self.steps[0])

    def reported(self) -> tuple[float, LlmStats]:
        """The step whose figures a report gives: a search's last passing probe (its lowest
        when none passed), else ``sustained``."""
        if self.search is None:
            return self.sustained()
        at = self.search["passing"]
        return (at, self.steps[self.levels.index(at)]) if at is not None else next(self.zipped())

    def to_dict(self) -> dict:
        return {
            "format": LLM_FORMAT,
            "kind": LLM_KIND,
            "format_version": FORMAT_VERSION,
            "by": self.by,
            "rows": self.rows(),
            "knee": self.knee.as_dict(),
            "steps": [st.to_dict() for st in self.steps],
            **({"search": self.search} if self.search is not None else {}),
            **({"repeats": self.repeats} if self.repeats is not None else {}),
        }

    @classmethod
    def from_dict(cls, doc: dict, source: str = "results") -> LlmSweep:
        def build(steps: list) -> LlmSweep:
            k = doc["knee"]
            level, base, floor = WORDS.names
            knee = kn.Knee(k[level], k["reason"], k[base], k["factor"], k[floor], WORDS.names)
            levels = [r["level"] for r in doc["rows"]]
            return cls(str(doc["by"]), levels, steps, knee, doc.get("search"), doc.get("repeats"))

        return cls.read(
            doc, source, LlmStats, build, what="LLM sweep", fmt=LLM_FORMAT, kind=LLM_KIND,
            written_by="kfp-bench llm --sweep-rates or --sweep-concurrency with --json-out",
        )  # fmt: skip


def find_llm_knee(
    levels: Sequence[float],
    steps: Sequence[LlmStats],
    factor: float = KNEE_FACTOR,
    min_good: float = KNEE_MIN_GOOD,
) -> kn.Knee:
    """The first level whose TTFT p99 exceeds ``factor`` x the first level's, or whose good
    share (completed, or within the SLO when one is given) is below ``min_good``. A step in which
    no request got a response (no status, no token) is left out, as in the predict sweep."""
    points = [_point(lv, st) for lv, st in zip(levels, steps, strict=True)]
    return kn.find_knee(points, factor, min_good, WORDS)


def _point(level: float, stats: LlmStats) -> kn.Point:
    r = row(level, stats)
    s = stats.summary()
    ttft = s.latency_ms["ttft_intended" if s.corrected else "ttft"]
    answered = bool(s.status_codes) or s.completed > 0
    latency = r["ttft_p99_ms"] if ttft["count"] else None
    return kn.Point(level, latency, r["good_ratio"], answered)
