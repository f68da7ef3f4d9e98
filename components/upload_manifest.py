"""The runs benchmark's first phase: upload the staged manifest and create the experiment."""

from kfp.dsl import Dataset, Input, Output
from kfp_bench.components._step import step


@step("kfp", "stats")
def upload_manifest(
    kfp_host: str,
    namespace: str,
    manifest: Input[Dataset],
    num_runs: int,
    create_concurrency: int,
    poll_interval_sec: float,
    run_timeout_sec: float,
    run_parameters: dict,
    run_node_selector: dict,
    benchmark_id: str,
    job_id: str,
    enabled: bool,
    runs: Output[Dataset],
) -> str:
    """Upload the child pipeline as this benchmark's pipeline and create its experiment
    (kfp_bench.kfp.phases.upload), after one /metrics scrape of the KFP API server.

    Args:
        kfp_host: the KFP API.
        namespace: the namespace of multi-user KFP; empty for standalone.
        manifest: the child pipeline, from stage_manifest.
        num_runs: runs to create.
        create_concurrency: runs created at once.
        poll_interval_sec: seconds between poll rounds.
        run_timeout_sec: seconds after which unfinished runs are terminated.
        run_parameters: each run's parameters.
        run_node_selector: the runs' node selector, passed as their node_selector parameter.
        benchmark_id: the id in every name the benchmark creates; empty: derived from job_id,
            as cleanup does.
        job_id: the pipeline run's id.
        enabled: false when the runs benchmark is switched off: the step only says so.
        runs: a directory: handle.json, phases.json and api_calls.jsonl, for spawn_runs.

    Returns:
        The benchmark handle (kfp_bench.kfp.phases.BenchmarkHandle) as JSON; empty when off.
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
        benchmark_id=benchmark_id,
    )
    return steps.upload_manifest(p, job_id, manifest.path, enabled, runs.path)
