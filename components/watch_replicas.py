"""Watch the InferenceService's replicas beside the load, sharing its time window."""

from kfp import dsl
from kfp.dsl import Dataset, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("kserve"),
    embedded_artifact_path=engine("kserve/kube.py", "kserve/watch.py", "load/options.py"),
)
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
        isvc: the InferenceService (kfp_bench.kserve.IsvcSpec fields); empty: nothing to watch.
        namespace: its namespace when isvc names none.
        duration_sec: seconds of load.
        sweep_rates: the rate sweep's rates, run before the load; empty for none.
        sweep_step_sec: seconds of each sweep step.
        replicas: the samples and autoscaler settings (kfp_bench.kserve.watch.watcher_doc).
    """
    import json

    if not isvc:
        print("no InferenceService to watch")
        with open(replicas.path, "w") as f:
            json.dump({"skipped": True}, f)
        return
    from kfp_bench.failpoint import fail_point
    from kfp_bench.kserve.kube import Kube
    from kfp_bench.kserve.watch import ReplicaWatcher, watcher_doc
    from kfp_bench.load.options import parse_rates
    from kfp_bench.params import BenchParams

    spec = BenchParams(isvc=isvc, namespace=namespace).isvc_spec()
    steps = len(parse_rates(sweep_rates, "sweep_rates")) if sweep_rates.strip() else 0
    window = duration_sec + steps * sweep_step_sec + 30.0  # + the load pods' start
    w = ReplicaWatcher(Kube(spec.namespace), spec.name, knative=spec.serverless)
    samples = w.watch(window)
    doc = watcher_doc(samples, target=spec.predictor.scale_target, knative=spec.serverless)
    with open(replicas.path, "w") as f:
        json.dump(doc, f)
    print(f"{len(samples)} samples, ready pods up to {max((s.ready for s in samples), default=0)}")
    fail_point("watch_replicas")
