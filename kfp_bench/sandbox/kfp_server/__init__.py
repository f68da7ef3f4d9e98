"""A local Kubeflow Pipelines API server (v2beta1) that really runs pipelines.

It serves the paths of the official swagger that kfp.Client and kfp-bench's driver use: healthz;
pipelines (multipart upload and upload_version, create from a package_url, versions, get, list,
tags, PATCH of display name and tags, delete with cascade);
experiments; runs (create, get, list with filter/page_token/page_size/sort_by, delete, terminate,
archive, retry); recurring runs (KFP's cron and interval triggers, catch-up, max_concurrency,
enable/disable, as KFP's ScheduledWorkflow controller fires them).
Run it as::

    python -m kfp_bench.sandbox.kfp_server --port 8888 [--max-parallel-runs K]
        [--persistence-delay S] [--latency-ms X]
        [--error-rate E [--error-ops OPS] [--error-after]] [--simulate DIST] [--state-dir DIR]
        [--seed N] [--token-file FILE] [--backend-version VERSION]

or from Python with ``start_kfp_server(port=0, **options)`` (a context manager with ``.url``,
``.stop()``). Modules:

* ``server``: options, command line (``add_arguments``, ``main``) and ``start_kfp_server``.
* ``app`` / ``pipelines`` / ``replies``: the HTTP routes (aiohttp) and the shape of answers;
  ``gateway``: what KFP's grpc-gateway answers around them (error bodies, body and query
  decoding, routing errors).
* ``store``: the resources and their JSON; ``listing``: filters, sorting, page tokens;
  ``validation``: the name lengths KFP's columns allow.
* ``executor``: the run queue (``--max-parallel-runs``), the persistence agent's delay
  (``--persistence-delay``), real and simulated execution;
  ``_runner``: the child process that runs one pipeline with kfp.local's SubprocessRunner;
  ``envs``: the cached isolated environments its tasks run in; ``simulate``: ``--simulate``.
* ``metrics``: ``/metrics``, credentials seen and the fault middleware; ``faults``: which
  requests ``--error-rate`` faults, and whether before or after handling.
* ``cron``: recurring-run triggers and scheduler.
* ``authn``: ``--token-file``, the bearer token every API request must then carry.

healthz reports ``tag_name`` 2.17.0 (the release of the swagger it follows) and that swagger's
``commit_sha``; ``--backend-version`` makes it report another release, e.g. to act as an old one.

A simulated run says so in ``plugins_output["kfp-bench"].entries["execution"].value``
(``"simulated"``; ``"executed"`` for a run kfp.local executed). Nothing here is imported until
used: ``python -m kfp_bench.sandbox.kfp_server`` must not find its modules already imported.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kfp_bench.sandbox.kfp_server.server import (
        KfpServerHandle,
        KfpServerOptions,
        add_arguments,
        main,
        start_kfp_server,
    )
    from kfp_bench.sandbox.kfp_server.store import PLUGIN

_EXPORTS = {
    "KfpServerHandle": "server",
    "KfpServerOptions": "server",
    "add_arguments": "server",
    "main": "server",
    "start_kfp_server": "server",
    "PLUGIN": "store",
}

__all__ = [
    "PLUGIN",
    "KfpServerHandle",
    "KfpServerOptions",
    "add_arguments",
    "main",
    "start_kfp_server",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
