"""Which tasks of a compiled pipeline spec run on KFP's Argo backend when some tasks fail: the
rules of kubeflow/pipelines 7b70c7b ``backend/src/v2/compiler/argocompiler/dag.go`` (and of the
driver, ``backend/src/v2/driver/resolve.go``) applied to the spec, as no Argo can run here.

The rules, each from the source:
- ``depends()`` (dag.go:713): a task starts only when every dependency ``.Succeeded``; the
  dependencies are ``dependentTasks`` plus the producers of its inputs
  (``addImplicitDependencies``, dag.go:655).
- A task whose trigger strategy is ALL_UPSTREAM_TASKS_COMPLETED is no task of its DAG: the first
  loop of ``DAG()`` (dag.go:63-110) makes it a template of its own, set as the exit lifecycle hook
  of EACH of its dependencies (``taskToExitTemplate[dep] = name``; a later exit task overwrites
  an earlier one's entry). It runs once per dependency that ends, whatever its phase.
- ``task()`` hands an iterator (ParallelFor) task to ``iteratorTask()`` without the exit
  template (dag.go:243-246): a hook on a loop is dropped, and its task never runs.
- The hook's template holds that task alone (dag.go:94-104), so a task of the DAG that depends on
  it names a task its template lacks, which Argo's validation refuses: :class:`Invalid`.
- A task reading an output of a task that did not succeed fails in its driver; so does one
  collecting (``dsl.Collected``) over a loop with a failed iteration: ``CollectInputs``
  (resolve.go:869) reads each iteration's outputs and has none for a failed one.
- Conditions (``triggerPolicy.condition``) are evaluated by the driver; a task skipped by its
  condition does not succeed, so nothing depending on it starts. ``dsl.Else`` is the negation
  of its ``dsl.If`` (``!(...)``).
- ``dsl.OneOf`` over the branches of an If/Else is an output of their DAG: for a parameter the
  2.15.0 driver takes the first selector whose task completed and fails when none did
  (kubeflow/pipelines 2.15.0 ``backend/src/v2/driver/resolve.go``:1049-1077); for an artifact it
  takes the last selector whatever ran (resolve.go:1025-1028; fixed in 2.17.0 by 456c72a6c1),
  which this imitation refuses as :class:`Invalid`.
- A task with a ``retryPolicy`` gets an Argo retryStrategy on its executor (argocompiler
  container.go:379-392, 586-592) with no retryPolicy of its own, so Argo's default OnFailure
  applies (argo-workflows f016ad89eb pkg/apis/workflow/v1alpha1/workflow_types.go:2396-2403,
  workflow/controller/operator.go:1166): a pod that dies (Failed) runs again, up to
  ``maxRetryCount`` times; what the new attempt does is the task's own code (``Scenario``).
A failed exit hook is not counted as failing its DAG: the run's FAILED must come from the tasks.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

SUCCEEDED, FAILED, SKIPPED = "Succeeded", "Failed", "Skipped"
ALL_COMPLETED = "ALL_UPSTREAM_TASKS_COMPLETED"


class Invalid(Exception):
    """The spec compiles to a Workflow that Argo refuses, or to a hook that is dropped."""


@dataclass
class Scenario:
    """What happens at run time: the container tasks (by task name, any iteration) that fail,
    the pipeline's parameter values the conditions read, and how many iterations a loop has."""

    fails: set[str]
    params: dict
    iterations: int = 2
    #: what a task's run decides beyond ``fails``: name -> function of the runs so far
    decides: dict = field(default_factory=dict)
    #: container tasks whose first attempt's pod dies (each iteration); a retry, if the task
    #: has one, runs and decides as above
    dies: set[str] = field(default_factory=set)


@dataclass
class Run:
    ran: Counter = field(default_factory=Counter)  # container tasks started, by name
    phases: dict = field(default_factory=dict)  # last phase of each task, by name
    phase: str = SUCCEEDED


def _strategy(task: dict) -> str:
    return task.get("triggerPolicy", {}).get("strategy", "")


def _producers(task: dict) -> set[str]:
    """The tasks whose outputs ``task`` reads (addImplicitDependencies' producers)."""
    inputs = task.get("inputs", {})
    found = {
        s.get("taskOutputParameter", {}).get("producerTask")
        for s in inputs.get("parameters", {}).values()
    }
    found |= {
        s.get("taskOutputArtifact", {}).get("producerTask")
        for s in inputs.get("artifacts", {}).values()
    }
    return {p for p in found if p}


def _deps(task: dict) -> list[str]:
    return sorted(set(task.get("dependentTasks", [])) | _producers(task))


