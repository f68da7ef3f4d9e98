"""The kfp_bench meta-pipeline: benchmark a KFP server and an inference endpoint, as a KFP run.

Wiring only; each step is a component over the engine, each parameter is documented in
``kfp_bench.steps.params.BenchParams``::

    exit handler ─ cleanup (sweeps the KFP server for this benchmark's resources and deletes the
    │              InferenceService of isvc, always)
    └─ check_params ─┬─ stage_manifest ─ upload_manifest ─ spawn_runs ─ poll_runs ─┐
                     └─ deploy_isvc ─┬─ rate_sweep ─ ParallelFor: load ────────────┼─ aggregate
                                     └─ watch_replicas ────────────────────────────┘    │
                                               If results_uri: report_history, else report
                                                                                        │
                                                                                  check_outcome
    If run_llm:  deploy_isvc ─ llm_targets ─ ParallelFor: llm_load (after rate_sweep)
                 ─ report_llm ─ check_outcome

    load and llm_load: retried when their pod dies (the retry saves "worker i lost")

check_params checks every parameter before anything is created and hands them on, the benchmark
id filled in, as one object that every later step reads. The runs branch and the load branch run
in parallel; either is switched off with run_benchmark or run_load (its steps then only say so).
The LLM load (run_llm, off by default) runs only when asked: its workers stream from llm_url (or
the deployed LLM InferenceService's /openai) beside the predict load, and report_llm publishes
the LLM report and metrics.
The runs branch is three steps over the engine's three phases (kfp_bench.kfp.phases.upload,
spawn, poll), handing on the benchmark handle and a directory of records that each step extends;
the run figures come from the server's timestamps, so the pod start-up between the steps costs the
measurement nothing, and the exit handler's sweep deletes what they made. deploy_isvc deploys the
InferenceService of isvc and passes on its URL (else inference_url); watch_replicas samples its
pods for the sweep and the load (the two run one after the other, so they never share the
server); with isvc and sweep_rates empty (the defaults) these steps only say so and no cluster is
needed. Kubernetes settings: the load pods take load_node_selector, the child runs
run_node_selector (their own pipelines apply it); the steps that call KFP mount the token_secret
Secret when it exists and carry the access-ml-pipeline label, through which multi-user Kubeflow's
PodDefault projects a service-account token for the KFP API; with the sidecar route
(kfp_bench_mesh, ``VARIANTS``) check_params, the sweep and the load workers join the Istio mesh;
every step has a timeout and caching off (a benchmark measures work, never a cache hit). The
pipeline's parameters, their defaults and their help are BenchParams' fields (``_signature``):
written once.

Partial results over no results: a helper step (poll_runs, a load worker, watch_replicas) that
fails to measure saves what it had and its error and succeeds, so aggregate and report still run;
aggregate flags what is missing, the report shows the flags, and check_outcome then fails the run
(the exit handler's cleanup sees FAILED) when a failure flag is set. A load or LLM worker whose
pod dies (OOM-killed, evicted, past its deadline) cannot save anything: its step is retried
(``_worker``), and the retry saves that the worker is lost instead of loading late, so the loop
still succeeds and aggregate or report_llm names the worker (docs/running-in-a-cluster.md, "When a
pod dies"). A retry knows it is one on every KFP backend by the start mark its first attempt left
on the KFP API (an experiment kfp-bench-<id>-worker-<i>, kfp_bench.kfp.start_mark), so the
workers are KFP callers too; the exit handler's sweep deletes the marks.
"""

from __future__ import annotations

import inspect
from dataclasses import MISSING, fields

from kfp import dsl, kubernetes

from kfp_bench._doc import field_docs
from kfp_bench.components import (
    aggregate,
    check_outcome,
    check_params,
    cleanup,
    deploy_isvc,
    inference_load,
    llm_load,
    llm_targets,
    poll_runs,
    rate_sweep,
    report,
    report_history,
    report_llm,
    spawn_runs,
    stage_manifest,
    upload_manifest,
    watch_replicas,
)
from kfp_bench.components._step import Delivery
from kfp_bench.history.s3 import MINIO_SECRET_DIR
from kfp_bench.mesh import SIDECAR_ANNOTATIONS, SIDECAR_LABELS
from kfp_bench.steps.auth import TOKEN_DIR
from kfp_bench.steps.checks import MAX_DURATION_S, MAX_RUN_TIMEOUT_S
from kfp_bench.steps.params import BenchParams

_SHORT = 15 * 60  # seconds: the bound on steps that do no long work
# What a load pod asks the scheduler for. One core: the engine is one process, and a load
# generator that shares its core sends late and counts its own stalls as the model's latency.
# No CPU limit (throttling would do the same; the pod reports it if a LimitRange sets one).
# Memory: the engine's RSS stays under ~60 MB at full speed (BENCHMARKS.md, case d).
LOAD_CPU_REQUEST = "1"
LOAD_MEMORY_REQUEST = "256Mi"
#: Attempts after a worker's pod died: the first saves why the worker is lost; a second covers a
#: retry whose own pod dies (the node it landed on going down).
WORKER_RETRIES = 2


