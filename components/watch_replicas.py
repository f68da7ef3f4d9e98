"""Watch the InferenceService's replicas beside the load, sharing its time window."""

from kfp.dsl import Dataset, Output
from kfp_bench.components._step import step


@step("kube")
def watch_replicas(
    isvc: dict,
    namespace: str,
    duration_sec: float,
    sweep_rates: str,
    sweep_step_sec: float,
    replicas: Output[Dataset],
):
    """Sample ready and total pods and the Knative PodAutoscaler's scales every second
    (kfp_bench.kserve.watch.ReplicaWatcher) for the sweep and the load, then save the samples.

    Args:
        isvc: the InferenceService (kfp_bench.kserve.spec.IsvcSpec fields); empty: nothing to
            watch.
        namespace: its namespace when isvc names none.
        duration_sec: seconds of load.
        sweep_rates: the rate sweep's rates, run before the load; empty for none.
        sweep_step_sec: seconds of each sweep step.
        replicas: the samples and autoscaler settings (kfp_bench.kserve.watch.watcher_doc).
    """
    from kfp_bench import steps
    from kfp_bench.params import BenchParams

    p = BenchParams(
        isvc=isvc,
        namespace=namespace,
        duration_sec=duration_sec,
        sweep_rates=sweep_rates,
        sweep_step_sec=sweep_step_sec,
    )
    steps.watch_replicas(p, replicas.path)
