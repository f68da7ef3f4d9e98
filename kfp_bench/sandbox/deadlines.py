"""Callbacks run at ``time.perf_counter`` deadlines, never before: the fault server's clock.

Many deadlines share one timer, the load engine's ``pacer.Timer``, armed at the earliest pending
deadline: a Linux timerfd armed at an absolute CLOCK_MONOTONIC time, which the kernel wakes with
microsecond resolution, or uvloop's own timers (``timer="call_at"``, or where there is no timerfd),
which count whole milliseconds and fire up to 1 ms early; an early wake finds nothing due and
re-arms.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import sys
import time

from kfp_bench.errors import ConfigError
from kfp_bench.load.pacer import Timer

TIMERS = ("auto", "timerfd", "call_at")
now = time.perf_counter  # CLOCK_MONOTONIC on Linux, the clock a timerfd counts in


class Deadlines:
    """Runs ``callback(*args)`` at ``now()`` deadlines, never before.

    Args:
        loop: the running event loop.
        timer: "auto" (a timerfd where available), "timerfd" (a ConfigError where there is none)
            or "call_at" (uvloop's timers).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, timer: str = "auto") -> None:
        self.loop = loop
        self._heap: list = []
        self._seq = itertools.count()
        self._armed: float | None = None
        self._timer = Timer(loop, self._fire, timerfd=timer != "call_at")
        self.kind = self._timer.kind
        if timer == "timerfd" and self.kind != "timerfd":
            self._timer.close()
            raise ConfigError(
                f"fault server: --timer timerfd is unavailable here ({sys.platform}); "
                "use --timer call_at"
            )

    def at(self, when: float, callback, *args) -> None:
        """Call ``callback(*args)`` at ``when`` (``now()`` seconds)."""
        heapq.heappush(self._heap, (when, next(self._seq), callback, args))
        if self._armed is None or when < self._armed:
            self._arm(when)

    def _arm(self, when: float) -> None:
        self._timer.arm(when)
        self._armed = when

    def _fire(self) -> None:
        self._armed = None
        heap, t = self._heap, now()
        while heap and heap[0][0] <= t:
            _, _, callback, args = heapq.heappop(heap)
            callback(*args)
        if heap and (self._armed is None or heap[0][0] < self._armed):
            self._arm(heap[0][0])

    def close(self) -> None:
        self._timer.close()
