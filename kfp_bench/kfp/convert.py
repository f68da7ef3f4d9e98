"""The KFP REST API's run JSON, turned into ``RunRecord``s from the server's own timestamps.

Every figure comes from timestamps the server wrote, never from when the driver happened to poll:
queue delay is created_at to the first RUNNING in ``state_history``, execution the first RUNNING to
finished_at, duration created_at to finished_at. KFP writes an unset timestamp as the epoch
(1970-01-01T00:00:00Z); that is read as unknown.

A real KFP server writes them in whole seconds (server/api_converter.go at 7b70c7b95f:
``time.Unix(CreatedAtInSec, 0)``), so each figure is known only to within its resolution, read
from the timestamps themselves (``resolution``); ``Sightings``, what the driver's own polls saw,
may narrow that interval (docs/run-figures.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from kfp_bench.records import RunRecord, TaskRecord

#: v2beta1 RuntimeStates after which a run does not change.
TERMINAL = frozenset({"SUCCEEDED", "FAILED", "SKIPPED", "CANCELED"})
#: Where the local KFP server (kfp_bench.sandbox.kfp_server) marks a simulated run:
#: plugins_output["kfp-bench"].entries["execution"].value == "simulated".
SIMULATED_PLUGIN = "kfp-bench"


def timestamp(value) -> float | None:
    """Epoch seconds of an RFC 3339 timestamp; None for empty or the epoch itself."""
    if not value:
        return None
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
    return t if t > 0 else None


_FRACTION = re.compile(r"T\d\d:\d\d:\d\d(?:[.,](\d+))?")


def precision(value) -> float | None:
    """The resolution an RFC 3339 timestamp is written to (s): 1.0 without a fraction (protobuf's
    JSON writes a whole second so), 1e-3 for three digits, 1e-6 for six; None for no timestamp."""
    if timestamp(value) is None:
        return None
    m = _FRACTION.search(str(value))
    return 10.0 ** -len(m.group(1)) if m and m.group(1) else 1.0


def resolution_of(run: dict) -> float | None:
    """The coarsest precision of the run's timestamps (its tasks' included): the resolution of
    every figure taken from them; None when it has none."""
    values = [run.get("created_at"), run.get("finished_at")]
    values += [h.get("update_time") for h in run.get("state_history") or ()]
    for t in (run.get("run_details") or {}).get("task_details") or ():
        values += [t.get("create_time"), t.get("start_time"), t.get("end_time")]
    found = [p for v in values if (p := precision(v)) is not None]
    return max(found) if found else None


@dataclass(slots=True)
class Sightings:
    """What the driver's own calls saw of one run, on the driver's clock (epoch s).

    Attributes:
        created: (start, end) of the create call that answered with the run: created_at lies in
            it. None for a run found by a LIST.
        running_after: the start of the last poll that saw the run PENDING.
        running_by: the end of the first poll that saw it past PENDING.
        finished_after: the start of the last poll that saw it unfinished.
        finished_by: the end of the first poll that saw it final.
    """

    created: tuple[float, float] | None = None
    running_after: float | None = None
    running_by: float | None = None
    finished_after: float | None = None
    finished_by: float | None = None

    def saw(self, state: str, start: float, end: float) -> None:
        """A poll from ``start`` to ``end`` saw the run in ``state``."""
        if state == "PENDING":
            self.running_after = start
        elif self.running_by is None:
            self.running_by = end
        if state not in TERMINAL:
            self.finished_after = start
        elif self.finished_by is None:
            self.finished_by = end

    def bounds(self) -> dict[str, tuple[float, float]]:
        """The interval of each figure the sightings bound: queue_delay, execution, duration."""
        out = {}
        c0, c1 = self.created or (None, None)
        ra, rb, fa, fb = self.running_after, self.running_by, self.finished_after, self.finished_by
        if c0 is not None and rb is not None:
            out["queue_delay"] = (max(ra - c1, 0.0) if ra else 0.0, rb - c0)
        start = ra if ra is not None else c0
        if fb is not None and start is not None:
            out["execution"] = (max(fa - rb, 0.0) if fa and rb else 0.0, fb - start)
        if c0 is not None and fb is not None:
            out["duration"] = (max(fa - c1, 0.0) if fa else 0.0, fb - c0)
        return out


def state_of(run: dict) -> str:
    return run.get("state") or "RUNTIME_STATE_UNSPECIFIED"


def is_terminal(run: dict) -> bool:
    return state_of(run) in TERMINAL


def tasks_of(run: dict) -> tuple[TaskRecord, ...]:
    """The run's tasks with their durations (create_time, or start_time, to end_time)."""
    details = (run.get("run_details") or {}).get("task_details") or ()
    out = []
    for t in details:
        begin = timestamp(t.get("create_time")) or timestamp(t.get("start_time"))
        end = timestamp(t.get("end_time"))
        duration = end - begin if begin is not None and end is not None else None
        name = t.get("display_name") or t.get("task_id") or ""
        out.append(TaskRecord(name, t.get("state") or "", duration))
    return tuple(out)


