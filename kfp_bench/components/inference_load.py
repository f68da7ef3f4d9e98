"""One load worker: its share of the inference load, as a mergeable result."""

from kfp.dsl import Dataset, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("load")
def inference_load(params: dict, worker: int, result: Output[Dataset]):
    """Send this worker's share of the load (kfp_bench.load.workers.run_load) and save its
    histograms; with run_load off the step only says so.

    Args:
        params: the checked parameters, inference_url the URL to POST to (deploy_isvc's item
            for this worker: the pipeline's parameters are handed in with the item, as
            kfp.local resolves an outer task's output inside a ParallelFor to the loop's item).
        worker: this worker's index, 0 to load_workers - 1.
        result: the load result JSON (kfp_bench.stats.store), merged by aggregate.
    """
    from kfp_bench import mesh
    from kfp_bench.steps import predict
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    try:
        predict.inference_load(p, int(worker), result.path)
    finally:
        mesh.after_load(p.mesh_route)  # with mesh_route=sidecar: the pod completes
