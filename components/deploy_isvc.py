"""Deploy the benchmark's InferenceService and wait until it is ready; pass the URL to load."""

from kfp_bench.components._step import step


@step("kube")
def deploy_isvc(
    isvc: dict,
    namespace: str,
    inference_url: str,
    timeout_sec: float,
    load_workers: int,
    run_load: bool,
) -> list:
    """Create the InferenceService of isvc (kfp_bench.kserve.deploy.deploy) and wait for Ready.
    A readiness timeout deletes it and fails naming the condition that failed.

    Args:
        isvc: the InferenceService, a JSON object of kfp_bench.kserve.spec.IsvcSpec fields;
            empty: nothing is deployed and inference_url is passed on.
        namespace: its namespace when isvc names none.
        inference_url: the URL to load when nothing is deployed.
        timeout_sec: seconds to wait for Ready.
        load_workers: the load workers to fan out to.
        run_load: whether the load runs (else one item, for the steps that only say so).

    Returns:
        One item per load worker, {"worker": index, "url": the URL to POST to}, over which the
        pipeline fans out (kfp.local passes a task's output into a ParallelFor only as its
        items); the sweep loads the first item's URL.
    """
    from kfp_bench import steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
        isvc=isvc,
        namespace=namespace,
        inference_url=inference_url,
        load_workers=load_workers,
        run_load=run_load,
    )
    return steps.deploy_isvc(p, timeout_sec)