def is_simulated(run: dict) -> bool:
    plugin = (run.get("plugins_output") or {}).get(SIMULATED_PLUGIN) or {}
    entry = (plugin.get("entries") or {}).get("execution") or {}
    return entry.get("value") == "simulated"


def _bounded(figures: dict, resolution: float | None, seen: Sightings | None) -> dict:
    """Each figure's interval: the server's figure +- its resolution (both ends are truncated,
    so the truth lies within one step either way), cut to what the polls saw where that is
    narrower and consistent; and the figures the polls narrowed."""
    polls = seen.bounds() if seen is not None else {}
    out, polled = {}, []
    for name, d in figures.items():
        if d is None:
            out[f"{name}_lo"] = out[f"{name}_hi"] = None
            continue
        r = resolution or 0.0
        lo, hi = max(d - r, 0.0), d + r
        p = polls.get(name)
        if p is not None and max(lo, p[0]) <= min(hi, p[1]) and (p[0] > lo or p[1] < hi):
            lo, hi = max(lo, p[0]), min(hi, p[1])
            polled.append(name)
        out[f"{name}_lo"], out[f"{name}_hi"] = round(lo, 6), round(hi, 6)
    return {**out, "polled": tuple(polled)}


def run_record(
    run: dict, *, error: str = "", seen: Sightings | None = None, at_timeout: str = ""
) -> RunRecord:
    """The ``RunRecord`` of a run as the API returned it; ``error`` overrides the run's own;
    ``seen``: what the driver's polls saw of it; ``at_timeout``: what the timeout did to it."""
    created = timestamp(run.get("created_at"))
    finished = timestamp(run.get("finished_at")) if is_terminal(run) else None
    running = [
        t
        for h in run.get("state_history") or ()
        if h.get("state") == "RUNNING" and (t := timestamp(h.get("update_time"))) is not None
    ]
    first_running = min(running) if running else None
    queue = first_running - created if first_running is not None and created is not None else None
    execution = finished - first_running if finished is not None and first_running else None
    duration = finished - created if finished is not None and created is not None else None
    run_error = run.get("error") or {}
    if isinstance(run_error, dict):
        run_error = run_error.get("message") or ""
    resolution = resolution_of(run)
    figures = {"queue_delay": queue, "execution": execution, "duration": duration}
    return RunRecord(
        run_id=run.get("run_id") or "",
        name=run.get("display_name") or "",
        state=state_of(run),
        created_at=created,
        scheduled_at=timestamp(run.get("scheduled_at")),
        finished_at=finished,
        queue_delay=queue,
        execution=execution,
        duration=duration,
        tasks=tasks_of(run),
        simulated=is_simulated(run),
        error=error or str(run_error),
        resolution=resolution,
        at_timeout=at_timeout,
        **_bounded(figures, resolution, seen),
    )
