"""The rate sweep: one open-loop step per rate against the inference URL, and the knee."""

from kfp.dsl import Dataset, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("load")
def rate_sweep(targets: list, sweep: Output[Dataset]):
    """Run kfp_bench.load.sweep.run_sweep over sweep_rates: KServe's table of QPS against mean,
    p50, p95 and p99 latency and success, and the saturation knee; with sweep_rates empty the
    step only says so.

    Args:
        targets: deploy_isvc's items; the sweep runs with the first one's parameters (its
            inference_url that of the InferenceService deployed).
        sweep: {"sweep": rows, "sweep_knee": knee}, the keys aggregate adds to summary.json.
    """
    from kfp_bench import mesh
    from kfp_bench.steps import predict
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(targets[0]["params"])
    try:
        predict.rate_sweep(p, sweep.path)
    finally:
        mesh.after_load(p.mesh_route)  # with mesh_route=sidecar: the pod completes
