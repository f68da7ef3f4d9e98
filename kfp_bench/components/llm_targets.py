"""The LLM load's fan-out: one item per LLM load worker, from deploy_isvc's target."""

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step()
def llm_targets(targets: list) -> list:
    """One item per LLM load worker (kfp_bench.steps.llm_steps.llm_items), over which the LLM
    load fans out; a step of its own, run only with run_llm, as kfp.local (kfp 2.17.3) cannot fan
    out over one of a task's several named outputs.

    Args:
        targets: deploy_isvc's items; the first one's parameters carry llm_url and llm_model.

    Returns:
        {"worker": index, "params": the parameters} for each of llm_workers.
    """
    from kfp_bench.steps import llm_steps

    return llm_steps.llm_items(targets[0]["params"])
