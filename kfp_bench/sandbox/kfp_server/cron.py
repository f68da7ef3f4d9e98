"""Recurring-run triggers: 6-field cron (seconds first, as KFP) and intervals, and the scheduler.

This module owns when a recurring run creates its next run. A cron trigger is the six fields of
robfig/cron, which KFP uses: ``second minute hour day-of-month month day-of-week``, each ``*``,
``?``, a number, a range ``a-b``, a list ``a,b``, or a step ``*/n`` / ``a-b/n``; month and weekday
names (``JAN``, ``MON``) and ``@every <seconds>s`` are accepted too. Days match as in robfig: if
day-of-month or day-of-week is ``*``/``?`` both must match, else either. Times are UTC. A periodic
trigger fires every ``interval_second`` seconds from its start time (or the recurring run's
creation). Neither fires before ``start_time`` nor after ``end_time``.

The scheduler wakes every ``tick`` seconds, and for each enabled recurring run whose next time
has come it creates a run, unless ``max_concurrency`` of its runs are still unfinished, in which
case it waits. With ``no_catchup`` only the latest missed time is run; otherwise each missed time
is run in turn (at most one per tick).
"""

from __future__ import annotations

import asyncio
import calendar
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_NAMES = {
    4: {m.upper(): i for i, m in enumerate(calendar.month_abbr) if m},
    5: {d.upper(): (i + 1) % 7 for i, d in enumerate(calendar.day_abbr)},
}
_RANGES = ((0, 59), (0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_LABELS = ("second", "minute", "hour", "day-of-month", "month", "day-of-week")
_HORIZON = timedelta(days=366 * 5)


@dataclass(frozen=True, slots=True)
class Cron:
    """A parsed cron expression: the allowed values of each field."""

    fields: tuple[frozenset[int], ...]
    dom_any: bool
    dow_any: bool
    every: float = 0.0

    @classmethod
    def parse(cls, text: str) -> Cron:
        """Parse a 6-field cron or ``@every Ns``; raise ValueError naming the field at fault."""
        text = text.strip()
        if text.startswith("@every"):
            try:
                seconds = float(text.split()[1].rstrip("s"))
            except (IndexError, ValueError):
                raise ValueError(f"cron {text!r}: expected '@every <seconds>s'") from None
            if seconds <= 0:
                raise ValueError(f"cron {text!r}: the interval must be > 0")
            return cls((), True, True, seconds)
        parts = text.split()
        if len(parts) != 6:
            raise ValueError(
                f"cron {text!r} has {len(parts)} fields; KFP cron has 6: second minute hour "
                "day-of-month month day-of-week (e.g. '0 */5 * * * *')"
            )
        fields = tuple(_field(p, i, text) for i, p in enumerate(parts))
        return cls(fields, parts[3] in ("*", "?"), parts[5] in ("*", "?"))

    def _day_ok(self, t: datetime) -> bool:
        dom = t.day in self.fields[3]
        dow = (t.weekday() + 1) % 7 in self.fields[5]
        if self.dom_any or self.dow_any:
            return dom and dow
        return dom or dow

    def next_after(self, after: float) -> float | None:
        """The first matching time strictly after epoch seconds ``after``; None if none soon."""
        if self.every:
            return after + self.every
        sec, minute, hour, _, month, _ = self.fields
        t = datetime.fromtimestamp(int(after) + 1, UTC)
        limit = t + _HORIZON
        while t < limit:
            if t.month not in month:
                t = (t.replace(day=1, hour=0, minute=0, second=0) + timedelta(days=32)).replace(
                    day=1
                )
            elif not self._day_ok(t):
                t = t.replace(hour=0, minute=0, second=0) + timedelta(days=1)
            elif t.hour not in hour:
                t = t.replace(minute=0, second=0) + timedelta(hours=1)
            elif t.minute not in minute:
                t = t.replace(second=0) + timedelta(minutes=1)
            elif t.second not in sec:
                t += timedelta(seconds=1)
            else:
                return t.timestamp()
        return None


def _field(part: str, index: int, text: str) -> frozenset[int]:
    lo, hi = _RANGES[index]
    names = _NAMES.get(index, {})
    values: set[int] = set()
    for item in part.upper().split(","):
        base, _, step_text = item.partition("/")
        try:
            step = int(step_text) if step_text else 1
            if base in ("*", "?"):
                start, end = lo, hi
            elif "-" in base:
                a, b = base.split("-", 1)
                start, end = _value(a, names), _value(b, names)
            else:
                start = _value(base, names)
                end = hi if step_text else start
        except ValueError:
            start, end, step = -1, -1, 1
        if index == 5 and end == 7:
            end = 6 if start else end  # 7 is Sunday too
            values.add(0)
        if not (lo <= start <= end <= hi) or step < 1:
            raise ValueError(
                f"cron {text!r}: {_LABELS[index]} field {part!r} must hold values in {lo}..{hi}"
            )
        values.update(range(start, end + 1, step))
    return frozenset(values)


def _value(token: str, names: dict[str, int]) -> int:
    return names[token] if token in names else int(token)


def next_fire(trigger: dict, after: float, created_at: float) -> float | None:
    """The next time ``trigger`` (a v2beta1Trigger dict) fires after ``after``; None: never."""
    from kfp_bench.sandbox.kfp_server.timefmt import parse_rfc3339

    spec = trigger.get("cron_schedule") or trigger.get("periodic_schedule") or {}
    start = parse_rfc3339(spec["start_time"]) if spec.get("start_time") else None
    end = parse_rfc3339(spec["end_time"]) if spec.get("end_time") else None
    after = max(after, start - 1e-6) if start else after
    if "cron_schedule" in trigger:
        t = Cron.parse(trigger["cron_schedule"].get("cron", "")).next_after(after)
    else:
        interval = float(spec.get("interval_second") or 0)
        origin = start if start is not None else created_at
        k = max(1, int((after - origin) // interval) + 1)
        t = origin + k * interval
    if t is None or (end is not None and t > end):
        return None
    return t


def validate_trigger(trigger) -> dict:
    """The trigger, checked; ValueError says what is wrong."""
    if not isinstance(trigger, dict) or not (
        ("cron_schedule" in trigger) ^ ("periodic_schedule" in trigger)
    ):
        raise ValueError("trigger must hold exactly one of cron_schedule and periodic_schedule")
    if "cron_schedule" in trigger:
        Cron.parse((trigger["cron_schedule"] or {}).get("cron", ""))
    else:
        try:
            interval = float((trigger["periodic_schedule"] or {}).get("interval_second") or 0)
        except (TypeError, ValueError):
            interval = 0
        if interval <= 0:
            raise ValueError("periodic_schedule.interval_second must be a number of seconds > 0")
        # int64 fields are strings in proto3 JSON, whichever way the client sent them
        trigger = {"periodic_schedule": {**trigger["periodic_schedule"]}}
        trigger["periodic_schedule"]["interval_second"] = str(int(interval))
    return trigger


class Scheduler:
    """Fires due recurring runs through ``spawn(job, scheduled_time)``, every ``tick`` s."""

    def __init__(self, jobs: dict, live_runs, spawn, tick: float = 0.2) -> None:
        self.jobs = jobs
        self.live_runs = live_runs  # job id -> number of its unfinished runs
        self.spawn = spawn
        self.tick = tick
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick)
            self.fire_due(datetime.now(UTC).timestamp())

    def fire_due(self, now: float) -> None:
        for job in list(self.jobs.values()):
            if not job.enabled or job.next_fire is None or job.next_fire > now:
                continue
            if self.live_runs(job.recurring_run_id) >= job.max_concurrency:
                continue
            due = job.next_fire
            if job.no_catchup:
                while True:  # skip to the latest missed time
                    later = next_fire(job.trigger, due, job.created_at)
                    if later is None or later > now:
                        break
                    due = later
            self.spawn(job, due)
            job.next_fire = next_fire(job.trigger, due, job.created_at)
