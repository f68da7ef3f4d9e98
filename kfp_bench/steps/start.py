"""The first step, check_params, and the benchmark's lease on the KFP server.

``check_params`` checks every parameter (``BenchParams.check``), probes the targets
(``kfp_bench.steps.probe``) and takes the lease (``kfp_bench.kfp.lease``) that keeps two
benchmarks of one benchmark_id from running at once; the exit handler gives it back
(``release_lease``). Engine imports sit inside the functions: a step's pod installs only its own
extra of kfp-bench (the ``@step`` mark of its component).
"""

from __future__ import annotations

import dataclasses
import os
import time

import kfp_bench
from kfp_bench.errors import BenchError, ConfigError
from kfp_bench.steps.auth import token_auth
from kfp_bench.steps.checks import ignored
from kfp_bench.steps.ids import benchmark_id_for
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.probe import probe, probe_llm
from kfp_bench.steps.runs_params import runs_options

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).


def check_params(p: BenchParams, job_id: str) -> dict:
    """Check every parameter (``BenchParams.check``), then take the benchmark's lease
    (``take_lease``); return the parameters, as every later step reads them, with this run's
    own benchmark id (``benchmark_id_for``: the given one is a prefix) and namespace
    (``BenchParams.with_namespace``: an empty one becomes the pod's own on multi-user KFP)."""
    print(f"kfp-bench {kfp_bench.__version__} from {os.path.dirname(kfp_bench.__file__)}")
    p.check()
    p = p.with_namespace()  # decided once: every later step reads it from what this returns
    bid = benchmark_id_for(p.benchmark_id, job_id)
    print(f"parameters OK; benchmark id {bid} (pipeline run {job_id})")
    if note := ignored(p):  # a part switched off for this run: named, not refused
        print(note)
    # The targets answer before anything is created or held (a refused benchmark then holds
    # no lease, and its cleanup releases nothing).
    for line in probe(p):
        print(line)
    if p.run_llm and p.llm_url:
        line, model = probe_llm(p)
        print(line)
        p = dataclasses.replace(p, llm_model=model)  # the later steps ask for the model found
    if p.run_benchmark:
        print(take_lease(p, bid, job_id))
    return {**p.as_dict(), "benchmark_id": bid}


def kfp_api(p: BenchParams, bid: str):
    """A KFP API client of benchmark ``bid``, its host and token checked (``preflight``)."""
    from kfp_bench.kfp.api import KfpApi

    opts = runs_options(p, bid)
    api = KfpApi.of(opts)
    api.preflight()  # an unreachable host or refused token: a ConfigError, nothing created
    return api


def take_lease(p: BenchParams, bid: str, job_id: str) -> str:
    """Take the lease of ``p.benchmark_id`` for ``bid`` (``kfp_bench.kfp.lease``), waiting up to
    lease_wait_sec while another live benchmark holds it; when an expired one is taken over,
    sweep what its holder left (it was terminated or crashed: its exit handler did not clean
    up). What was done, in one line."""
    from kfp_bench.kfp import lease

    mine = lease.Lease(
        lease.lease_name(p.benchmark_id), bid, job_id, time.time() + lease.lease_ttl(p)
    )
    api = kfp_api(p, bid)
    try:
        got = lease.acquire(api, mine, wait_s=p.lease_wait_sec, poll_s=p.poll_interval_sec)
    finally:
        api.close()
    line = f"lease {got.lease.name} taken until {got.lease.describe().rsplit(', until ', 1)[1]}"
    if got.waited >= 1:
        line += f" after waiting {got.waited:.0f}s"
    if got.taken_over is not None:
        line += f"; took over the stale lease of {got.taken_over.describe()}; "
        line += _sweep_leftovers(p, got.taken_over.holder)
    return line


def _sweep_leftovers(p: BenchParams, holder: str) -> str:
    """Sweep the KFP server for what benchmark ``holder`` created; what was removed."""
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    try:
        opts = CleanupOptions(host=p.kfp_host, benchmark_id=holder, auth=token_auth(p.namespace))
        done = sweep(opts)
    except ConfigError as exc:  # a holder id no sweep takes: say so, nothing to find by it
        return f"its leftovers not swept: {exc}"
    d = done["deleted"]
    line = (
        f"swept its leftovers: {d['recurring_runs']} recurring runs, {d['runs']} runs, "
        f"{d['experiments']} experiments, {d['pipeline_versions']} pipeline versions, "
        f"{d['pipelines']} pipelines"
    )
    if done["failed"]:
        left = "; ".join(done["failed"])
        line += f"; NOT removed: {left} (kfp-bench cleanup --benchmark-id {holder})"
    return line


def release_lease(p: BenchParams, bid: str) -> str:
    """Give back the lease check_params took for ``bid``; one held by another is left alone."""
    from kfp_bench.kfp import lease

    try:
        api = kfp_api(p, bid)
        try:
            return lease.release(api, lease.lease_name(p.benchmark_id), bid)
        finally:
            api.close()
    except BenchError as exc:  # it expires, and the next run takes it over and sweeps
        return f"lease not released ({exc}): it expires and the next run takes it over"
