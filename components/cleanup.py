"""The exit step: delete what the benchmark created (KFP runs, its InferenceService), always."""

from kfp import dsl
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kfp", "kserve"),
    embedded_artifact_path=engine(
        "kfp/api.py",
        "kfp/auth.py",
        "kfp/cleanup.py",
        "kfp/convert.py",
        "kfp/options.py",
        "kserve/deploy.py",
        "kserve/kube.py",
        "kserve/spec.py",
    ),
)
def cleanup(
    kfp_host: str,
    namespace: str,
    benchmark_id: str,
    job_id: str,
    run_benchmark: bool,
    isvc: dict,
    status: dsl.PipelineTaskFinalStatus,
) -> str:
    """Sweep the KFP server for the runs, experiment and pipeline of this benchmark
    (kfp_bench.kfp.sweep) and delete its InferenceService (kfp_bench.kserve.deploy.delete),
    whatever the state the benchmark ended in.

    Args:
        kfp_host: the KFP API.
        namespace: the namespace of multi-user KFP; empty for standalone.
        benchmark_id: the benchmark_id parameter; empty: derived from job_id, as the first step
            does.
        job_id: the pipeline run's id.
        run_benchmark: whether the runs benchmark was switched on (nothing to sweep otherwise).
        isvc: the InferenceService deployed by deploy_isvc (IsvcSpec fields); empty for none.
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
    isvc_done = ""
    if isvc:
        from kfp_bench.kserve.deploy import delete
        from kfp_bench.kserve.kube import Kube
        from kfp_bench.params import BenchParams

        try:
            spec = BenchParams(isvc=isvc, namespace=namespace).isvc_spec()
        except ConfigError as exc:  # refused by the first step: nothing was deployed
            spec, isvc_done = None, f"no InferenceService: {exc}; "
        if spec is not None:
            found = delete(Kube(spec.namespace), spec.name, wait_s=120.0)
            isvc_done = f"InferenceService {spec.name} {'deleted' if found else 'not found'}; "
            print(isvc_done)
    if not run_benchmark:
        return isvc_done + "nothing to clean up: the runs benchmark was switched off"
    try:
        bid = benchmark_id_for(benchmark_id, job_id)
        opts = CleanupOptions(host=kfp_host, benchmark_id=bid, auth=token_auth(namespace))
        report = sweep(opts)
    except ConfigError as exc:  # a bad kfp_host or id: the first step failed, nothing was made
        return f"nothing to clean up: {exc}"
    if report["failed"]:
        raise BenchError(f"cleanup of benchmark {bid} failed: {'; '.join(report['failed'])}")
    d = report["deleted"]
    return isvc_done + (
        f"benchmark {bid}: deleted {d['runs']} runs, {d['experiments']} experiments, "
        f"{d['pipeline_versions']} pipeline versions, {d['pipelines']} pipelines"
    )
