"""The InferenceService's steps: deploy_isvc (deploy the isvc parameter's InferenceService and
hand each load worker its URL) and watch_replicas (sample its pods and autoscaler during the
sweep and the load). Without an isvc both only say so, and no cluster is needed.
"""

from __future__ import annotations

from dataclasses import asdict

from kfp_bench.errors import BenchError
from kfp_bench.failpoint import fail_point
from kfp_bench.steps.llm_params import llm_duration
from kfp_bench.steps.llm_steps import deployed_llm_target
from kfp_bench.steps.load_params import load_duration, sweep_rates
from kfp_bench.steps.outputs import failed, write_json
from kfp_bench.steps.params import BenchParams

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).


def deploy_isvc(p: BenchParams, timeout_s: float) -> list[dict]:
    """Deploy the InferenceService of ``p.isvc``, labelled with ``p.benchmark_id``, and wait for
    Ready; one item per load worker, ``{"worker": index, "params": the parameters with
    inference_url the URL to POST to}``. A name already taken is refused (``NotOursError``). It
    says which deployment mode the InferenceService got and where that was learnt."""
    url = p.inference_url
    if not p.isvc:
        print(f"no InferenceService to deploy: loading {p.inference_url}")
    else:
        from kfp_bench.kserve.deploy import deploy
        from kfp_bench.kserve.kube import Kube

        spec = p.isvc_spec()
        # labelled with the benchmark id, so that cleanup deletes it and nothing else
        done = deploy(Kube(spec.namespace), spec, benchmark_id=p.benchmark_id, timeout_s=timeout_s)
        print(f"InferenceService {done.name} in namespace {done.namespace} ready in "
              f"{done.ready_s:.0f}s at {done.url}; {done.mode.said()}")  # fmt: skip
        url = done.predict_url
        if p.run_llm and not p.llm_url:
            p = deployed_llm_target(p, spec, done.url)
    fail_point("deploy_isvc")
    params = {**p.as_dict(), "inference_url": url}
    return [{"worker": i, "params": params} for i in range(p.load_workers if p.run_load else 1)]


def watch_window(p: BenchParams) -> float:
    """How long watch_replicas samples: the sweep, then the load and the LLM load side by side
    (each its stages' sum when staged), and 30 s for the load pods' start."""
    load = max(load_duration(p), llm_duration(p) if p.run_llm else 0.0)
    return load + len(sweep_rates(p)) * p.sweep_step_sec + 30.0


def watch_replicas(p: BenchParams, out: str) -> None:
    """Sample the InferenceService's pods and autoscaler for the sweep and the load: Knative's
    PodAutoscalers, or in Standard/RawDeployment mode its HPA, or with autoscaler_class keda its
    KEDA ScaledObject and the HPA it drives (the mode as ``learn_mode`` finds it, the deployed
    object first; unknown: Serverless, with a warning)."""
    if not p.isvc:
        print("no InferenceService to watch")
        write_json(out, {"skipped": True})
        return
    from kfp_bench.kserve.kube import Kube
    from kfp_bench.kserve.mode import Mode, learn_mode
    from kfp_bench.kserve.spec import KEDA_CLASS
    from kfp_bench.kserve.watch import HPA, KEDA, KPA, ReplicaWatcher, knative_target, watcher_doc

    spec = p.isvc_spec()
    window = watch_window(p)
    w, error, mode = None, "", Mode("")
    try:
        kube = Kube(spec.namespace)
        mode = learn_mode(kube, spec, kube.get_isvc(spec.name))
        if not mode.name:
            mode = mode.assumed("the InferenceService records no mode, so Serverless is assumed")
        print(mode.said())
        hpa = KEDA if spec.autoscaler_class == KEDA_CLASS else HPA
        w = ReplicaWatcher(kube, spec.name, autoscaler=KPA if mode.knative else hpa)
        samples = w.watch(window)
    except (BenchError, OSError) as exc:  # a 403 on podautoscalers: keep the samples before it
        samples, error = list(w.samples) if w is not None else [], failed("watch_replicas", exc)
    # Knative's rule (expected replicas from the concurrency in flight) judges a KPA scaling on
    # concurrency only, at the target Knative resolves: an HPA's target is a CPU or memory
    # utilization, and an rps target is no number of requests in flight.
    scale = spec.predictor
    target = (
        knative_target(scale.scale_metric, scale.scale_target, scale.container_concurrency)
        if mode.knative and scale.scale_metric == "concurrency"
        else 0
    )
    doc = watcher_doc(samples, target=target, knative=mode.knative, deployment_mode=mode.name,
                      mode_from=mode.source)  # fmt: skip
    if w is not None and w.scaled_objects:  # KEDA's targets, as last read
        doc["scaled_objects"] = [asdict(so) for so in w.scaled_objects]
    write_json(out, {**doc, "error": error} if error else doc)
    print(f"{len(samples)} samples, ready pods up to {max((s.ready for s in samples), default=0)}")
    fail_point("watch_replicas")
