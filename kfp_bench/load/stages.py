"""Load in stages: constant, ramp and idle segments, parsed from ``--stages`` and paced as one
open-loop schedule.

A stage is a rate over a duration: ``30s@10`` (constant), ``60s@10-100`` or ``ramp 60s 10-100``
(linear from one rate to the other), ``idle 30s`` (nothing sent: an autoscaler may scale down).
Stages follow k6's ``ramping-arrival-rate`` (a ramp is linear in elapsed time over its stage)
and inference-perf's ``load.stages`` (a list of rate and duration; kubernetes-sigs/inference-perf
7de5ef2, inference_perf/config/loadgen/config.py ``StandardLoadStage``), not vLLM's
``--ramp-up-strategy``, whose rate follows the request's index rather than the clock
(vllm/benchmarks/serve.py ``get_current_request_rate``).

The schedule is a pure function of elapsed time, as ``pacer.Schedule``'s: the arrivals expected
by time t are N(t), the integral of the rate, and request i is due when N(t) reaches i. A stage
holds the requests i with N(start) <= i < N(end) (exact: counts are ``Fraction``s of the parsed
numbers), so a constant stage of 30 s at 10 req/s holds exactly 300. P worker processes take
every P-th request (``lane``), as the constant schedule's phases do. Poisson arrivals come from
a unit-rate Poisson process in N's units, mapped back through N (a non-homogeneous Poisson
process by inversion).
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from fractions import Fraction

from kfp_bench.errors import ConfigError

MAX_STAGES = 50
FORMS = (
    "comma-separated stages: DURATION@RATE (constant), DURATION@FROM-TO or ramp DURATION FROM-TO "
    "(linear ramp), idle DURATION; e.g. 30s@10,60s@10-100,idle 30s,30s@100"
)
_NUM = r"(\d+(?:\.\d*)?|\.\d+)"
_DUR = r"((?:\d+(?:\.\d*)?|\.\d+)(?:h|ms|m|s)?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:h|ms|m|s))*)"
_CONST = re.compile(rf"{_DUR}\s*@\s*{_NUM}")
_RAMP = re.compile(rf"(?:{_DUR}\s*@\s*|ramp\s+{_DUR}\s+){_NUM}\s*-\s*{_NUM}")
_IDLE = re.compile(rf"idle\s+{_DUR}")
_UNITS = {"h": 3600, "m": 60, "s": 1, "ms": Fraction(1, 1000)}


@dataclass(frozen=True)
class Stage:
    """One segment: ``duration_s`` seconds from rate ``start`` to ``end`` (req/s; equal for a
    constant stage, both 0 when idle). ``text`` is how it was written."""

    duration_s: float
    start: float
    end: float
    text: str

    @property
    def kind(self) -> str:
        if self.start == self.end:
            return "idle" if self.start == 0 else "constant"
        return "ramp"

    def expected(self) -> Fraction:
        """The arrivals this stage's rate integrates to (exact, from the parsed numbers)."""
        return _frac(self.duration_s) * (_frac(self.start) + _frac(self.end)) / 2


def _frac(x: float) -> Fraction:
    return Fraction(x).limit_denominator(10**9)


def parse_stages(text: str, flag: str = "--stages") -> tuple[Stage, ...]:
    """The stages of ``text``; ``ConfigError`` naming the stage at fault and the forms."""
    parts = [p.strip() for p in str(text).split(",")]
    if not text or not str(text).strip() or any(not p for p in parts):
        raise ConfigError(f"{flag} {text!r}: an empty stage; give {FORMS}")
    if len(parts) > MAX_STAGES:
        raise ConfigError(f"{flag}: {len(parts)} stages; give at most {MAX_STAGES}")
    stages = tuple(_stage(p, flag) for p in parts)
    if all(s.kind == "idle" for s in stages):
        raise ConfigError(f"{flag} {text!r}: every stage is idle; give one that sends, e.g. 30s@10")
    return stages


def _stage(part: str, flag: str) -> Stage:
    bad = f"{flag}: stage {part!r} is not one of the forms; give {FORMS}"
    if m := _IDLE.fullmatch(part):
        return Stage(_seconds(m.group(1), part, flag), 0.0, 0.0, part)
    if m := _RAMP.fullmatch(part):
        dur = m.group(1) or m.group(2)
        lo, hi = float(m.group(3)), float(m.group(4))
        if lo == hi:
            raise ConfigError(f"{flag}: stage {part!r} ramps from {lo:g} to itself; write it "
                              f"as {dur}@{lo:g}")  # fmt: skip
        return Stage(_seconds(dur, part, flag), lo, hi, part)
    if m := _CONST.fullmatch(part):
        rate = float(m.group(2))
        if rate == 0:
            raise ConfigError(
                f"{flag}: stage {part!r} sends nothing; write it as idle {m.group(1)}"
            )
        return Stage(_seconds(m.group(1), part, flag), rate, rate, part)
    raise ConfigError(bad)