def _step(task, timeout: int = _SHORT):
    task.set_caching_options(False)
    kubernetes.set_timeout(task, int(timeout))
    return task


def _load_pod(task, node_selector, route: str):
    """Where and with what a step that generates load runs."""
    task.set_cpu_request(LOAD_CPU_REQUEST).set_memory_request(LOAD_MEMORY_REQUEST)
    kubernetes.add_node_selector_json(task, node_selector)
    return _mesh_pod(task, route)


def _mesh_pod(task, route: str):
    """With the sidecar route, the pod joins the mesh (kfp_bench.mesh cites why each key). Pod
    metadata is fixed when the pipeline is compiled (kfp-kubernetes takes strings, and KFP
    cannot join a loop's outputs from two branches: dsl.OneOf refuses dsl.Collected), hence
    one compiled pipeline per route."""
    if route == "sidecar":
        for key, value in SIDECAR_LABELS.items():
            kubernetes.add_pod_label(task, key, value)
        for key, value in SIDECAR_ANNOTATIONS.items():
            kubernetes.add_pod_annotation(task, key, value)
    return task


def _worker(task, node_selector, route: str, token_secret):
    """A load or LLM worker: a load pod, retried once when its pod dies, so that the loop and what
    follows it still run. KFP's Argo compiler makes every dependency ``.Succeeded``
    (kubeflow/pipelines 7b70c7b95f argocompiler/dag.go:713), so one failed worker would fail the
    loop and skip aggregate, report and report_llm; a retry policy becomes the executor's Argo
    retryStrategy (container.go:379-392, 586-592), which with no retryPolicy set retries a Failed
    pod (Argo's default OnFailure: OOM-killed, evicted, past its deadline). The retry does not load:
    it saves why its worker is lost (``kfp_bench.steps.worker_start.worker_started``) and
    succeeds. It knows it is a retry by the start mark its first attempt created on the KFP API,
    hence the KFP caller's token and label (``_kfp_caller``)."""
    task.set_retry(num_retries=WORKER_RETRIES)
    return _kfp_caller(_load_pod(task, node_selector, route), token_secret)


def _kfp_caller(task, token_secret):
    kubernetes.use_secret_as_volume(task, token_secret, mount_path=TOKEN_DIR, optional=True)
    kubernetes.add_pod_label(task, "access-ml-pipeline", "true")
    return task


def _benchmark(p: dict, job_id, route: str):
    """The steps inside the exit handler. ``p``: the pipeline's parameters, by name; the steps
    after the first read the parameters it checked. ``route``: the mesh route compiled in."""
    # check_params takes the benchmark's lease on the KFP server (kfp_bench.kfp.lease); its
    # probe goes the way the load will, through a sidecar with the sidecar route.
    checked = _kfp_caller(_step(check_params(**p, job_id=job_id)), p["token_secret"])
    _mesh_pod(checked, route)
    params = checked.output
    target = _step(deploy_isvc(params=params, timeout_sec=float(_SHORT)), 2 * _SHORT)
    sweep = rate_sweep(targets=target.output)
    _load_pod(_step(sweep, MAX_DURATION_S + _SHORT), p["load_node_selector"], route)
    watch = _step(watch_replicas(params=params).after(target), 2 * MAX_DURATION_S + _SHORT)
    manifest = _step(stage_manifest(params=params))
    uploaded = upload_manifest(params=params, manifest=manifest.outputs["manifest"])
    _kfp_caller(_step(uploaded), p["token_secret"])
    handle = uploaded.outputs["Output"]
    spawned = spawn_runs(params=params, handle=handle, uploaded=uploaded.outputs["runs"])
    _kfp_caller(_step(spawned, MAX_RUN_TIMEOUT_S + _SHORT), p["token_secret"])
    runs = poll_runs(params=params, handle=handle, spawned=spawned.outputs["runs"])
    _kfp_caller(_step(runs, MAX_RUN_TIMEOUT_S + _SHORT), p["token_secret"])
    # Unnamed: a named loop's collected outputs need a KFP backend of 2.16.0 (kfp/backend.py).
    with dsl.ParallelFor(target.output) as worker:
        load = inference_load(params=worker.params, worker=worker.worker)
        load = _step(load.after(sweep), MAX_DURATION_S + _SHORT)
        _worker(load, p["load_node_selector"], route, p["token_secret"])
    merged = _step(
        aggregate(
            params=params,
            runs=runs.outputs["runs"],
            loads=dsl.Collected(load.outputs["result"]),
            sweep=sweep.outputs["sweep"],
            replicas=watch.outputs["replicas"],
        )
    )
    # The report with the history (its packages, scipy and google-cloud-storage, only in a run
    # that asked for one) or without it, then one check of whichever ran: dsl.OneOf over their
    # outcome strings (an artifact's OneOf picks the wrong branch on KFP 2.15.0,
    # kfp_bench.steps.outcome).
    with dsl.If(p["results_uri"] != ""):
        history = _step(report_history(params=params, results=merged.outputs["results"]))
        # KFP's own store key, for minio:// (kfp_bench/history/s3.py): the Secret its driver
        # reads (kubeflow/pipelines 7b70c7b95f backend/src/v2/config/env.go:40-44), optional
        # since a gs:// or s3:// history needs none. A volume, not use_secret_as_env: an
        # optional Secret as env needs a 2.15.0 backend (#12216, 55ec8469d5), a volume 2.2.0.
        kubernetes.use_secret_as_volume(
            history, "mlpipeline-minio-artifact", mount_path=MINIO_SECRET_DIR, optional=True
        )
    with dsl.Else():
        shown = _step(report(params=params, results=merged.outputs["results"]))
    # A flagged benchmark, or one whose thresholds broke, fails here, after the report published
    # its outputs: a failed task publishes only its logs (kfp backend/src/v2/component/
    # launcher_v2.go, uploadOutputArtifacts), so the report itself must succeed for its HTML and
    # metrics to show.
    _step(
        check_outcome(
            outcome=dsl.OneOf(history.outputs["Output"], shown.outputs["Output"]), params=params
        )
    )
    _llm(p, params, target, sweep, route)


