"""The exit step: delete what the benchmark created (KFP runs, its InferenceService), always."""

from kfp import dsl

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kfp", "kube")
def cleanup(
    kfp_host: str,
    namespace: str,
    benchmark_id: str,
    job_id: str,
    run_benchmark: bool,
    isvc: dict,
    status: dsl.PipelineTaskFinalStatus,
    fill_runs: int = 0,
) -> str:
    """Sweep the KFP server for the recurring runs, runs, experiment and pipeline of this
    benchmark (kfp_bench.kfp.cleanup.sweep) and delete its InferenceService if it carries this
    benchmark's label (kfp_bench.kserve.deploy.delete), whatever state the benchmark ended in;
    fail, naming what may remain, when the sweep cannot finish.

    Args:
        kfp_host: the KFP API.
        namespace: the namespace of multi-user KFP; empty for standalone.
        benchmark_id: the benchmark_id parameter; empty: derived from job_id, as the first step
            does.
        job_id: the pipeline run's id.
        run_benchmark: whether the runs benchmark was switched on (nothing to sweep otherwise).
        isvc: the InferenceService deployed by deploy_isvc (IsvcSpec fields); empty for none.
        status: the final status of the benchmark's steps.
        fill_runs: the runs of the full-database fill (kfp_bench.kfp.fill), swept under the
            fill's own id; 0: there was no fill.

    Returns:
        What was deleted, in one line.
    """
    from kfp_bench.steps import exit_handler
    from kfp_bench.steps.params import BenchParams

    p = BenchParams(
        kfp_host=kfp_host,
        namespace=namespace,
        benchmark_id=benchmark_id,
        run_benchmark=run_benchmark,
        isvc=isvc,
        fill_runs=fill_runs,
    )
    return exit_handler.cleanup(p, job_id, status.state, status.error_message or "")
