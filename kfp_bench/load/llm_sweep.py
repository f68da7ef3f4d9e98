"""The LLM sweep's run: one ``load.llm.run_llm`` step per rate (open loop) or concurrency
(closed loop), for ``step_s`` seconds each, through the predict sweep's driver
(``load.sweep.step_through``); the steps and the knee are ``stats.rate_sweep``'s.
The module never prints; ``on_step`` hears each step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from kfp_bench.errors import ConfigError
from kfp_bench.load.llm import run_llm
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.options import check_rates
from kfp_bench.load.sweep import check_step_s, step_through
from kfp_bench.stats import confidence
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.rate_sweep import KNEE_FACTOR, KNEE_MIN_GOOD, LlmSweep, find_llm_knee
from kfp_bench.stats.slo import Slo


def run_llm_sweep(
    base: LlmOptions,
    prompts: list,
    *,
    rates: Sequence[float] = (),
    concurrencies: Sequence[int] = (),
    step_s: float,
    slo: Slo | None = None,
    warmup_s: float = 0.0,
    factor: float = KNEE_FACTOR,
    min_good: float = KNEE_MIN_GOOD,
    on_step: Callable[[float, LlmStats], None] | None = None,
) -> LlmSweep:
    """Run one step of ``step_s`` seconds per rate (open loop) or per concurrency (closed
    loop), each with its own warm-up; return the steps and the knee.

    Raises:
        ConfigError: bad levels, step length or knee settings, before anything is sent.
        EngineError: a bug in the engine ended a step; its ``partial`` holds the steps before.
    """
    plans = check_llm_sweep(
        base, rates=rates, concurrencies=concurrencies, step_s=step_s, warmup_s=warmup_s,
        factor=factor, min_good=min_good,
    )  # fmt: skip
    by = "rate" if rates else "concurrency"
    labelled = [(f"{by} {level:g}", opts) for level, opts in plans]
    return _stepped(by, labelled, prompts, slo, warmup_s, on_step, (factor, min_good))


def run_llm_repeats(
    opts: LlmOptions,
    prompts: list,
    repeat: int,
    *,
    slo: Slo | None = None,
    warmup_s: float = 0.0,
    on_step: Callable[[float, LlmStats], None] | None = None,
) -> LlmSweep:
    """Run the one load ``opts`` ``repeat`` times, one after the other; return the runs as an
    ``LlmSweep`` at one level with ``repeats``: each headline figure's 95% interval over them.

    Raises:
        ConfigError: ``repeat`` below 2, before anything is sent.
    """
    if repeat < 2:
        raise ConfigError(f"--repeat {repeat}: give 2 runs or more (an interval needs a spread)")
    by = "rate" if opts.rate else "concurrency"

    def with_intervals(sweep: LlmSweep) -> LlmSweep:
        rows = sweep.rows()
        sweep.repeats = {
            "runs": len(rows),
            "confidence": 0.95,
            "method": "Student t over the runs' values",
            "intervals": confidence.intervals(rows),
        }
        return sweep

    plans = [(f"run {n + 1}", opts) for n in range(repeat)]
    return _stepped(by, plans, prompts, slo, warmup_s, on_step, finish=with_intervals)


def _stepped(by, plans, prompts, slo, warmup_s, on_step, knee=(), finish=None) -> LlmSweep:
    """``plans`` ((label, options)) run one after the other (``step_through``): an ``LlmSweep``
    by ``by``, each step at its options' rate or streams, its knee found with ``knee`` (factor,
    min_good); ``finish`` adds to the sweep, to a partial one too."""
    levels, steps = [], []

    def keep(opts: LlmOptions, stats: LlmStats) -> None:
        levels.append(opts.rate if by == "rate" else float(opts.concurrency))
        steps.append(stats)
        if on_step is not None:
            on_step(levels[-1], stats)

    def result() -> LlmSweep:
        sweep = LlmSweep(by, levels, steps, find_llm_knee(levels, steps, *knee))
        return finish(sweep) if finish else sweep

    step_through(plans, lambda o: run_llm(o, prompts, slo=slo, warmup_s=warmup_s), keep, result)
    return result()


def check_llm_sweep(
    base: LlmOptions,
    *,
    rates: Sequence[float] = (),
    concurrencies: Sequence[int] = (),
    step_s: float,
    warmup_s: float = 0.0,
    factor: float = KNEE_FACTOR,
    min_good: float = KNEE_MIN_GOOD,
) -> list:
    """``run_llm_sweep``'s checks (``ConfigError``), and its (level, options) steps: a caller
    that reads the server (``load.models.preflight``) runs them first, once its own input is
    known good."""
    if bool(rates) == bool(concurrencies):
        raise ConfigError(
            "sweep: give one of --sweep-rates (open loop) and --sweep-concurrency (closed loop)"
        )
    check_step_s(step_s)
    if not 0 <= warmup_s < step_s:
        raise ConfigError(f"--warmup {warmup_s:g}s: give less than each step's -z ({step_s:g}s)")
    if not factor > 1:
        raise ConfigError(f"--knee-factor {factor}: give a TTFT p99 multiple above 1, e.g. 3")
    if not 0 < min_good <= 1:
        raise ConfigError(f"--knee-good {min_good}: give a ratio in (0, 1], e.g. 0.9")
    if rates:
        check_rates(rates, "--sweep-rates")
    else:
        _check_concurrencies(concurrencies)
    by = "rate" if rates else "concurrency"
    return [(float(v), at_level(base, by, v, step_s).validate()) for v in rates or concurrencies]


def at_level(base: LlmOptions, by: str, level: float, step_s: float) -> LlmOptions:
    """``base`` held at ``level`` for ``step_s`` seconds: a rate (open loop), or a number of
    streams (closed loop)."""
    if by == "rate":
        return replace(base, rate=float(level), duration=step_s, qps=0.0)
    return replace(base, concurrency=int(level), rate=0.0, duration=step_s)


def parse_concurrencies(text: str, flag: str = "--sweep-concurrency") -> tuple[int, ...]:
    """Stream counts from ``"1,4,16"``: whole, positive, increasing."""
    try:
        levels = tuple(int(p) for p in str(text).split(",") if p.strip())
    except ValueError:
        raise ConfigError(
            f"{flag} {text!r}: not a list of whole numbers; give stream counts, e.g. 1,4,16"
        ) from None
    _check_concurrencies(levels, flag)
    return levels


def _check_concurrencies(levels: Sequence[int], flag: str = "--sweep-concurrency") -> None:
    shown = ",".join(str(c) for c in levels)
    if not levels or any(c < 1 for c in levels):
        raise ConfigError(f"{flag} {shown!r}: give stream counts of 1 or more, e.g. 1,4,16")
    if any(b <= a for a, b in zip(levels, levels[1:], strict=False)):
        raise ConfigError(
            f"{flag} {shown}: give them in increasing order (the first is the knee's baseline)"
        )
