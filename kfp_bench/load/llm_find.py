"""``kfp-bench llm --find-max``: the highest rate or concurrency at which the SLO holds for the
required share of requests, found by a bounded search of ``run_llm`` probes of ``step_s`` each.

The search brackets by doubling from ``start`` (or halving, when ``start`` already fails), then
bisects the bracket until its ends are within ``precision`` of each other. A probe passes when its
good share (completed within every ``--slo`` bound) is at least ``share``. Rate is bisected at the
geometric mean: the target is a relative width (``precision``), and the bracket a doubling left is
[L, 2L], so each halving of its log width costs one probe, wherever the boundary sits; concurrency
at the integer midpoint, until the two ends are adjacent. A model of good share against load (regula
falsi, a fitted curve) would save a probe or two, but good share is flat at 1 below capacity and
falls steeply past it, so an interpolation would mostly guess; bisection's worst case is known in
advance. The result is the last passing and first failing level, never one figure: the boundary lies
between them. The module never prints; ``on_probe`` hears each probe.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from kfp_bench.errors import ConfigError
from kfp_bench.load.llm import run_llm
from kfp_bench.load.llm_sweep import at_level
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.sweep import check_step_s
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.rate_sweep import KNEE_FACTOR, KNEE_MIN_GOOD, LlmSweep, find_llm_knee
from kfp_bench.stats.slo import Slo

AXES = ("rate", "concurrency")
#: The good share a level needs by default: as the sweep's knee (``stats.rate_sweep``).
SHARE = KNEE_MIN_GOOD
PRECISION = 0.05
#: The most probes one search runs, so that it is bounded whatever the server does.
MAX_PROBES = 24
#: How far below ``start`` a failing start is halved (rate: start / 2**HALVINGS).
HALVINGS = 6
LIMITS = {"rate": 10_000.0, "concurrency": 4096}


def check_find(
    by: str, slo: Slo, *, step_s: float, warmup_s: float, share: float, start: float,
    limit: float, precision: float,
) -> None:  # fmt: skip
    """Refuse a search that cannot mean anything (``ConfigError`` naming the flag), before any
    request is sent."""
    if by not in AXES:
        raise ConfigError(f"--find-max {by!r}: give rate or concurrency")
    if not slo.as_dict():
        raise ConfigError(
            "--find-max needs --slo, the bounds a good request meets, e.g. --slo ttft=500ms"
        )
    if not step_s:
        raise ConfigError("--find-max needs -z, the length of each probe (e.g. -z 30s)")
    check_step_s(step_s)
    if not 0 <= warmup_s < step_s:
        raise ConfigError(f"--warmup {warmup_s:g}s: give less than each probe's -z ({step_s:g}s)")
    if not 0 < share <= 1:
        raise ConfigError(f"--slo-share {share:g}: give a share in (0, 1], e.g. 0.9")
    if not 0 < precision < 1:
        raise ConfigError(f"--find-precision {precision:g}: give a relative width in (0, 1)")
    whole = by == "concurrency"
    if not start > 0 or (whole and start != int(start)):
        kind = "a whole number of streams" if whole else "a rate above 0"
        raise ConfigError(f"--find-start {start:g}: give {kind}, e.g. 1")
    if not limit > start or (whole and limit != int(limit)):
        raise ConfigError(
            f"--find-limit {limit:g}: give a level above --find-start {start:g}, or the search "
            "can never find a boundary"
        )


def find_max(
    base: LlmOptions,
    prompts: list,
    *,
    by: str,
    slo: Slo,
    step_s: float,
    warmup_s: float = 0.0,
    share: float = SHARE,
    start: float = 1.0,
    limit: float | None = None,
    precision: float = PRECISION,
    on_probe: Callable[[float, LlmStats, bool], None] | None = None,
) -> LlmSweep:
    """Search for the highest level of ``by`` whose probe's good share is at least ``share``;
    return every probe as an ``LlmSweep`` (by level) with its ``search``: the last passing and
    first failing level and the probes in the order they ran.

    Raises:
        ConfigError: a search that cannot mean anything (``check_find``), before any request.
    """
    limit = LIMITS[by] if limit is None else limit
    check_find(
        by, slo, step_s=step_s, warmup_s=warmup_s, share=share, start=start, limit=limit,
        precision=precision,
    )  # fmt: skip
    whole = by == "concurrency"
    probes: list[tuple[float, LlmStats, bool]] = []

    def probe(level: float) -> bool:
        opts = at_level(base, by, level, step_s).validate()
        stats = run_llm(opts, prompts, slo=slo, warmup_s=warmup_s)
        passed = stats.summary().completed > 0 and stats.summary().good_ratio >= share
        probes.append((float(level), stats, passed))
        if on_probe is not None:
            on_probe(float(level), stats, passed)
        return passed

    passing, failing, reason = _search(probe, start, limit, precision, whole, lambda: len(probes))
    ordered = sorted(range(len(probes)), key=lambda i: probes[i][0])
    levels = [probes[i][0] for i in ordered]
    steps = [probes[i][1] for i in ordered]
    search = {
        "by": by,
        "slo": str(slo),
        "share": share,
        "precision": precision,
        "probe_s": step_s,
        "warmup_s": warmup_s,
        "passing": passing,
        "failing": failing,
        "reason": reason,
        "probes": [
            {
                "probe": n + 1,
                "level": lv,
                "good_ratio": round(st.summary().good_ratio, 4),
                "passed": ok,
            }
            for n, (lv, st, ok) in enumerate(probes)
        ],  # fmt: skip
    }
    knee = find_llm_knee(levels, steps, KNEE_FACTOR, KNEE_MIN_GOOD)
    return LlmSweep(by, levels, steps, knee, search)


def _search(probe, start, limit, precision, whole, count) -> tuple:
    """(last passing level or None, first failing level or None, why the search stopped)."""
    passing = failing = None
    level = start
    if probe(level):
        passing = level
        while failing is None:
            if passing >= limit:
                return passing, None, f"the SLO holds up to --find-limit {limit:g}"
            if count() >= MAX_PROBES:
                return passing, None, f"stopped after {MAX_PROBES} probes"
            level = min(passing * 2, limit)
            if probe(level):
                passing = level
            else:
                failing = level
    else:
        failing = level
        floor = 1 if whole else start / 2**HALVINGS
        while passing is None:
            level = max(math.ceil(failing / 2) if whole else failing / 2, floor)
            if level >= failing or count() >= MAX_PROBES:
                return None, failing, f"the SLO fails at the lowest level tried, {failing:g}"
            if probe(level):
                passing = level
            else:
                failing = level
    while count() < MAX_PROBES:
        if (whole and failing - passing <= 1) or failing <= passing * (1 + precision):
            break
        mid = (passing + failing) // 2 if whole else math.sqrt(passing * failing)
        if probe(mid):
            passing = mid
        else:
            failing = mid
    width = failing / passing - 1
    return passing, failing, f"bracketed within {width:.1%} ({count()} probes)"
