"""Recurring runs: their triggers, and when each fires, as KFP's ScheduledWorkflow controller says.

This module owns a recurring run's trigger (checked as the API server checks it,
server/api_converter.go:2085-2100, and answered as ``toApiTrigger`` writes it) and the time of
its next run, ported from kubeflow/pipelines 7b70c7b95f crd/controller/scheduledworkflow/util/
(scheduled_workflow.go ``GetNextScheduledEpoch``, cron_schedule.go, periodic_schedule.go): whole
seconds, UTC (the install's cronScheduleTimezone). A cron is KFP's (``kfp_bench.kfp.cron``).

* Catch-up (the default): each fire time from the last one (or ``start_time``, or creation) to
  now is run in turn, a past ``start_time`` included; ``no_catchup``: only the latest.
* A periodic trigger fires ``interval_second`` after the last fire (the first after
  ``start_time`` or creation); without catch-up, a late one fires now.
* No trigger: one run, at creation. Nothing fires after ``end_time``.
* A run is started only while fewer than ``max_concurrency`` of the recurring run's are
  unfinished and it is enabled; disabling keeps the last fire time, so enabling catches up.
* The names: ``swf_name`` (the ScheduledWorkflow's), ``workflow_name`` (the n-th run's, as its
  workflow is named), ``requested_run_id`` (the id of a run the controller asks the API for).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
import re
import time
import uuid
from dataclasses import dataclass

from kfp_bench.kfp.cron import CronError, Schedule, parse
from kfp_bench.sandbox.kfp_server.timefmt import parse_rfc3339, rfc3339

ZERO_TIME = -62135596800  # Go's time.Time{}.Unix(): robfig's Next when nothing matches
_CRON_DOC = "https://godoc.org/github.com/robfig/cron"
#: k8s.io/apimachinery/pkg/util/rand: what a generateName suffix is drawn from
_K8S_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
#: common/util/uuid.go:29 deterministicUUIDNamespace
_RUN_ID_NAMESPACE = uuid.UUID("c2f3a9d4-1e6b-4c8a-9f7d-0b5e3a1c2d4f")


def swf_name(display_name: str, rng: random.Random) -> str:
    """The ScheduledWorkflow's name: template.go:333-347 toSWFCRDResourceGeneratedName (lower
    case, only [a-z0-9-], 25 characters, "job-" if nothing is left) as its generateName, then
    the 5 random characters Kubernetes' SimpleNameGenerator appends
    (k8s.io/apiserver/pkg/storage/names/generate.go)."""
    base = re.sub("[^a-z0-9-]+", "", display_name.lower())[:25] or "job-"
    return base + "".join(rng.choice(_K8S_ALPHANUMS) for _ in range(5))


def workflow_name(swf: str, index: int) -> str:
    """scheduled_workflow.go:130-140 NextResourceName: "<swf>-<index>-<fnv32a of both>"; the
    name of the run too, on either path (resource_manager.go:1895, controller.go:694)."""
    resource_id = f"{swf}-{index}"
    h = 0x811C9DC5
    for byte in resource_id.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return f"{resource_id}-{h}"


def requested_run_id(recurring_run_id: str, display_name: str) -> str:
    """resource_manager.go:645-652: the id of a run created for a recurring run through the
    API, uuid5 of "<recurring run id>/<display name>" (common/util/uuid.go:34-36)."""
    return str(uuid.uuid5(_RUN_ID_NAMESPACE, f"{recurring_run_id}/{display_name}"))


@dataclass(frozen=True, slots=True)
class Trigger:
    """A checked trigger: a cron, an interval, or neither (a one-off run), in epoch seconds."""

    schedule: Schedule | None = None
    interval: int = 0
    start: int | None = None
    end: int | None = None

    @classmethod
    def from_api(cls, doc) -> Trigger:
        """A v2beta1Trigger; ValueError with the API server's words where it refuses one."""
        if doc is None:
            return cls()
        if not isinstance(doc, dict):
            raise ValueError("trigger must be an object")
        if "cron_schedule" in doc and "periodic_schedule" in doc:
            raise ValueError("trigger: give one of cron_schedule and periodic_schedule, not both")
        if "cron_schedule" in doc:
            spec = doc["cron_schedule"] or {}
            try:
                schedule = parse(spec.get("cron") or "")
            except CronError as exc:
                raise ValueError(
                    f"Schedule cron is not a supported format({_CRON_DOC}). Error: {exc.reason}"
                ) from None
            return cls(schedule, 0, *_window(spec))
        if "periodic_schedule" in doc:
            spec = doc["periodic_schedule"] or {}
            interval = _int64(spec.get("interval_second", 0), "interval_second")
            if interval < 1:
                raise ValueError(
                    f"Found invalid period schedule interval {interval}. "
                    "Set at interval to least 1 second"
                )
            return cls(None, interval, *_window(spec))
        return cls()

    def to_api(self) -> dict:
        """As toApiTrigger writes it: int64 as a string, times in whole seconds; {} for none."""
        if self.schedule is not None:
            out, key = {"cron": self.schedule.text}, "cron_schedule"
        elif self.interval:
            out, key = {"interval_second": str(self.interval)}, "periodic_schedule"
        else:
            return {}
        if self.start is not None:
            out["start_time"] = rfc3339(self.start)
        if self.end is not None:
            out["end_time"] = rfc3339(self.end)
        return {key: out}

    def next_fire(self, last: int | None, created: int, now: int, catchup: bool) -> int | None:
        """scheduled_workflow.go getNextScheduledEpoch: the epoch of the next run, which may be
        past (due now); None: never again."""
        if self.schedule is not None:
            return self._cron_next(last, created, now, catchup)
        if self.interval:
            return self._periodic_next(last, created, now, catchup)
        return created if last is None else None  # getNextScheduledEpochForOneTimeRun

    def _cron_next(self, last, created, now, catchup) -> int | None:
        """cron_schedule.go getNextScheduledTimeImp."""
        start = last if last is not None else self.start if self.start is not None else created
        if self.start is not None and self.start > start:
            start = self.start
        result = self.schedule.next_epoch(start)
        if result is None:
            # robfig's zero time: the controller runs it at once, and again after each run;
            # without catch-up its loop (cron_schedule.go:116) never ends, so nothing runs.
            return ZERO_TIME if catchup else None
        if self.end is not None and self.end < result:
            return None
        if catchup:
            return result
        bound = now if self.end is None else min(now, self.end)
        if self.schedule.every:  # the loop below, in one step
            return result + max(0, (bound - result) // self.schedule.every) * self.schedule.every
        while True:
            after = self.schedule.next_epoch(result)
            if after is None or after > bound:
                return result
            result = after

    def _periodic_next(self, last, created, now, catchup) -> int | None:
        """periodic_schedule.go GetNextScheduledEpoch and ...NoCatchup."""
        start = last if last is not None else self.start if self.start is not None else created
        if self.start is not None and self.start > start:
            nxt = self.start
        else:
            nxt = start + self.interval
            if self.end is not None and self.end < nxt:
                return None
        if catchup or now < nxt + self.interval:
            return nxt
        return self.end if self.end is not None and self.end < now else now


def _window(spec: dict) -> tuple[int | None, int | None]:
    """start_time, end_time: the API server keeps whole seconds (Timestamp.Seconds)."""
    return tuple(
        math.floor(parse_rfc3339(spec[k])) if spec.get(k) else None
        for k in ("start_time", "end_time")
    )


def _int64(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"{name} must be a whole number of seconds, got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name} must be a whole number of seconds, got {value!r}") from None


class Scheduler:
    """The controller's loop: every ``tick`` s, each enabled recurring run whose next time has
    come and that has fewer than ``max_concurrency`` unfinished runs gets one run,
    ``spawn(job, scheduled_epoch) -> bool`` (False: not created, try again); at most one per
    recurring run per tick."""

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
            self.fire_due(int(time.time()))

    def fire_due(self, now: int) -> None:
        """scheduled_workflow.go GetNextScheduledEpoch, then UpdateStatus's LastTriggeredTime."""
        for job in list(self.jobs.values()):
            if not job.enabled:
                continue
            trigger = Trigger.from_api(job.trigger)  # checked at create: parses again
            due = trigger.next_fire(
                job.last_triggered, math.floor(job.created_at), now, not job.no_catchup
            )
            if due is None or due > now:
                continue
            if self.live_runs(job.recurring_run_id) >= job.max_concurrency:
                continue
            if self.spawn(job, due):  # a failed submission is tried again (controller.go:440)
                job.last_triggered = due
