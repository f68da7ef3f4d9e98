"""The exit step: delete whatever the benchmark created on the KFP server, even after a failure."""

from kfp import dsl
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kfp", "stats"),
    embedded_artifact_path=engine("kfp", "stats"),
)
def cleanup(
    kfp_host: str,
    namespace: str,
    benchmark_id: str,
    job_id: str,
    run_benchmark: bool,
    status: dsl.PipelineTaskFinalStatus,
) -> str:
    """Sweep the KFP server for the runs, experiment and pipeline of this benchmark
    (kfp_bench.kfp.sweep), whatever the state the benchmark ended in.

    Args:
        kfp_host: the KFP API.
        namespace: the namespace of multi-user KFP; empty for standalone.
        benchmark_id: the benchmark_id parameter; empty: derived from job_id, as the first step
            does.
        job_id: the pipeline run's id.
        run_benchmark: whether the runs benchmark was switched on (nothing to sweep otherwise).
        status: the final status of the benchmark's steps.

    Returns:
        What was deleted, in one line.
    """
    from kfp_bench.errors import BenchError, ConfigError
    from kfp_bench.kfp import CleanupOptions, sweep
    from kfp_bench.params import benchmark_id_for, token_auth

    print(
        f"benchmark ended {status.state}"
        + (f": {status.error_message}" if status.error_message else "")
    )
    if not run_benchmark:
        return "nothing to clean up: the runs benchmark was switched off"
    try:
        bid = benchmark_id_for(benchmark_id, job_id)
        opts = CleanupOptions(host=kfp_host, benchmark_id=bid, auth=token_auth(namespace))
        report = sweep(opts)
    except ConfigError as exc:  # a bad kfp_host or id: the first step failed, nothing was made
        return f"nothing to clean up: {exc}"
    if report["failed"]:
        raise BenchError(f"cleanup of benchmark {bid} failed: {'; '.join(report['failed'])}")
    d = report["deleted"]
    return (
        f"benchmark {bid}: deleted {d['runs']} runs, {d['experiments']} experiments, "
        f"{d['pipeline_versions']} pipeline versions, {d['pipelines']} pipelines"
    )
