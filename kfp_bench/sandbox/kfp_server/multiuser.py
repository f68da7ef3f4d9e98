"""What the local KFP API refuses in multi-user mode (``--multi-user``), as the real one does.

Multi-user KFP authorizes every request against a namespace (a SubjectAccessReview); a request
that gives none is refused before any authorization with InvalidArgument (HTTP 400). The rules
the driver and kfp.Client meet, and their messages, from kubeflow/pipelines at 7b70c7b95f68:

* ``backend/src/apiserver/server/experiment_server.go`` ``canAccessExperiment``: "An experiment
  cannot have an empty namespace in multi-user mode", for CreateExperiment (wrapped "Failed to
  create a experiment: Failed to authorize the request: ...") and ListExperiments ("List
  experiments failed: Failed to authorize with API: ...").
* ``backend/src/apiserver/resource/resource_manager.go`` ``GetValidExperimentNamespacePair``: a
  run without an experiment id is refused, "Experiment id can not be empty in multi-user mode"
  (``run_server.go`` createRun: "Failed to create a new run: Failed to create a run due to
  invalid experimentId and namespace combination: ..."; ``job_server.go`` createJob for a
  recurring run: "Failed to create a recurring run: Failed to create a recurring run due to
  invalid experimentId and namespace combination: ..."); with one, the run takes its
  experiment's namespace.
* ``run_server.go`` listRuns / ``canAccessRun``: a LIST of runs with neither namespace nor
  experiment_id, "A run cannot have an empty namespace in multi-user mode".

Pipelines stay as they are: a pipeline without namespace is a shared one, which multi-user KFP
lets anyone read (``pipeline_server.go`` ``canAccessPipeline``). The errors are UserErrors, whose
status message is the wrapped chain and whose one detail is the same code (``gateway.py``).
"""

from __future__ import annotations

_EXPERIMENT = "An experiment cannot have an empty namespace in multi-user mode"
_RUN = "A run cannot have an empty namespace in multi-user mode"
_PAIR = "Experiment id can not be empty in multi-user mode"


class NamespaceRequired(ValueError):
    """A request multi-user KFP refuses for want of a namespace: 400 INVALID_ARGUMENT."""


def create_experiment(namespace: str) -> None:
    if not namespace:
        raise NamespaceRequired(
            f"Failed to create a experiment: Failed to authorize the request: {_EXPERIMENT}"
        )


def list_experiments(namespace: str) -> None:
    if not namespace:
        raise NamespaceRequired(
            f"List experiments failed: Failed to authorize with API: {_EXPERIMENT}"
        )


def create_run(experiment_id: str, recurring: bool = False) -> None:
    if not experiment_id:
        what = ("a recurring run", "a recurring run") if recurring else ("a new run", "a run")
        raise NamespaceRequired(
            f"Failed to create {what[0]}: Failed to create {what[1]} due to invalid experimentId "
            f"and namespace combination: {_PAIR}"
        )


def list_runs(namespace: str, experiment_id: str) -> None:
    if not namespace and not experiment_id:
        raise NamespaceRequired(
            "Failed to list runs: Failed to list runs due to authorization error. Check if you "
            f"have permission to access namespace : {_RUN}"
        )
