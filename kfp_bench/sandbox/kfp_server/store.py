"""The server's state: pipelines, versions, experiments, runs and recurring runs, in memory.

This module owns the resources and how each one is shown in the API (``to_api``: JSON field names
exactly as the v2beta1 swagger has them, timestamps as RFC3339 strings, unset fields left out as
proto3 JSON does). Resources are mutable slotted dataclasses, not frozen ones: a run's state,
history and tasks change while it executes, and the one event loop that owns them is the only
writer. Lookups of a missing id raise ``LookupError`` (answered 404); bad input raises
``ValueError`` (answered 400).

The simulated-run marker: every run carries
``plugins_output["kfp-bench"] = {"entries": {"execution": {"value": "simulated" | "executed"}},
"state": ...}`` once the server has decided how to run it (``"queued"`` before). A driver reads
``run.plugins_output["kfp-bench"].entries["execution"].value`` (kfp_server_api) to tell.
"""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass, field

from kfp_bench.sandbox.kfp_server.specs import Package
from kfp_bench.sandbox.kfp_server.timefmt import rfc3339

PLUGIN = "kfp-bench"
FINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "CANCELED", "SKIPPED"})
_seq = itertools.count(1)


def new_id() -> str:
    return str(uuid.uuid4())


def _put(out: dict, key: str, value) -> None:
    if value not in (None, "", {}, []):
        out[key] = value


def _ts(t: float | None) -> str | None:
    return rfc3339(t) if t else None


@dataclass(slots=True)
class Pipeline:
    pipeline_id: str
    name: str
    display_name: str
    description: str = ""
    namespace: str = ""
    created_at: float = field(default_factory=time.time)
    seq: int = field(default_factory=lambda: next(_seq))

    def to_api(self) -> dict:
        out = {
            "pipeline_id": self.pipeline_id,
            "name": self.name,
            "display_name": self.display_name,
            "created_at": rfc3339(self.created_at),
        }
        _put(out, "description", self.description)
        _put(out, "namespace", self.namespace)
        return out


@dataclass(slots=True)
class Version:
    pipeline_version_id: str
    pipeline_id: str
    name: str
    display_name: str
    package: Package
    description: str = ""
    code_source_url: str = ""
    created_at: float = field(default_factory=time.time)
    seq: int = field(default_factory=lambda: next(_seq))

    def to_api(self) -> dict:
        out = {
            "pipeline_id": self.pipeline_id,
            "pipeline_version_id": self.pipeline_version_id,
            "name": self.name,
            "display_name": self.display_name,
            "created_at": rfc3339(self.created_at),
            "pipeline_spec": self.package.api_view(),
        }
        _put(out, "description", self.description)
        _put(out, "code_source_url", self.code_source_url)
        return out


@dataclass(slots=True)
class Experiment:
    experiment_id: str
    display_name: str
    description: str = ""
    namespace: str = ""
    storage_state: str = "AVAILABLE"
    last_run_created_at: float | None = None
    created_at: float = field(default_factory=time.time)
    seq: int = field(default_factory=lambda: next(_seq))

    def to_api(self) -> dict:
        out = {
            "experiment_id": self.experiment_id,
            "display_name": self.display_name,
            "created_at": rfc3339(self.created_at),
            "storage_state": self.storage_state,
        }
        _put(out, "description", self.description)
        _put(out, "namespace", self.namespace)
        _put(out, "last_run_created_at", _ts(self.last_run_created_at))
        return out


@dataclass(slots=True)
class Task:
    """One executed (or simulated) task of a run, as ``run_details.task_details`` shows it."""

    task_id: str
    display_name: str
    create_time: float
    start_time: float | None = None
    end_time: float | None = None
    state: str = "RUNNING"
    history: list[tuple[float, str]] = field(default_factory=list)
    error: str = ""

    def to_api(self, run_id: str) -> dict:
        out = {
            "run_id": run_id,
            "task_id": self.task_id,
            "display_name": self.display_name,
            "create_time": rfc3339(self.create_time),
            "state": self.state,
            "state_history": [{"update_time": rfc3339(t), "state": s} for t, s in self.history],
        }
        _put(out, "start_time", _ts(self.start_time))
        _put(out, "end_time", _ts(self.end_time))
        if self.error:
            out["error"] = {"code": 2, "message": self.error}
        return out


