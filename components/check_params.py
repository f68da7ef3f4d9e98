"""The first step: check every pipeline parameter before anything is created."""

from kfp_bench.components._step import step


@step("kfp")
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
    mesh_route: str,
    sweep_rates: str,
    sweep_step_sec: float,
    isvc: dict,
    run_llm: bool,
    llm_url: str,
    llm_endpoint: str,
    llm_model: str,
    llm_concurrency: int,
    llm_rate: float,
    llm_duration_sec: float,
    llm_input_tokens: str,
    llm_output_tokens: str,
    llm_slo: str,
    llm_warmup_sec: float,
    llm_workers: int,
    token_secret: str,
    benchmark_id: str,
    lease_wait_sec: float,
    results_uri: str,
    baseline: str,
    thresholds: str,
    fail_on_regression: bool,
    pushgateway_url: str,
    job_id: str,
) -> dict:
    """Check the pipeline's parameters (kfp_bench.params.BenchParams.check); fail with one
    message naming the parameter and the fix. Then take the benchmark's lease on the KFP server
    (kfp_bench.kfp.lease), sweeping what an expired holder left; fail, naming the holder, while
    another live benchmark of that benchmark_id holds it. With mesh_route=sidecar the probe
    goes through this pod's sidecar, as the load will, and the step ends the sidecar at the end.

    Args:
        kfp_host: see BenchParams; likewise every parameter up to pushgateway_url.
        job_id: the pipeline run's id, from which an empty benchmark_id is derived.

    Returns:
        The checked parameters, benchmark_id this run's own: what every later step reads.
    """
    from kfp_bench import mesh, steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
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
        mesh_route=mesh_route,
        sweep_rates=sweep_rates,
        sweep_step_sec=sweep_step_sec,
        isvc=isvc,
        run_llm=run_llm,
        llm_url=llm_url,
        llm_endpoint=llm_endpoint,
        llm_model=llm_model,
        llm_concurrency=llm_concurrency,
        llm_rate=llm_rate,
        llm_duration_sec=llm_duration_sec,
        llm_input_tokens=llm_input_tokens,
        llm_output_tokens=llm_output_tokens,
        llm_slo=llm_slo,
        llm_warmup_sec=llm_warmup_sec,
        llm_workers=llm_workers,
        token_secret=token_secret,
        benchmark_id=benchmark_id,
        lease_wait_sec=lease_wait_sec,
        results_uri=results_uri,
        baseline=baseline,
        thresholds=thresholds,
        fail_on_regression=fail_on_regression,
        pushgateway_url=pushgateway_url,
    )
    try:
        return steps.check_params(p, job_id)
    finally:
        mesh.after_load(mesh_route)
