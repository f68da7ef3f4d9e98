"""The KFP REST API's run JSON, turned into ``RunRecord``s from the server's own timestamps.

Every figure comes from timestamps the server wrote, never from when the driver happened to poll:
queue delay is created_at to the first RUNNING in ``state_history``, execution the first RUNNING to
finished_at, duration created_at to finished_at. KFP writes an unset timestamp as the epoch
(1970-01-01T00:00:00Z); that is read as unknown.
"""

from __future__ import annotations

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


def run_record(run: dict, *, error: str = "") -> RunRecord:
    """The ``RunRecord`` of a run as the API returned it; ``error`` overrides the run's own."""
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
    )
