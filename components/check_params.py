"""The first step: check every pipeline parameter before anything is created."""

from kfp import dsl
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kfp"),
    embedded_artifact_path=engine(
        "kfp/api.py",
        "kfp/auth.py",
        "kfp/manifest.py",
        "kfp/options.py",
        "kserve/spec.py",
        "load/options.py",
    ),
)
def check_params(
    kfp_host: str,
    namespace: str,
    pipeline: str,
    run_benchmark: bool,
    num_runs: int,
    create_concurrency: int,
    poll_interval_sec: float,
    run_timeout_sec: float,
    run_parameters: dict,
    run_node_selector: dict,
    run_load: bool,
    inference_url: str,
    host_header: str,
    payload: str,
    duration_sec: float,
    concurrency: int,
    rate: float,
    load_workers: int,
    load_node_selector: dict,
    sweep_rates: str,
    sweep_step_sec: float,
    isvc: dict,
    token_secret: str,
    benchmark_id: str,
    job_id: str,
) -> list:
    """Check the pipeline's parameters (see kfp_bench.params.BenchParams); fail with one message
    naming the parameter and the fix.

    Args:
        kfp_host: see BenchParams; likewise every parameter up to benchmark_id.
        job_id: the pipeline run's id, from which an empty benchmark_id is derived.

    Returns:
        The load workers' indexes, over which the pipeline fans out (one Output: kfp.local
        iterates over a task's single Output only).
    """
    values = dict(locals())  # the parameters, before any import adds a name
    job_id = values.pop("job_id")
    from kfp_bench.params import BenchParams, benchmark_id_for

    p = BenchParams(**values).check()
    bid = benchmark_id_for(p.benchmark_id, job_id)
    print(f"parameters OK; benchmark id {bid}")
    return list(range(p.load_workers if p.run_load else 1))
