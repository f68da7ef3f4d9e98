"""The rate sweep: one open-loop step per rate, KServe's benchmark table, and the saturation knee.

KServe's own benchmark is a table of QPS against mean, p50, p95 and p99 latency and the success
rate. ``run_sweep`` builds it with the load engine: for each rate of ``rates`` it runs
``run_load`` open-loop for ``step_s`` seconds (latency from the intended send time, so a server
that falls behind shows it) and keeps one ``SweepStep``. ``find_knee`` then names the saturation
knee (``stats.knee``, shared with the LLM sweep): the first rate whose p99 exceeds ``k`` times
the low-load p99 (the first step's), or whose success ratio falls below ``min_success``. The
module never prints; ``on_step`` hears each step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from kfp_bench.errors import ConfigError, EngineError
from kfp_bench.load.options import LoadOptions, check_rates
from kfp_bench.load.workers import run_load
from kfp_bench.outcome import failures, step_warnings
from kfp_bench.stats import knee as kn
from kfp_bench.stats import rate_sweep
from kfp_bench.stats.knee import KNEE_FACTOR

#: The knee's floor of success: a step under 99% success is past it (p99: ``KNEE_FACTOR``).
KNEE_MIN_SUCCESS = 0.99
#: The reason's words: "p99 ... ms > 3x the low-load p99 ... ms", "success 98.00% < 99%".
WORDS = kn.Words(
    latency="p99", baseline="the low-load p99", ratio="success", decimals=2,
    names=("rate", "baseline_p99_ms", "min_success"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SweepStep:
    """One step of the sweep: a rate held for a while, and what it measured.

    The latencies (ms) are from the intended send time, over the responses: None when no
    request got one (``no_response`` counts those). ``rps`` counts the requests answered or
    failed per second; ``success_ratio`` those with a 1xx-3xx status. ``max_replicas``: the most
    ready replicas seen (None: not watched). ``failures`` and ``warnings``: the load's flags
    (``kfp_bench.outcome``; ``outcome.step_warnings``), in the row only when there are some.
    ``client_busiest``: the busiest load process's share of a core; at ``CPU_BOUND`` or more
    the rate may be the load generator's limit rather than the server's (None: not measured).
    """

    rate: float
    rps: float
    requests: int
    mean_ms: float | None
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    success_ratio: float
    started_at: float
    duration_s: float
    max_replicas: int | None = None
    interrupted: bool = False
    client_busiest: float | None = None
    failures: tuple[str, ...] = ()
    no_response: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def answered(self) -> bool:
        """Some request of the step got a response: its latency figures stand."""
        return self.p99_ms is not None

    def row(self, knee: bool = False) -> dict:
        """The step as a row of summary.json's ``sweep`` (max_replicas only when known)."""
        row = {
            "rate": self.rate,
            "rps": round(self.rps, 3),
            "requests": self.requests,
            **{k: _round(getattr(self, k)) for k in ("mean_ms", "p50_ms", "p95_ms", "p99_ms")},
            "success_ratio": round(self.success_ratio, 6),
            "no_response": self.no_response,
            "started_at": self.started_at,
            "duration_s": round(self.duration_s, 3),
        }
        if self.max_replicas is not None:
            row["max_replicas"] = self.max_replicas
        if self.client_busiest is not None:
            row["client_busiest"] = round(self.client_busiest, 3)
        if self.failures:
            row["failures"] = list(self.failures)
        if self.warnings:
            row["warnings"] = list(self.warnings)
        row["knee"] = knee
        return row


def _round(ms: float | None) -> float | None:
    return None if ms is None else round(ms, 3)


@dataclass(frozen=True, slots=True)
class SweepResult:
    """Every step of a sweep and its knee; ``loads`` each step's load stats, in order (empty for
    a result made of rows only)."""

    steps: tuple[SweepStep, ...]
    knee: kn.Knee
    loads: tuple = ()

    def rows(self) -> list[dict]:
        """summary.json's ``sweep`` rows, the knee's step flagged ``knee: true``."""
        return [s.row(knee=s.rate == self.knee.level) for s in self.steps]

    def as_dict(self) -> dict:
        """``{"sweep": rows, "sweep_knee": knee}``: the keys a results summary takes."""
        return {"sweep": self.rows(), "sweep_knee": self.knee.as_dict()}

    def to_dict(self) -> dict:
        """The sweep saved whole (``stats.rate_sweep``): ``as_dict``'s keys and every step's
        load result, for ``kfp-bench report``."""
        return rate_sweep.document_of(self.rows(), self.knee.as_dict(), list(self.loads))