def _condition(text: str, params: dict) -> bool:
    """The two condition shapes the SDK writes for ``p == True`` and ``p != ''``, and the
    negation of either (``dsl.Else``)."""
    if text.startswith("!(") and text.endswith(")"):
        return not _condition(text[2:-1], params)
    name = text.split("pipelinechannel--", 1)[1].split("'", 1)[0]
    value = params[name]
    if " == true" in text:
        return value is True
    if " != ''" in text:
        return value != ""
    raise AssertionError(f"a condition this imitation does not read: {text}")


class Pipeline:
    def __init__(self, spec: dict):
        self.components = spec["components"]
        self.root = spec["root"]
        self._tasks: dict[str, dict] = {}  # every task met so far, by name

    def run(self, scenario: Scenario) -> Run:
        run = Run()
        ok = self._dag(self.root["dag"], scenario, run)
        run.phase = SUCCEEDED if ok else FAILED
        return run

    def _dag(self, dag: dict, s: Scenario, run: Run) -> bool:
        """Run one DAG template; True when every task of it succeeded or was skipped."""
        tasks = dag["tasks"]
        self._tasks.update(tasks)
        exits = {n: t for n, t in tasks.items() if _strategy(t) == ALL_COMPLETED}
        hooks: dict[str, str] = {}
        for name in sorted(exits):
            for dep in _deps(exits[name]):
                hooks[dep] = name
        main = {n: t for n, t in tasks.items() if n not in exits}
        for name, task in main.items():
            for dep in _deps(task):
                if dep not in main:
                    raise Invalid(f"{name} depends on {dep}, which is in a hook's template only")
        for dep, name in hooks.items():
            if "parameterIterator" in main.get(dep, {}):
                raise Invalid(f"{name} is the exit hook of the loop {dep}: dag.go drops it")
        phase: dict[str, str] = {}
        pending = dict(main)
        while pending:
            ready = [n for n, t in pending.items() if all(d in phase for d in _deps(t))]
            assert ready, f"a cycle among {sorted(pending)}"
            for name in sorted(ready):
                task = pending.pop(name)
                if all(phase[d] == SUCCEEDED for d in _deps(task)):
                    phase[name] = self._task(name, task, phase, s, run)
                else:
                    phase[name] = SKIPPED  # Argo omits it: a dependency did not succeed
                if name in hooks and phase[name] != SKIPPED:
                    self._task(hooks[name], exits[hooks[name]], phase, s, run)
        run.phases.update(phase)
        return all(p != FAILED for p in phase.values())

    def _task(self, name: str, task: dict, phase: dict, s: Scenario, run: Run) -> str:
        if not self._resolves(task, phase, run):
            return FAILED  # the driver cannot resolve its inputs
        condition = task.get("triggerPolicy", {}).get("condition")
        if condition and not _condition(condition, s.params):
            return SKIPPED
        comp = self.components[task["componentRef"]["name"]]
        if "dag" in comp:
            n = s.iterations if "parameterIterator" in task else 1
            results = [self._dag(comp["dag"], s, run) for _ in range(n)]
            return SUCCEEDED if all(results) else FAILED
        run.ran[name] += 1
        if name in s.dies:
            if task.get("retryPolicy", {}).get("maxRetryCount", 0) < 1:
                phase[name] = FAILED
                return FAILED
            run.ran[name] += 1  # Argo's retry: a new pod
        failed = name in s.fails or (name in s.decides and s.decides[name](run))
        phase[name] = FAILED if failed else SUCCEEDED
        return phase[name]

    def _resolves(self, task: dict, phase: dict, run: Run) -> bool:
        """Every upstream output it reads comes from a task that succeeded (a loop included:
        CollectInputs has no output of a failed iteration); an output of dsl.OneOf, from a
        branch that ran."""
        for producer in _producers(task):
            if phase.get(producer) != SUCCEEDED:
                return False
            outputs = self.components[self._ref(producer)].get("dag", {}).get("outputs", {})
            for spec in outputs.get("artifacts", {}).values():
                if len(spec.get("artifactSelectors", [])) > 1:
                    raise Invalid(f"{producer}: a dsl.OneOf of artifacts, which 2.15.0 takes from "
                                  "its last branch whatever ran")  # fmt: skip
            for spec in outputs.get("parameters", {}).values():
                chosen = spec.get("valueFromOneof", {}).get("parameterSelectors")
                if chosen and not any(run.phases.get(c["producerSubtask"]) == SUCCEEDED
                                      for c in chosen):  # fmt: skip
                    return False
        return True

    def _ref(self, name: str) -> str:
        return self._tasks[name]["componentRef"]["name"]