def _llm(p: dict, params, target, sweep, route: str) -> None:
    """The LLM load's steps, only with run_llm: a default run starts no more pods (its start-up
    budget, BENCHMARKS.md). Beside the predict load, after the sweep (so the sweep's steps are
    never disturbed); report_llm merges and publishes, and its check_outcome fails a flagged
    LLM load once the LLM report is published."""
    with dsl.If(p["run_llm"] == True):  # noqa: E712 - a pipeline condition, not a Python test
        fan = _step(llm_targets(targets=target.output))
        with dsl.ParallelFor(fan.output) as worker:
            load = llm_load(params=worker.params, worker=worker.worker)
            load = _step(load.after(sweep), MAX_DURATION_S + _SHORT)
            _worker(load, p["load_node_selector"], route, p["token_secret"])
        shown = _step(report_llm(params=params, loads=dsl.Collected(load.outputs["result"])))
        _step(check_outcome(outcome=shown.outputs["Output"], params=params))


def _pipeline_func(route: str):
    """The pipeline function of one mesh route."""

    def _kfp_bench(*values):
        p = dict(zip(BenchParams.names(), values, strict=True))
        job_id = dsl.PIPELINE_JOB_ID_PLACEHOLDER
        done = cleanup(
            kfp_host=p["kfp_host"],
            namespace=p["namespace"],
            benchmark_id=p["benchmark_id"],
            job_id=job_id,
            run_benchmark=p["run_benchmark"],
            isvc=p["isvc"],
            fill_runs=p["fill_runs"],
        )
        _kfp_caller(_step(done), p["token_secret"])
        with dsl.ExitHandler(done, name="benchmark"):
            _benchmark(p, job_id, route)

    # KFP reads a pipeline's parameters from its signature and their help from its docstring:
    # both come from BenchParams, where the defaults and their documentation are written once.
    _kfp_bench.__signature__ = _signature(mesh_route=route)
    _kfp_bench.__doc__ = "\n".join(
        ["Benchmark a KFP server and an inference endpoint.", "", "Args:"]
        + [f"    {name}: {text}" for name, text in field_docs(BenchParams).items()]
    )
    return _kfp_bench


_TYPES = {"str": str, "bool": bool, "int": int, "float": float, "dict": dict}


def _signature(**defaults) -> inspect.Signature:
    """The pipeline's parameters: BenchParams' fields, their types and defaults (``defaults``
    overriding some), in order."""
    params = []
    for f in fields(BenchParams):
        default = f.default if f.default is not MISSING else f.default_factory()
        default = defaults.get(f.name, default)
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(inspect.Parameter(f.name, kind, default=default, annotation=_TYPES[f.type]))
    return inspect.Signature(params)


#: The compiled meta-pipelines: name -> (the pipeline's name in KFP, its mesh route).
VARIANTS = {"kfp_bench": ("kfp-bench", "none"), "kfp_bench_mesh": ("kfp-bench-mesh", "sidecar")}


def build(delivery: Delivery = Delivery(), variant: str = "kfp_bench"):  # noqa: B008 - frozen
    """The meta-pipeline ``variant`` (a key of ``VARIANTS``) whose steps get their code by
    ``delivery`` (package or image)."""
    name, route = VARIANTS[variant]
    with delivery.active():
        return dsl.pipeline(name=name)(_pipeline_func(route))


kfp_bench = build()
kfp_bench_mesh = build(variant="kfp_bench_mesh")