@dataclass(slots=True)
class Run:
    run_id: str
    experiment_id: str
    display_name: str
    package: Package
    description: str = ""
    inline_spec: bool = False
    version_ref: dict | None = None
    params: dict = field(default_factory=dict)
    pipeline_root: str = ""
    service_account: str = ""
    recurring_run_id: str = ""
    namespace: str = ""  # its experiment's; v2beta1's Run has no such field, so not shown
    storage_state: str = "AVAILABLE"
    created_at: float = field(default_factory=time.time)
    scheduled_at: float | None = None  # a recurring run's fire time; else created_at
    finished_at: float | None = None
    state: str = "PENDING"
    history: list[tuple[float, str]] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    execution: str = "queued"  # "simulated" or "executed" once decided
    error: str = ""
    seq: int = field(default_factory=lambda: next(_seq))

    def __post_init__(self) -> None:
        if not self.history:
            self.history.append((self.created_at, self.state))

    def set_state(self, state: str, at: float | None = None) -> None:
        at = at or time.time()
        self.state = state
        self.history.append((at, state))
        if state in FINAL_STATES:
            self.finished_at = at

    @property
    def done(self) -> bool:
        return self.state in FINAL_STATES

    def to_api(self) -> dict:
        out = {
            "run_id": self.run_id,
            "experiment_id": self.experiment_id,
            "display_name": self.display_name,
            "storage_state": self.storage_state,
            "created_at": rfc3339(self.created_at),
            "scheduled_at": rfc3339(self.scheduled_at or self.created_at),
            "state": self.state,
            "state_history": [{"update_time": rfc3339(t), "state": s} for t, s in self.history],
            "runtime_config": _runtime_config(self.params, self.pipeline_root),
            "run_details": {"task_details": [t.to_api(self.run_id) for t in self.tasks]},
            "plugins_output": {PLUGIN: self._plugin_output()},
        }
        _put(out, "description", self.description)
        _put(out, "finished_at", _ts(self.finished_at))
        _put(out, "service_account", self.service_account)
        _put(out, "recurring_run_id", self.recurring_run_id)
        if self.inline_spec:
            out["pipeline_spec"] = self.package.api_view()
        if self.version_ref:
            out["pipeline_version_reference"] = dict(self.version_ref)
            out["pipeline_version_id"] = self.version_ref["pipeline_version_id"]
        if self.error:
            out["error"] = {"code": 2, "message": self.error}
        return out

    def _plugin_output(self) -> dict:
        if not self.done:
            state = "PLUGIN_RUNNING"
        else:
            state = "PLUGIN_SUCCEEDED" if self.state == "SUCCEEDED" else "PLUGIN_FAILED"
        return {"entries": {"execution": {"value": self.execution}}, "state": state}


@dataclass(slots=True)
class RecurringRun:
    recurring_run_id: str
    display_name: str
    experiment_id: str
    trigger: dict
    package: Package
    description: str = ""
    inline_spec: bool = False
    version_ref: dict | None = None
    params: dict = field(default_factory=dict)
    pipeline_root: str = ""
    service_account: str = ""
    max_concurrency: int = 1
    no_catchup: bool = False
    enabled: bool = True
    namespace: str = ""
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    last_triggered: int | None = None  # the controller's status.trigger.lastTriggeredTime
    seq: int = field(default_factory=lambda: next(_seq))

    def to_api(self) -> dict:
        out = {
            "recurring_run_id": self.recurring_run_id,
            "display_name": self.display_name,
            "experiment_id": self.experiment_id,
            "trigger": self.trigger,
            "max_concurrency": str(self.max_concurrency),
            "no_catchup": self.no_catchup,
            "mode": "ENABLE" if self.enabled else "DISABLE",
            "status": "ENABLED" if self.enabled else "DISABLED",
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
            "runtime_config": _runtime_config(self.params, self.pipeline_root),
        }
        _put(out, "description", self.description)
        _put(out, "service_account", self.service_account)
        _put(out, "namespace", self.namespace)
        if self.inline_spec:
            out["pipeline_spec"] = self.package.api_view()
        if self.version_ref:  # toApiRecurringRun sets no pipeline_version_id
            out["pipeline_version_reference"] = dict(self.version_ref)
        return out


