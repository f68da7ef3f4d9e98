"""The runs benchmark's third phase: poll the child runs until final, and summarize."""

from kfp.dsl import Dataset, Input, Output
from kfp_bench.components._step import step


@step("kfp", "stats")
def poll_runs(
    handle: str,
    spawned: Input[Dataset],
    kfp_host: str,
    namespace: str,
    num_runs: int,
    create_concurrency: int,
    poll_interval_sec: float,
    run_timeout_sec: float,
    run_parameters: dict,
    run_node_selector: dict,
    runs: Output[Dataset],
):
    """LIST the benchmark's runs page by page until all are final, terminating those still
    running run_timeout_sec after the spawn started (kfp_bench.kfp.phases.poll); the exit
    handler's cleanup deletes them afterwards.

    Args:
        handle: the benchmark handle from upload_manifest; empty: switched off, only says so.
        spawned: spawn_runs' directory, carried on with this step's calls appended.
        kfp_host: the KFP API.
        namespace: the namespace of multi-user KFP; empty for standalone.
        num_runs: runs the benchmark asked for.
        create_concurrency: runs created at once (also the terminate calls made at once).
        poll_interval_sec: seconds between poll rounds.
        run_timeout_sec: seconds after which unfinished runs are terminated.
        run_parameters: each run's parameters (for the summary's options).
        run_node_selector: the runs' node selector (for the summary's options).
        runs: a directory: runs_summary.json, runs.jsonl and api_calls.jsonl of all three
            phases; empty when switched off.
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
    steps.poll_runs(p, handle, spawned.path, runs.path)
