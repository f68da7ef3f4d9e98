"""Injected faults: which requests ``--error-rate`` answers with an error, and when.

This module owns the fault decision and the names of the API operations it can be limited to.
An operation's name is kfp_server_api's method name without its service prefix
(``run_service_create_run`` is ``create_run``), which is also the operation kfp-bench's driver
records in its ``ApiCall``s. It imports nothing heavy: ``KfpServerOptions`` checks
``--error-ops`` against ``OPERATIONS`` before a server is started.

Two moments a fault can strike, as on a real cluster:

* before (the default): the request never reaches its handler, so nothing is created or changed
  (an overloaded API server, a 503 from the ingress);
* after (``--error-after``): the handler runs, then its answer is replaced by the error, so a
  create creates and the client is told it failed (a proxy that timed out a call the server
  completed). A driver must find such resources by name to clean them up.
"""

from __future__ import annotations

import random

from kfp_bench.sandbox.kfp_server.routes import API as _API
from kfp_bench.sandbox.kfp_server.routes import EXPERIMENT as _E
from kfp_bench.sandbox.kfp_server.routes import PIPELINE as _P
from kfp_bench.sandbox.kfp_server.routes import RECURRING as _J
from kfp_bench.sandbox.kfp_server.routes import RUN as _R
from kfp_bench.sandbox.kfp_server.routes import VERSION as _V

#: (method, route template) -> operation name, for every /apis/ route the server serves.
OPERATIONS: dict[tuple[str, str], str] = {
    ("GET", f"{_API}/healthz"): "get_healthz",
    ("POST", f"{_API}/pipelines/upload"): "upload_pipeline",
    ("POST", f"{_API}/pipelines/upload_version"): "upload_pipeline_version",
    ("POST", f"{_API}/pipelines/create"): "create_pipeline_and_version",
    ("POST", f"{_API}/pipelines"): "create_pipeline",
    ("GET", f"{_API}/pipelines"): "list_pipelines",
    ("GET", f"{_API}/pipelines/names/{{name}}"): "get_pipeline_by_name",
    ("GET", _P): "get_pipeline",
    ("DELETE", _P): "delete_pipeline",
    ("PATCH", _P): "update_pipeline",
    ("GET", f"{_P}/versions"): "list_pipeline_versions",
    ("POST", f"{_P}/versions"): "create_pipeline_version",
    ("GET", _V): "get_pipeline_version",
    ("DELETE", _V): "delete_pipeline_version",
    ("PATCH", _V): "update_pipeline_version",
    ("POST", f"{_API}/experiments"): "create_experiment",
    ("GET", f"{_API}/experiments"): "list_experiments",
    ("GET", _E): "get_experiment",
    ("DELETE", _E): "delete_experiment",
    ("POST", f"{_E}:archive"): "archive_experiment",
    ("POST", f"{_E}:unarchive"): "unarchive_experiment",
    ("POST", f"{_API}/runs"): "create_run",
    ("GET", f"{_API}/runs"): "list_runs",
    ("GET", _R): "get_run",
    ("DELETE", _R): "delete_run",
    ("POST", f"{_R}:terminate"): "terminate_run",
    ("POST", f"{_R}:retry"): "retry_run",
    ("POST", f"{_R}:archive"): "archive_run",
    ("POST", f"{_R}:unarchive"): "unarchive_run",
    ("POST", f"{_API}/recurringruns"): "create_recurring_run",
    ("GET", f"{_API}/recurringruns"): "list_recurring_runs",
    ("GET", _J): "get_recurring_run",
    ("DELETE", _J): "delete_recurring_run",
    ("POST", f"{_J}:enable"): "enable_recurring_run",
    ("POST", f"{_J}:disable"): "disable_recurring_run",
}
OPERATION_NAMES = frozenset(OPERATIONS.values())
#: (HTTP status, google.rpc code, code name) of the injected errors, drawn with even odds; each is
#: answered as the gateway answers that code (``gateway.rpc_error``: google.rpc.Status, no details).
ERRORS = ((503, 14, "UNAVAILABLE"), (429, 8, "RESOURCE_EXHAUSTED"))


def parse_ops(text: str) -> frozenset[str]:
    """The operation names of ``--error-ops`` ("create_run,list_runs"); ValueError naming any
    unknown one. Empty text: every operation."""
    names = frozenset(n.strip() for n in (text or "").split(",") if n.strip())
    unknown = sorted(names - OPERATION_NAMES)
    if unknown:
        raise ValueError(
            f"unknown operations {unknown}; known: {', '.join(sorted(OPERATION_NAMES))}"
        )
    return names


class Faults:
    """Draws the injected error of each request, if any.

    Args:
        rate: fraction of the selected requests answered with an error.
        ops: operation names the rate applies to; empty: every /apis/ request.
        after: inject after the handler ran (see the module docstring), not before.
        seed: seed of the draws; only selected requests draw, so with a seed the number of
            faults among N selected requests does not depend on the other traffic.
    """

    def __init__(self, rate: float, ops: frozenset[str] = frozenset(), *, after: bool = False,
                 seed: int | None = None) -> None:  # fmt: skip
        self.rate = rate
        self.ops = ops
        self.after = after
        self.rng = random.Random(seed)

    def draw(self, method: str, route: str) -> tuple[int, int, str] | None:
        """(status, rpc code, message) of the error to answer with, or None."""
        if not self.rate:
            return None
        if self.ops and OPERATIONS.get((method, route)) not in self.ops:
            return None
        if self.rng.random() >= self.rate:
            return None
        status, code, name = self.rng.choice(ERRORS)
        when = " after handling" if self.after else ""
        return status, code, f"injected fault{when}: {name} (--error-rate)"
