"""Deploy the benchmark's InferenceService and wait until it is ready; pass the URL to load."""

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kube")
def deploy_isvc(params: dict, timeout_sec: float) -> list:
    """Create the InferenceService of the isvc parameter, labelled with the benchmark id
    (kfp_bench.kserve.deploy.deploy), and wait for Ready; a name that exists is refused before
    anything changes, and a readiness timeout deletes what it created and fails naming the
    condition that failed. With isvc empty nothing is deployed and inference_url is passed on.

    Args:
        params: the checked parameters, from check_params.
        timeout_sec: seconds to wait for Ready.

    With run_llm, an isvc and no llm_url, the items' llm_url is the InferenceService's /openai
    and llm_model the name it serves (llm_targets fans the LLM load out from the first item).

    Returns:
        One item per load worker, {"worker": index, "params": the parameters, inference_url
        the URL to POST to}, over which the pipeline fans out; the sweep takes the first.
    """
    from kfp_bench.steps import serving
    from kfp_bench.steps.params import BenchParams

    return serving.deploy_isvc(BenchParams.from_dict(params), timeout_sec)