def find_knee(
    steps: Sequence[SweepStep],
    factor: float = KNEE_FACTOR,
    min_success: float = KNEE_MIN_SUCCESS,
) -> kn.Knee:
    """The first step whose p99 exceeds ``factor`` x the first step's p99, or whose success ratio
    is below ``min_success``. The first step is the baseline but is itself past the knee when its
    success ratio is already too low. Steps without a response are left out: they have no p99,
    and the refusals of a server that is not there say nothing of where it saturates."""
    points = [kn.Point(s.rate, s.p99_ms, s.success_ratio, s.answered) for s in steps]
    return kn.find_knee(points, factor, min_success, WORDS)


def run_sweep(
    base: LoadOptions,
    rates: Sequence[float],
    step_s: float,
    *,
    factor: float = KNEE_FACTOR,
    min_success: float = KNEE_MIN_SUCCESS,
    pause_s: float = 0.0,
    max_replicas: Callable[[float, float], int | None] | None = None,
    on_step: Callable[[SweepStep], None] | None = None,
) -> SweepResult:
    """Run one open-loop step of ``step_s`` seconds per rate (``base``'s rate and duration
    replaced); return the steps and the knee.

    Args:
        pause_s: seconds of rest between steps, so one step's backlog does not spill into the next.
        max_replicas: ``(t0, t1) -> ready replicas at most`` over a step's window (epoch
            seconds), e.g. from a replica watcher; None when replicas are not watched.

    Raises:
        ConfigError: bad rates, step length or knee settings, before anything is sent.
        EngineError: a bug in the load engine ended a step; the sweep stops there and the
            error's ``partial`` holds the steps finished before it (the cut step is left out:
            it did not hold its rate for ``step_s``).
    """
    check_rates(rates)
    check_step_s(step_s)
    if not factor > 1:
        raise ConfigError(f"--knee-factor {factor}: give a p99 multiple above 1, e.g. 3")
    if not 0 < min_success <= 1:
        raise ConfigError(f"--knee-success {min_success}: give a ratio in (0, 1], e.g. 0.99")
    plans = [replace(base, rate=float(r), duration=float(step_s), qps=0.0) for r in rates]
    for p in plans:
        p.validate()
    steps: list[SweepStep] = []
    loads: list = []

    def keep(opts: LoadOptions, stats) -> None:
        steps.append(_step(opts.rate, stats, max_replicas))
        loads.append(stats)
        if on_step is not None:
            on_step(steps[-1])

    def result() -> SweepResult:
        return SweepResult(tuple(steps), find_knee(steps, factor, min_success), tuple(loads))

    labelled = [(f"{p.rate:g} req/s", p) for p in plans]
    step_through(labelled, run_load, keep, result, pause_s)
    return result()


def check_step_s(step_s: float) -> None:
    """A sweep step's length: above 0 and finite (``ConfigError`` naming ``-z`` otherwise)."""
    if not (step_s > 0 and math.isfinite(step_s)):
        raise ConfigError(f"-z {step_s}: each step needs a duration above 0, e.g. -z 30s")


def step_through(
    plans: Sequence[tuple[str, Any]],
    run: Callable[[Any], Any],
    keep: Callable[[Any, Any], None],
    partial: Callable[[], Any],
    pause_s: float = 0.0,
) -> None:
    """The driver of a sweep, predict or LLM: ``run`` each step's options (``plans``: (label,
    options), the label naming the step in errors) in order and ``keep`` (options, stats); stop
    after a step flagged ``interrupted``.

    Raises:
        EngineError: a bug of the engine ended a step; its ``partial`` is ``partial()`` (the cut
            step is left out: it did not hold its level for the step's length).
    """
    for i, (label, opts) in enumerate(plans):
        if i and pause_s > 0:
            time.sleep(pause_s)
        try:
            stats = run(opts)
        except EngineError as exc:
            raise EngineError(
                f"the sweep's step at {label}: {exc}; the {i} step(s) before it are kept",
                exc.stats,
                partial=partial(),
            ) from exc
        keep(opts, stats)
        if "interrupted" in stats.flags:
            break


def _step(rate: float, stats, max_replicas) -> SweepStep:
    s = stats.summary()
    lat = s.latency_ms or dict.fromkeys(("mean", "p50", "p95", "p99"))
    t0 = stats.started_at
    replicas = max_replicas(t0, t0 + s.duration_s) if max_replicas is not None else None
    return SweepStep(
        rate=rate,
        rps=s.rps,
        requests=s.requests,
        mean_ms=lat["mean"],
        p50_ms=lat["p50"],
        p95_ms=lat["p95"],
        p99_ms=lat["p99"],
        success_ratio=s.success_ratio,
        started_at=t0,
        duration_s=s.duration_s,
        max_replicas=replicas,
        interrupted="interrupted" in stats.flags,
        client_busiest=stats.client_cpu.get("busiest"),
        failures=tuple(f for f in failures(stats.flags) if f != "interrupted"),
        no_response=stats.no_responses,
        warnings=tuple(step_warnings(stats.flags)),
    )