def _seconds(text: str, part: str, flag: str) -> float:
    """Seconds of a stage's duration (30s, 2m, 1m30s, 500ms, a bare number is seconds)."""
    if re.fullmatch(_NUM, text):
        total = Fraction(text)
    else:
        pieces = re.findall(rf"{_NUM}(h|ms|m|s)", text)
        total = sum((Fraction(n) * _UNITS[u] for n, u in pieces), Fraction(0))
    if total <= 0:
        raise ConfigError(f"{flag}: stage {part!r} lasts no time; give a positive duration")
    return float(total)


def total_s(stages) -> float:
    return sum(s.duration_s for s in stages)


def peak_rate(stages) -> float:
    return max(max(s.start, s.end) for s in stages)


def bounds(stages) -> list[dict]:
    """Each stage's place on the attack's time axis (seconds from request 0's due time) and
    its first request and count, for the results and the reports."""
    out, at, n = [], 0.0, Fraction(0)
    for s in stages:
        end_n = n + s.expected()
        first, last = math.ceil(n), math.ceil(end_n)
        out.append({"stage": s.text, "kind": s.kind, "start_s": at, "end_s": at + s.duration_s,
                    "first": first, "requests": last - first})  # fmt: skip
        at += s.duration_s
        n = end_n
    return out


class StageSchedule:
    """Intended send times (``perf_counter`` seconds) of a staged attack in one process, the
    first stage beginning at ``start``: the ``peek``/``pop`` of ``pacer.Schedule``. ``lane``
    (index, of): this process takes requests index, index + of, ...
    """

    def __init__(self, start: float, stages, arrival="constant", lane=(0, 1), seed=None):
        self.start = start
        self._stages = tuple(stages)
        self._cum = [Fraction(0)]
        self._at = [0.0]
        for s in self._stages:
            self._cum.append(self._cum[-1] + s.expected())
            self._at.append(self._at[-1] + s.duration_s)
        # The exact bounds once, as ints (request i is in stage k iff first[k] <= i <
        # first[k + 1]) and floats: a Fraction per request costs 20x the constant schedule.
        self._first = [math.ceil(c) for c in self._cum]
        self._cumf = [float(c) for c in self._cum]
        self._index, self._of = lane
        self._poisson = arrival == "poisson"
        self._rng = random.Random(seed)
        self._u = 0.0  # the Poisson process's position, in arrivals of N
        self._i = self._index
        self._k = 0  # the stage of the last request placed: they come in order
        self._next = self._due_next()

    def peek(self) -> float:
        """When the next request is due (``inf`` past the last stage)."""
        return self._next

    def pop(self) -> float:
        due = self._next
        self._i += self._of
        self._next = self._due_next()
        return due

    def _due_next(self) -> float:
        if self._poisson:
            # A unit-rate process in N's units, thinned to this lane: gaps of mean ``of``.
            self._u += self._rng.expovariate(1.0 / self._of)
            return self._time_of(self._u)
        return self._time_of(self._i)

    def _time_of(self, n) -> float:
        """The elapsed time at which N reaches ``n`` (the start of a stage holding it)."""
        bound = self._first if isinstance(n, int) else self._cumf
        while self._k < len(self._stages) and not n < bound[self._k + 1]:
            self._k += 1
        if self._k == len(self._stages):
            return math.inf
        x = _solve(self._stages[self._k], n - self._cumf[self._k])
        end = self._at[self._k + 1]
        t = min(self._at[self._k] + x, math.nextafter(end, -math.inf))
        return self.start + t


def _solve(s: Stage, q: float) -> float:
    """The time x into stage ``s`` at which its arrivals reach ``q``: start*x + a*x*x/2 = q,
    a = (end - start) / duration; written so that it holds for a = 0 and for a ramp from 0."""
    if q <= 0:
        return 0.0
    a = (s.end - s.start) / s.duration_s
    root = math.sqrt(max(s.start * s.start + 2 * a * q, 0.0))
    return 2 * q / (s.start + root)
