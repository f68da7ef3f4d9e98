"""The server's state: pipelines, versions, experiments, runs and recurring runs, in memory.

This module owns the resources and how each one is shown in the API (``to_api``: JSON field names
exactly as the v2beta1 swagger has them, unset fields left out as proto3 JSON does) and the
store's own rules. Times are whole seconds, as KFP's ``*InSec`` columns hold them, and the
answer carries every timestamp KFP's converter always sets (the epoch when unset):
kubeflow/pipelines 7b70c7b95f ``backend/src/apiserver/server/api_converter.go``.
Resources are mutable slotted dataclasses, not frozen ones: a run's state,
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
import json
import uuid
from dataclasses import dataclass, field

from kfp_bench.sandbox.kfp_server.specs import Package
from kfp_bench.sandbox.kfp_server.timefmt import now_s, rfc3339

PLUGIN = "kfp-bench"
FINAL_STATES = frozenset({"SUCCEEDED", "FAILED", "CANCELED", "SKIPPED"})
#: what a run gets without a service account of its own: template/template.go:317-328
#: (setDefaultServiceAccount) with common/const.go:59
DEFAULT_SERVICE_ACCOUNT = "pipeline-runner"
#: the v1 "status" column (Conditions) of each state: model/run.go:124-142 (ToV1)
_CONDITIONS = {"PENDING": "Pending", "PAUSED": "Pending", "RUNNING": "Running",
               "SUCCEEDED": "Succeeded", "SKIPPED": "Skipped", "FAILED": "Failed",
               "CANCELED": "Failed", "CANCELING": "Terminating"}  # fmt: skip
_seq = itertools.count(1)


def new_id() -> str:
    return str(uuid.uuid4())


def _put(out: dict, key: str, value) -> None:
    if value not in (None, "", {}, []):
        out[key] = value


def _history(history: list[tuple[float, str]]) -> list[dict]:
    """state_history as api_converter.go:2594-2607 writes it: update_time only when set."""
    out = []
    for t, state in history:
        out.append({"update_time": rfc3339(t), "state": state} if t else {"state": state})
    return out


@dataclass(slots=True)
class Pipeline:
    pipeline_id: str
    name: str
    display_name: str
    description: str = ""
    namespace: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    created_at: int = field(default_factory=now_s)
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
        _put(out, "tags", dict(self.tags))
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
    package_url: str = ""
    tags: dict[str, str] = field(default_factory=dict)
    created_at: int = field(default_factory=now_s)
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
        if self.package_url:  # api_converter.go:541-546
            out["package_url"] = {"pipeline_url": self.package_url}
        _put(out, "tags", dict(self.tags))
        return out


@dataclass(slots=True)
class Experiment:
    experiment_id: str
    display_name: str
    description: str = ""
    namespace: str = ""
    storage_state: str = "AVAILABLE"
    last_run_created_at: float | None = None
    created_at: int = field(default_factory=now_s)
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
        out["last_run_created_at"] = rfc3339(self.last_run_created_at)  # api_converter.go:165
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
            # api_converter.go:1913-1915: the three times always, the epoch when unset
            "create_time": rfc3339(self.create_time),
            "start_time": rfc3339(self.start_time),
            "end_time": rfc3339(self.end_time),
            "state": self.state,
            "state_history": _history(self.history),
        }
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
    created_at: int = field(default_factory=now_s)
    scheduled_at: int | None = None  # a recurring run's fire time; else created_at
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
        """Move to ``state``; the history grows only when the state changes
        (storage/run_store.go:706-711), in whole seconds as the store keeps it."""
        at = int(at) if at else now_s()
        self.state = state
        if not self.history or self.history[-1][1] != state:
            self.history.append((at, state))
        if state in FINAL_STATES:
            self.finished_at = at

    @property
    def done(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def conditions(self) -> str:
        return _CONDITIONS.get(self.state, "Unknown")

    def to_api(self) -> dict:
        """toApiRun (api_converter.go:1566-1660): the three times always (scheduled_at is
        created_at, resource_manager.go:760-763), run_details only once there are tasks,
        runtime_config only when it holds something; never the deprecated
        pipeline_version_id."""
        out = {
            "run_id": self.run_id,
            "experiment_id": self.experiment_id,
            "display_name": self.display_name,
            "storage_state": self.storage_state,
            "created_at": rfc3339(self.created_at),
            "scheduled_at": rfc3339(self.scheduled_at or self.created_at),
            "finished_at": rfc3339(self.finished_at),
            "state": self.state,
            "state_history": _history(self.history),
            "plugins_output": {PLUGIN: self._plugin_output()},
        }
        if self.params or self.pipeline_root:
            out["runtime_config"] = _runtime_config(self.params, self.pipeline_root)
        if self.tasks:
            out["run_details"] = {"task_details": [t.to_api(self.run_id) for t in self.tasks]}
        _put(out, "description", self.description)
        _put(out, "service_account", self.service_account)
        _put(out, "recurring_run_id", self.recurring_run_id)
        if self.inline_spec:
            out["pipeline_spec"] = self.package.api_view()
        if self.version_ref:
            out["pipeline_version_reference"] = dict(self.version_ref)
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
    created_at: int = field(default_factory=now_s)
    updated_at: int = field(default_factory=now_s)
    last_triggered: int | None = None  # the controller's status.trigger.lastTriggeredTime
    last_index: int = 0  # its status.trigger.lastIndex: how many runs it has made
    k8s_name: str = ""  # the ScheduledWorkflow's name, which its runs' names start with
    seq: int = field(default_factory=lambda: next(_seq))

    def to_api(self) -> dict:
        out = {
            "recurring_run_id": self.recurring_run_id,
            "display_name": self.display_name,
            "experiment_id": self.experiment_id,
            "trigger": self.trigger,
            "max_concurrency": str(self.max_concurrency),
            "mode": "ENABLE" if self.enabled else "DISABLE",
            "status": "ENABLED" if self.enabled else "DISABLED",
            "created_at": rfc3339(self.created_at),
            "updated_at": rfc3339(self.updated_at),
        }
        _put(out, "no_catchup", self.no_catchup or None)
        # toApiRecurringRun (api_converter.go:2340-2346): no runtime_config when it is empty
        config: dict = {}
        _put(config, "parameters", self.params)
        _put(config, "pipeline_root", self.pipeline_root)
        _put(out, "runtime_config", config)
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


# Keys a LIST filter or sort_by may name, per resource, as the APIToModelFieldMap of each model
# has them (v1 aliases included), with the value of the column each stands for:
# model/pipeline.go:78-86, model/pipeline_version.go:78-89, model/experiment.go:54-64,
# model/run.go:386-403, model/job.go:217-225.
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
    "status": lambda v: "READY",
    "pipeline_spec": lambda v: json.dumps(v.package.pipeline_spec),
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
    "last_run_created_at": lambda e: e.last_run_created_at or 0,
}
RUN_FIELDS = {
    "run_id": lambda r: r.run_id,
    "id": lambda r: r.run_id,
    "name": lambda r: r.display_name,
    "display_name": lambda r: r.display_name,
    "description": lambda r: r.description,
    "experiment_id": lambda r: r.experiment_id,
    "namespace": lambda r: r.namespace,
    "recurring_run_id": lambda r: r.recurring_run_id,
    "state": lambda r: r.state,
    "status": lambda r: r.conditions,
    "storage_state": lambda r: r.storage_state,
    "created_at": lambda r: r.created_at,
    "scheduled_at": lambda r: r.scheduled_at or r.created_at,
    "finished_at": lambda r: r.finished_at or 0,
    "state_history": lambda r: json.dumps(_history(r.history)),
    "runtime_details": lambda r: "",
}
RECURRING_FIELDS = {
    "recurring_run_id": lambda j: j.recurring_run_id,
    "id": lambda j: j.recurring_run_id,
    "name": lambda j: j.display_name,
    "display_name": lambda j: j.display_name,
    "description": lambda j: j.description,
    "created_at": lambda j: j.created_at,
    "updated_at": lambda j: j.updated_at,
}
#: per field map: KFP's model name (in list errors) and how each LIST handler wraps a list
#: error (run_server.go:564-570, experiment_server.go:286-288, pipeline_server.go:530-532 and
#: :1057-1059, job_server.go:367-369); the id is each resource's primary key
LISTABLE = {
    id(PIPELINE_FIELDS): ("Pipeline", "Failed to list pipelines due invalid list options"),
    id(VERSION_FIELDS): ("PipelineVersion",
                         "Failed to list pipeline versions due invalid list options"),
    id(EXPERIMENT_FIELDS): ("Experiment", "Failed to create list options"),
    id(RUN_FIELDS): ("Run", "Failed to list runs: Failed to create list options"),
    id(RECURRING_FIELDS): ("Job", "Failed to list recurring runs due to error parsing the "
                           "listing options"),
}  # fmt: skip


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
