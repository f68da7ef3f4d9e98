"""Callbacks run at ``time.perf_counter`` deadlines, never before: the fault server's clock.

Many deadlines share one timer, the load engine's ``pacer.Timer`` (a Linux timerfd armed at an
absolute CLOCK_MONOTONIC time, which the kernel wakes with microsecond resolution), armed at the
earliest pending deadline. uvloop's own timers (``loop.call_later``: ``timer="call_at"``, or where
there is no timerfd) count whole milliseconds and fire up to 1 ms early, so a deadline they carry
is re-armed until it is due.
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
        self._timer: Timer | None = None
        if timer in ("auto", "timerfd"):
            impl = time.get_clock_info("perf_counter").implementation
            t = Timer(loop, self._fire) if "CLOCK_MONOTONIC" in impl else None
            if t is not None and t.kind == "timerfd":
                self._timer = t
            else:
                if t is not None:
                    t.close()
                if timer == "timerfd":
                    raise ConfigError(
                        f"fault server: --timer timerfd is unavailable here ({sys.platform}, "
                        f"perf_counter by {impl}); use --timer call_at"
                    )
        self.kind = "timerfd" if self._timer else "call_at"

    def at(self, when: float, callback, *args) -> None:
        """Call ``callback(*args)`` at ``when`` (``now()`` seconds)."""
        if self._timer is None:
            self.loop.call_later(when - now(), self._early_check, when, callback, args)
            return
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

    def _early_check(self, when: float, callback, args) -> None:
        remaining = when - now()
        if remaining > 0:
            self.loop.call_later(remaining, self._early_check, when, callback, args)
        else:
            callback(*args)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.close()
            self._timer = None
