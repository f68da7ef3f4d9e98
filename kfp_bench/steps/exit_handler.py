"""The exit handler, cleanup: whatever state the benchmark ended in, delete its InferenceService
(only one labelled with its benchmark id), sweep the KFP server for what it made and give back
its lease.
"""

from __future__ import annotations

import dataclasses

from kfp_bench.errors import BenchError, ConfigError
from kfp_bench.steps.auth import token_auth
from kfp_bench.steps.ids import benchmark_id_for
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.start import release_lease

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).


def cleanup(p: BenchParams, job_id: str, state: str, error: str) -> str:
    """Delete this benchmark's InferenceService (only one labelled with its benchmark id) and
    sweep the KFP server for its runs, experiment and pipeline and its load workers' start marks
    (``kfp_bench.kfp.start_mark``), whatever state it ended in; what was deleted, or left alone
    as not ours, in one line."""
    print(f"benchmark ended {state}" + (f": {error}" if error else ""))
    try:  # the exit handler reads the pipeline's own parameters: decided as check_params did
        p = p.with_namespace()
    except ConfigError as exc:  # multi-user and no namespace: the first step refused it too
        return f"nothing to clean up: {exc}"
    isvc_done = ""
    if p.isvc:
        from kfp_bench.kserve.deploy import delete
        from kfp_bench.kserve.kube import Kube

        try:
            spec, owner = p.isvc_spec(), benchmark_id_for(p.benchmark_id, job_id)
        except ConfigError as exc:  # refused by the first step: nothing was deployed
            spec, isvc_done = None, f"no InferenceService: {exc}; "
        if spec is not None:
            # a user's or another benchmark's InferenceService of that name is not ours to delete
            what = delete(Kube(spec.namespace), spec.name, benchmark_id=owner, wait_s=120.0)
            isvc_done = f"InferenceService {spec.name} {what}; "
            print(isvc_done)
    if not (p.run_benchmark or p.run_load or p.run_llm):  # the load workers' start marks too
        return isvc_done + "nothing to clean up: the runs benchmark and the loads were off"
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    try:
        bid = benchmark_id_for(p.benchmark_id, job_id)
        auth = token_auth(p.namespace, p.kfp_host, p.token_secret)  # the pod's, if multi-user
        opts = CleanupOptions(host=p.kfp_host, benchmark_id=bid, auth=auth)
        done = sweep(opts)
        if p.run_benchmark and p.fill_runs:  # the full-database fill's own id (kfp.fill)
            from kfp_bench.kfp.fill import fill_id

            filled = sweep(dataclasses.replace(opts, benchmark_id=fill_id(bid)))
            done["failed"] += filled["failed"]
            for kind, n in filled["deleted"].items():
                done["deleted"][kind] += n
    except ConfigError as exc:  # a bad kfp_host or id: the first step failed, nothing was made
        return f"nothing to clean up: {exc}"
    # also after a failed sweep: the error names what remains; only run_benchmark takes a lease
    released = release_lease(p, bid) if p.run_benchmark else "no lease taken"
    if done["failed"]:
        raise BenchError(
            f"cleanup of benchmark {bid} failed: {'; '.join(done['failed'])}; {released}"
        )
    d = done["deleted"]
    return isvc_done + (
        f"benchmark {bid}: deleted {d['runs']} runs, {d['experiments']} experiments, "
        f"{d['pipeline_versions']} pipeline versions, {d['pipelines']} pipelines; {released}"
    )
