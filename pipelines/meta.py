"""The kfp_bench meta-pipeline: benchmark a KFP server and an inference endpoint, as a KFP run.

Wiring only; each step is a component over the engine, each parameter is documented in
``kfp_bench.params.BenchParams``::

    exit handler ─ cleanup (sweeps the KFP server for this benchmark's resources, always)
    └─ check_params ─┬─ stage_manifest ─ spawn_and_poll_runs ─┐
                     └─ ParallelFor(load_workers): inference_load ─┴─ aggregate ─ report

The runs branch and the load branch run in parallel; either is switched off with run_benchmark or
run_load (its steps then only say so). Kubernetes settings: the load pods take load_node_selector,
the child runs run_node_selector (their own pipelines apply it); the steps that call KFP mount the
token_secret Secret when it exists and carry the access-ml-pipeline label, through which multi-user
Kubeflow's PodDefault projects a service-account token for the KFP API; every step has a timeout and
caching off (a benchmark measures work, never a cache hit).
"""

from kfp import dsl, kubernetes
from kfp_bench.components import (
    aggregate,
    check_params,
    cleanup,
    inference_load,
    report,
    spawn_and_poll_runs,
    stage_manifest,
)

from kfp_bench.params import (
    DEFAULT_INFERENCE_URL,
    DEFAULT_KFP_HOST,
    DEFAULT_PAYLOAD,
    MAX_DURATION_S,
    MAX_RUN_TIMEOUT_S,
    TOKEN_DIR,
    BenchParams,
)

_SHORT = 15 * 60  # seconds: the bound on steps that do no long work


def _step(task, timeout: int = _SHORT):
    task.set_caching_options(False)
    kubernetes.set_timeout(task, int(timeout))
    return task


def _kfp_caller(task, token_secret):
    kubernetes.use_secret_as_volume(task, token_secret, mount_path=TOKEN_DIR, optional=True)
    kubernetes.add_pod_label(task, "access-ml-pipeline", "true")
    return task


@dsl.pipeline(name="kfp-bench", description=BenchParams.__doc__.split("\n")[0])
def kfp_bench(
    kfp_host: str = DEFAULT_KFP_HOST,
    namespace: str = "",
    pipeline: str = "noop",
    run_benchmark: bool = True,
    num_runs: int = 10,
    create_concurrency: int = 4,
    poll_interval_sec: float = 2.0,
    run_timeout_sec: float = 600.0,
    run_parameters: dict = {},  # noqa: B006 - a pipeline default, never mutated
    run_node_selector: dict = {},  # noqa: B006
    run_load: bool = True,
    inference_url: str = DEFAULT_INFERENCE_URL,
    host_header: str = "",
    payload: str = DEFAULT_PAYLOAD,
    duration_sec: float = 30.0,
    concurrency: int = 5,
    rate: float = 0.0,
    load_workers: int = 1,
    load_node_selector: dict = {},  # noqa: B006
    token_secret: str = "kfp-bench-token",
    benchmark_id: str = "",
):
    job_id = dsl.PIPELINE_JOB_ID_PLACEHOLDER
    done = cleanup(
        kfp_host=kfp_host,
        namespace=namespace,
        benchmark_id=benchmark_id,
        job_id=job_id,
        run_benchmark=run_benchmark,
    )
    _kfp_caller(_step(done), token_secret)
    with dsl.ExitHandler(done, name="benchmark"):
        checked = _step(
            check_params(
                kfp_host=kfp_host,
                namespace=namespace,
                pipeline=pipeline,
                run_benchmark=run_benchmark,
                num_runs=num_runs,
                create_concurrency=create_concurrency,
                poll_interval_sec=poll_interval_sec,
                run_timeout_sec=run_timeout_sec,
                run_parameters=run_parameters,
                run_node_selector=run_node_selector,
                run_load=run_load,
                inference_url=inference_url,
                host_header=host_header,
                payload=payload,
                duration_sec=duration_sec,
                concurrency=concurrency,
                rate=rate,
                load_workers=load_workers,
                load_node_selector=load_node_selector,
                token_secret=token_secret,
                benchmark_id=benchmark_id,
                job_id=job_id,
            )
        )
        manifest = _step(
            stage_manifest(
                pipeline=pipeline,
                run_parameters=run_parameters,
                run_node_selector=run_node_selector,
                enabled=run_benchmark,
            ).after(checked)
        )
        runs = spawn_and_poll_runs(
            kfp_host=kfp_host,
            namespace=namespace,
            manifest=manifest.outputs["manifest"],
            num_runs=num_runs,
            create_concurrency=create_concurrency,
            poll_interval_sec=poll_interval_sec,
            run_timeout_sec=run_timeout_sec,
            run_parameters=run_parameters,
            run_node_selector=run_node_selector,
            benchmark_id=benchmark_id,
            job_id=job_id,
            enabled=run_benchmark,
        )
        _kfp_caller(_step(runs, MAX_RUN_TIMEOUT_S + _SHORT), token_secret)
        with dsl.ParallelFor(checked.output, name="load-workers") as worker:
            load = inference_load(
                worker=worker,
                load_workers=load_workers,
                inference_url=inference_url,
                host_header=host_header,
                payload=payload,
                duration_sec=duration_sec,
                concurrency=concurrency,
                rate=rate,
                enabled=run_load,
            )
            _step(load, MAX_DURATION_S + _SHORT)
            kubernetes.add_node_selector_json(load, load_node_selector)
        merged = _step(
            aggregate(
                runs=runs.outputs["runs"],
                loads=dsl.Collected(load.outputs["result"]),
                load_workers=load_workers,
                run_load=run_load,
            )
        )
        _step(report(results=merged.outputs["results"]))
