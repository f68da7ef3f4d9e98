"""Deploy the benchmark's InferenceService and wait until it is ready; pass the URL to load."""

from kfp import dsl
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kserve"),
    embedded_artifact_path=engine("kserve/deploy.py", "kserve/kube.py", "kserve/spec.py"),
)
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
        isvc: the InferenceService, a JSON object of kfp_bench.kserve.IsvcSpec fields; empty:
            nothing is deployed and inference_url is passed on.
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
    from kfp_bench.failpoint import fail_point

    url = inference_url
    if not isvc:
        print(f"no InferenceService to deploy: loading {inference_url}")
    else:
        from kfp_bench.kserve.deploy import deploy
        from kfp_bench.kserve.kube import Kube
        from kfp_bench.params import BenchParams

        spec = BenchParams(isvc=isvc, namespace=namespace).isvc_spec()
        done = deploy(Kube(spec.namespace), spec, timeout_s=timeout_sec)
        print(f"InferenceService {done.name} ready in {done.ready_s:.0f}s at {done.url}")
        url = done.predict_url
    fail_point("deploy_isvc")
    return [{"worker": i, "url": url} for i in range(load_workers if run_load else 1)]
