"""Open-loop pacing: when each request is due, and a timer precise enough to send it then.

The schedule is a pure function of elapsed time (vegeta's pacer, wrk2's intended send time): the
i-th request of a constant-rate schedule is due at ``phase + i / rate``, never "a sleep after the
previous one", so a slow server cannot stretch the schedule. Poisson arrivals draw exponential gaps
from a seeded generator. ``schedule_for`` picks the schedule of an attack's options: one rate,
stages (``stages.StageSchedule``) or a trace's own offsets (``TraceSchedule``).

uvloop's timers have a 1 ms resolution, which alone would add half a millisecond on average to
every corrected latency. On Linux the timer is a ``timerfd`` armed at an absolute CLOCK_MONOTONIC
time (the clock behind ``time.perf_counter``) and watched by the event loop, which the kernel
wakes with microsecond resolution (how late it fires: BENCHMARKS.md, load engine (b)).
Elsewhere it falls back to ``loop.call_at``.
"""

from __future__ import annotations

import ctypes
import math
import os
import random
import sys
import time

from kfp_bench.load.stages import StageSchedule


class Schedule:
    """Intended send times (``perf_counter`` seconds) of an open-loop attack in one process, at
    its ``rate`` from ``start``, when request 0 of the whole attack is due. ``phase`` offsets its
    first request, so that P processes at rate R/P interleave into one constant schedule at R.
    """

    def __init__(
        self,
        start: float,
        rate: float,
        arrival: str = "constant",
        phase: float = 0.0,
        seed: int | None = None,
    ):
        self.start, self.rate, self.phase = start, rate, phase
        self._poisson = arrival == "poisson"
        self._rng = random.Random(seed)
        self._i = 0
        self._next = start + phase
        if self._poisson:
            self._next = start + self._rng.expovariate(rate)

    def peek(self) -> float:
        """When the next request is due."""
        return self._next

    def pop(self) -> float:
        """Take the next request's due time and advance."""
        due = self._next
        self._i += 1
        if self._poisson:
            self._next += self._rng.expovariate(self.rate)
        else:
            self._next = self.start + self.phase + self._i / self.rate
        return due


class TraceSchedule:
    """The intended send times of a trace replay: ``start + offset / speed`` for each offset of
    this process's share of the trace, in order (``inf`` past the last)."""

    def __init__(self, start: float, offsets, speed: float = 1.0):
        self.start, self._offsets, self._speed = start, offsets, speed
        self._i = 0

    def peek(self) -> float:
        if self._i == len(self._offsets):
            return math.inf
        return self.start + self._offsets[self._i] / self._speed

    def pop(self) -> float:
        due = self.peek()
        self._i += 1
        return due


def schedule_for(opts, start: float, phase: float = 0.0):
    """The open-loop schedule of ``opts`` (a ``LoadOptions`` share) from ``start``."""
    if opts.stages:
        return StageSchedule(start, opts.stages, opts.arrival, opts.lane, opts.seed)
    if opts.trace:
        return TraceSchedule(start, opts.trace, opts.trace_speed)
    return Schedule(start, opts.rate, opts.arrival, phase, opts.seed)


class _TimerSpec(ctypes.Structure):
    _fields_ = [
        ("interval_s", ctypes.c_long),
        ("interval_ns", ctypes.c_long),
        ("value_s", ctypes.c_long),
        ("value_ns", ctypes.c_long),
    ]


class Timer:
    """A one-shot timer on the event loop, armed at an absolute ``perf_counter`` time.

    A timerfd where there is one, unless ``timerfd=False``; else uvloop's timers, which count whole
    milliseconds and may fire up to 1 ms early (``kind`` says which). Callers re-arm on an early
    wake: nothing is due yet.
    """

    def __init__(self, loop, callback, timerfd: bool = True):
        self._loop, self._callback = loop, callback
        self._handle = None
        self._fd = _timerfd_create() if timerfd else None
        self.kind = "call_at" if self._fd is None else "timerfd"
        if self._fd is not None:
            self._spec = _TimerSpec()
            loop.add_reader(self._fd, self._fire)

    def arm(self, when: float) -> None:
        if self._fd is None:
            if self._handle:
                self._handle.cancel()
            # loop.time() and perf_counter() differ by a constant on each platform.
            self._handle = self._loop.call_at(
                when - time.perf_counter() + self._loop.time(), self._callback
            )
            return
        when = max(when, 1e-9)
        sec = int(when)
        self._spec.value_s, self._spec.value_ns = sec, int((when - sec) * 1e9)
        _LIBC.timerfd_settime(self._fd, 1, ctypes.byref(self._spec), None)  # TFD_TIMER_ABSTIME

    def _fire(self) -> None:
        try:
            os.read(self._fd, 8)
        except BlockingIOError:  # re-armed before we read: nothing expired
            return
        self._callback()

    def close(self) -> None:
        if self._handle:
            self._handle.cancel()
        if self._fd is not None:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = None


_LIBC = None


def _timerfd_create():
    """A non-blocking CLOCK_MONOTONIC timerfd, or None where there is none."""
    global _LIBC
    if not sys.platform.startswith("linux"):
        return None
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL(None, use_errno=True)
            _LIBC.timerfd_create.argtypes = [ctypes.c_int, ctypes.c_int]
            _LIBC.timerfd_settime.argtypes = [
                ctypes.c_int,
                ctypes.c_int,
                ctypes.POINTER(_TimerSpec),
                ctypes.c_void_p,
            ]
        fd = _LIBC.timerfd_create(1, os.O_NONBLOCK | os.O_CLOEXEC)  # CLOCK_MONOTONIC
    except (OSError, AttributeError):
        return None
    return fd if fd >= 0 else None
