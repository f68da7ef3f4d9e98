"""The first step: check every pipeline parameter before anything is created.

Its inputs are BenchParams' fields, written out here once more, and a test holds the two equal
(tests/components/test_step.py). They cannot be derived from the dataclass as
kfp_bench/pipelines/meta.py derives the pipeline's signature: KFP (2.17.3) reads a component's
inputs from ``inspect.signature`` (dsl/component_factory.py, ``extract_component_interface``),
which would take a ``__signature__``, but a lightweight component ships its function's source text
(``_get_function_source_definition``: ``inspect.getsource``), and in the pod the executor calls
that function with the inputs its written signature annotates (dsl/executor.py,
``Executor.execute``: ``inspect.getfullargspec(...).annotations``): inputs declared only by a
``__signature__`` reach the pod and are dropped there. Generating the source text instead would
leave this component with no code to read in the repository.
"""

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kfp")
def check_params(
    kfp_host: str,
    namespace: str,
    token_secret: str,
    benchmark_id: str,
    lease_wait_sec: float,
    pipeline: str,
    run_benchmark: bool,
    num_runs: int,
    create_concurrency: int,
    poll_interval_sec: float,
    run_timeout_sec: float,
    run_parameters: dict,
    run_node_selector: dict,
    fill_runs: int,
    fill_steps: int,
    run_load: bool,
    inference_url: str,
    host_header: str,
    payload: str,
    duration_sec: float,
    concurrency: int,
    rate: float,
    stages: str,
    load_workers: int,
    load_node_selector: dict,
    mesh_route: str,
    sweep_rates: str,
    sweep_step_sec: float,
    isvc: dict,
    cost_per_hour: float,
    run_llm: bool,
    llm_url: str,
    llm_endpoint: str,
    llm_model: str,
    llm_concurrency: int,
    llm_rate: float,
    llm_stages: str,
    llm_multi_turn: str,
    llm_duration_sec: float,
    llm_input_tokens: str,
    llm_output_tokens: str,
    llm_slo: str,
    llm_warmup_sec: float,
    llm_find_max: str,
    llm_workers: int,
    llm_tokenizer: str,
    results_uri: str,
    baseline: str,
    thresholds: str,
    fail_on_regression: bool,
    pushgateway_url: str,
    prometheus_url: str,
    metrics_profile: str,
    metrics_scrape: str,
    metrics_vars: str,
    metrics_scrape_token: bool,
    job_id: str,
) -> dict:
    """Check the pipeline's parameters (kfp_bench.steps.params.BenchParams.check); fail with
    one line naming the parameter and the fix, exit code 2, as the CLI does. Then take the
    benchmark's lease on the KFP server (kfp_bench.kfp.lease), sweeping what an expired holder
    left; fail, in one line naming the holder, its expiry and the fix, exit code 1, while
    another live benchmark of that benchmark_id holds it.
    With mesh_route=sidecar the probe goes through this pod's sidecar, as the load will, and
    the step ends the sidecar at the end.

    Args:
        kfp_host: see BenchParams; likewise every parameter up to metrics_scrape_token.
        job_id: the pipeline run's id, from which an empty benchmark_id is derived.

    Returns:
        The checked parameters, benchmark_id this run's own: what every later step reads.
    """
    params = dict(locals())  # first: the arguments alone, the parameters and job_id
    job_id = params.pop("job_id")
    import sys

    from kfp_bench import mesh
    from kfp_bench.errors import BenchError, ConfigError
    from kfp_bench.steps import start
    from kfp_bench.steps.params import BenchParams

    p = BenchParams(**params)
    try:
        return start.check_params(p, job_id)
    except BenchError as exc:  # its line, not a traceback that buries it: bad input exit 2, a
        # held lease or the KFP API down exit 1 (a rerun may mend it), as the CLI's codes
        print(f"kfp-bench: {exc}", file=sys.stderr)
        raise SystemExit(2 if isinstance(exc, ConfigError) else exc.exit_code) from None
    finally:
        mesh.after_load(mesh_route)
