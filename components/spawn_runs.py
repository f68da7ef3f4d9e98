"""The runs benchmark's second phase: create the child runs at bounded concurrency."""

from kfp.dsl import Dataset, Input, Output
from kfp_bench.components._step import step


@step("kfp", "stats")
def spawn_runs(
    handle: str,
    uploaded: Input[Dataset],
    kfp_host: str,
    namespace: str,
    num_runs: int,
    create_concurrency: int,
    poll_interval_sec: float,
    run_timeout_sec: float,
    run_parameters: dict,
    run_node_selector: dict,
    runs: Output[Dataset],
) -> int:
    """Create num_runs runs of the uploaded pipeline in the benchmark's experiment,
    create_concurrency at a time (kfp_bench.kfp.phases.spawn).

    Args:
        handle: the benchmark handle from upload_manifest; empty: switched off, only says so.
        uploaded: upload_manifest's directory, carried on with this step's calls appended.
        kfp_host: the KFP API.
        namespace: the namespace of multi-user KFP; empty for standalone.
        num_runs: runs to create.
        create_concurrency: runs created at once.
        poll_interval_sec: seconds between poll rounds.
        run_timeout_sec: seconds after which unfinished runs are terminated.
        run_parameters: each run's parameters.
        run_node_selector: the runs' node selector, passed as their node_selector parameter.
        runs: a directory: uploaded's files, the created run ids in phases.json, for poll_runs.

    Returns:
        How many runs were created.
    """
    from kfp_bench import steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
        kfp_host=kfp_host,
        namespace=namespace,
        num_runs=num_runs,
        create_concurrency=create_concurrency,
        poll_interval_sec=poll_interval_sec,
        run_timeout_sec=run_timeout_sec,
        run_parameters=run_parameters,
        run_node_selector=run_node_selector,
    )
    return steps.spawn_runs(p, handle, uploaded.path, runs.path)
