"""Watch the InferenceService's replicas beside the load, sharing its time window."""

from kfp.dsl import Dataset, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("kube")
def watch_replicas(params: dict, replicas: Output[Dataset]):
    """Sample ready and total pods and the Knative PodAutoscaler's scales every second
    (kfp_bench.kserve.watch.ReplicaWatcher) for the sweep and the load, then save the samples;
    with isvc empty there is nothing to watch and the step only says so.

    Args:
        params: the checked parameters, from check_params.
        replicas: the samples and autoscaler settings (kfp_bench.kserve.watch.watcher_doc).
    """
    from kfp_bench.steps import serving
    from kfp_bench.steps.params import BenchParams

    serving.watch_replicas(BenchParams.from_dict(params), replicas.path)
