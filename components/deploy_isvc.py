"""Deploy the benchmark's InferenceService and wait until it is ready; pass the URL to load."""

from typing import NamedTuple

from kfp_bench.components._step import step


@step("kube")
def deploy_isvc(params: dict, timeout_sec: float) -> NamedTuple(
    "Targets", workers=list, llm_workers=list
):
    """Create the InferenceService of the isvc parameter, labelled with the benchmark id
    (kfp_bench.kserve.deploy.deploy), and wait for Ready; a name that exists is refused before
    anything changes, and a readiness timeout deletes what it created and fails naming the
    condition that failed. With isvc empty nothing is deployed and inference_url is passed on.

    Args:
        params: the checked parameters, from check_params.
        timeout_sec: seconds to wait for Ready.

    With run_llm, an isvc and no llm_url, the LLM load streams from the InferenceService's
    /openai and asks for the model it serves.

    Returns:
        workers: one item per load worker, {"worker": index, "params": the parameters,
            inference_url the URL to POST to}, over which the pipeline fans out; the sweep
            takes the first.
        llm_workers: likewise one per LLM load worker (none with run_llm off), llm_url and
            llm_model the target.
    """
    from collections import namedtuple

    from kfp_bench import llm_steps, steps
    from kfp_bench.params import BenchParams

    items = steps.deploy_isvc(BenchParams.from_dict(params), timeout_sec)
    targets = namedtuple("Targets", ["workers", "llm_workers"])
    return targets(items, llm_steps.llm_items(items[0]["params"]))