def _runtime_config(params: dict, pipeline_root: str) -> dict:
    out: dict = {"parameters": params}
    _put(out, "pipeline_root", pipeline_root)
    return out


# Keys a LIST filter or sort_by may name, per resource; KFP's short aliases (name, id) included.
PIPELINE_FIELDS = {
    "pipeline_id": lambda p: p.pipeline_id,
    "id": lambda p: p.pipeline_id,
    "name": lambda p: p.name,
    "display_name": lambda p: p.display_name,
    "description": lambda p: p.description,
    "namespace": lambda p: p.namespace,
    "created_at": lambda p: p.created_at,
}
VERSION_FIELDS = {
    "pipeline_version_id": lambda v: v.pipeline_version_id,
    "id": lambda v: v.pipeline_version_id,
    "name": lambda v: v.name,
    "display_name": lambda v: v.display_name,
    "description": lambda v: v.description,
    "created_at": lambda v: v.created_at,
}
EXPERIMENT_FIELDS = {
    "experiment_id": lambda e: e.experiment_id,
    "id": lambda e: e.experiment_id,
    "name": lambda e: e.display_name,
    "display_name": lambda e: e.display_name,
    "description": lambda e: e.description,
    "namespace": lambda e: e.namespace,
    "storage_state": lambda e: e.storage_state,
    "created_at": lambda e: e.created_at,
}
RUN_FIELDS = {
    "run_id": lambda r: r.run_id,
    "id": lambda r: r.run_id,
    "name": lambda r: r.display_name,
    "display_name": lambda r: r.display_name,
    "description": lambda r: r.description,
    "experiment_id": lambda r: r.experiment_id,
    "recurring_run_id": lambda r: r.recurring_run_id,
    "state": lambda r: r.state,
    "storage_state": lambda r: r.storage_state,
    "created_at": lambda r: r.created_at,
    "scheduled_at": lambda r: r.scheduled_at or r.created_at,
    "finished_at": lambda r: r.finished_at,
    "pipeline_version_id": lambda r: (r.version_ref or {}).get("pipeline_version_id"),
}
RECURRING_FIELDS = {
    "recurring_run_id": lambda j: j.recurring_run_id,
    "id": lambda j: j.recurring_run_id,
    "name": lambda j: j.display_name,
    "display_name": lambda j: j.display_name,
    "experiment_id": lambda j: j.experiment_id,
    "created_at": lambda j: j.created_at,
    "updated_at": lambda j: j.updated_at,
}


class Store:
    """Every resource by id; the event loop that serves the API is its only writer."""

    def __init__(self) -> None:
        self.pipelines: dict[str, Pipeline] = {}
        self.versions: dict[str, Version] = {}
        self.experiments: dict[str, Experiment] = {}
        self.runs: dict[str, Run] = {}
        self.recurring: dict[str, RecurringRun] = {}
        default = Experiment(new_id(), "Default", "All runs created without an experiment.")
        self.default_experiment_id = default.experiment_id
        self.experiments[default.experiment_id] = default

    def get(self, table: str, key: str, what: str):
        found = getattr(self, table).get(key)
        if found is None:
            raise LookupError(f"{what} {key!r} not found")
        return found

    def pipeline_by_name(self, name: str, namespace: str = "") -> Pipeline | None:
        for p in self.pipelines.values():
            if p.name == name and p.namespace == (namespace or ""):
                return p
        return None

    def versions_of(self, pipeline_id: str) -> list[Version]:
        return [v for v in self.versions.values() if v.pipeline_id == pipeline_id]

    def latest_version(self, pipeline_id: str) -> Version:
        versions = self.versions_of(pipeline_id)
        if not versions:
            raise LookupError(f"pipeline {pipeline_id!r} has no versions")
        return max(versions, key=lambda v: v.seq)

    def resolve_experiment(self, experiment_id: str | None) -> str:
        if not experiment_id:
            return self.default_experiment_id
        self.get("experiments", experiment_id, "experiment")
        return experiment_id
