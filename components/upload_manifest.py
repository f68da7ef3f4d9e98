"""The runs benchmark's first phase: upload the staged manifest and create the experiment."""

from kfp import dsl
from kfp.dsl import Dataset, Input, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kfp", "stats"),
    embedded_artifact_path=engine("kfp", "stats"),
)
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
    (kfp_bench.kfp.upload), after one /metrics scrape of the KFP API server.

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
        The benchmark handle (kfp_bench.kfp.BenchmarkHandle) as JSON; empty when switched off.
    """
    import dataclasses
    import os

    from kfp_bench.failpoint import fail_point
    from kfp_bench.kfp import upload
    from kfp_bench.params import BenchParams, benchmark_id_for

    os.makedirs(runs.path, exist_ok=True)
    if not enabled:
        print("runs benchmark switched off (run_benchmark=false)")
        return ""
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
    opts = dataclasses.replace(
        p.runs_options(benchmark_id_for(benchmark_id, job_id)), pipeline=manifest.path
    )
    handle = upload(opts, out_dir=runs.path)
    print(f"pipeline {handle.pipeline_id}, experiment {handle.experiment_id}")
    fail_point("upload_manifest")
    return handle.to_json()
