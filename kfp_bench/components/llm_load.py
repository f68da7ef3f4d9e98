"""One LLM load worker: its share of the streaming LLM load, as a mergeable LLM result."""

from kfp.dsl import Dataset, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("llm", "load")
def llm_load(params: dict, worker: int, result: Output[Dataset]):
    """Stream this worker's share of the LLM load (kfp_bench.steps.llm_steps.llm_load: TTFT, ITL,
    TPOT, tokens/s, goodput) and save its histograms.

    Args:
        params: the checked parameters, llm_url and llm_model the target (deploy_isvc's
            llm_workers item for this worker).
        worker: this worker's index, 0 to llm_workers - 1.
        result: the LLM result JSON (kfp_bench.stats.store), merged by report_llm.
    """
    from kfp_bench import mesh
    from kfp_bench.steps import llm_steps
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    try:
        llm_steps.llm_load(p, int(worker), result.path)
    finally:
        mesh.after_load(p.mesh_route)  # with mesh_route=sidecar: the pod completes
