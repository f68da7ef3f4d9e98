"""The work of each step of the kfp_bench pipeline, as functions of parameters and paths.

A component (``components/``) is one call into this module: it turns its KFP inputs and outputs
into ``BenchParams`` and file paths, and prints what the function returns. Each function imports
what it uses inside itself, so that a step's pod needs only its own extra of kfp-bench (the
``@step`` mark of its component). Every step between the first and the exit handler calls
``fail_point`` once its work is done (the ``KFP_BENCH_FAIL_STEP`` test hook).
"""

from __future__ import annotations

import json
import os
import shutil

from kfp_bench.failpoint import fail_point
from kfp_bench.params import BenchParams, benchmark_id_for, token_auth

OFF_RUNS = "runs benchmark switched off (run_benchmark=false)"


def _write_json(path: str, doc) -> None:
    with open(path, "w") as f:
        json.dump(doc, f)


def check_params(p: BenchParams, job_id: str) -> dict:
    """Check every parameter (``BenchParams.check``); return them, as every later step reads
    them, with the benchmark id filled in (derived from ``job_id`` when empty)."""
    import kfp_bench

    print(f"kfp-bench {kfp_bench.__version__} from {os.path.dirname(kfp_bench.__file__)}")
    p.check()
    bid = benchmark_id_for(p.benchmark_id, job_id)
    print(f"parameters OK; benchmark id {bid}")
    return {**p.as_dict(), "benchmark_id": bid}


def deploy_isvc(p: BenchParams, timeout_s: float) -> list[dict]:
    """Deploy the InferenceService of ``p.isvc``, labelled with ``p.benchmark_id``, and wait for
    Ready; one item per load worker, ``{"worker": index, "params": the parameters with
    inference_url the URL to POST to}``. A name already taken is refused (``NotOursError``)."""
    url = p.inference_url
    if not p.isvc:
        print(f"no InferenceService to deploy: loading {p.inference_url}")
    else:
        from kfp_bench.kserve.deploy import deploy
        from kfp_bench.kserve.kube import Kube

        spec = p.isvc_spec()
        # labelled with the benchmark id, so that cleanup deletes it and nothing else
        done = deploy(Kube(spec.namespace), spec, benchmark_id=p.benchmark_id, timeout_s=timeout_s)
        print(f"InferenceService {done.name} ready in {done.ready_s:.0f}s at {done.url}")
        url = done.predict_url
    fail_point("deploy_isvc")
    params = {**p.as_dict(), "inference_url": url}
    return [{"worker": i, "params": params} for i in range(p.load_workers if p.run_load else 1)]


def stage_manifest(p: BenchParams, out: str) -> dict:
    """Resolve, check and keep the child manifest at ``out``; return its metadata."""
    if not p.run_benchmark:
        print(OFF_RUNS)
        open(out, "w").close()
        return {}
    from kfp_bench.kfp.manifest import load_manifest

    m = load_manifest(p.manifest_source())
    m.check_params(p.child_params())
    with open(out, "wb") as f:
        f.write(m.data)
    print(f"manifest {m.name!r} from {p.pipeline}: {len(m.data)} bytes")
    fail_point("stage_manifest")
    return {"pipeline": m.name, "source": p.pipeline, "bytes": len(m.data)}


def upload_manifest(p: BenchParams, manifest: str, out: str) -> str:
    """Upload the staged manifest and create the experiment; the handle as JSON ("" if off)."""
    import dataclasses

    from kfp_bench.kfp.phases import upload

    os.makedirs(out, exist_ok=True)
    if not p.run_benchmark:
        print(OFF_RUNS)
        return ""
    opts = dataclasses.replace(p.runs_options(p.benchmark_id), pipeline=manifest)
    handle = upload(opts, out_dir=out)
    print(f"pipeline {handle.pipeline_id}, experiment {handle.experiment_id}")
    fail_point("upload_manifest")
    return handle.to_json()


def spawn_runs(p: BenchParams, handle: str, uploaded: str, out: str) -> int:
    """Create the child runs; return how many were created."""
    shutil.copytree(uploaded, out, dirs_exist_ok=True)
    if not handle:
        print(OFF_RUNS)
        return 0
    from kfp_bench.kfp.phases import BenchmarkHandle, spawn

    h = BenchmarkHandle.from_json(handle)
    ids = spawn(h, p.runs_options(h.benchmark_id), out)
    print(f"created {len(ids)} of {p.num_runs} runs")
    fail_point("spawn_runs")
    return len(ids)


def poll_runs(p: BenchParams, handle: str, spawned: str, out: str) -> None:
    """Poll the child runs until final and write runs_summary.json beside the records."""
    os.makedirs(out, exist_ok=True)
    if not handle:
        print(OFF_RUNS)
        return
    from kfp_bench.kfp.phases import BenchmarkHandle, poll

    shutil.copytree(spawned, out, dirs_exist_ok=True)
    h = BenchmarkHandle.from_json(handle)
    doc = poll(h, p.runs_options(h.benchmark_id), out).summary()
    with open(os.path.join(out, "runs_summary.json"), "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    print(json.dumps(doc.get("runs", {}), indent=1))
    fail_point("poll_runs")


def rate_sweep(p: BenchParams, out: str) -> None:
    """One open-loop step per rate of ``p.sweep_rates`` against its inference_url, and the knee."""
    if not p.sweep_rates.strip():
        print("rate sweep switched off (sweep_rates empty)")
        _write_json(out, {"skipped": True})
        return
    from kfp_bench.load.options import parse_rates
    from kfp_bench.load.sweep import run_sweep

    result = run_sweep(
        p.load_options(),
        parse_rates(p.sweep_rates, "sweep_rates"),
        p.sweep_step_sec,
        on_step=lambda s: print(f"{s.rate:g} req/s: p99 {s.p99_ms:.1f} ms, {s.success_ratio:.2%}"),
    )
    _write_json(out, result.as_dict())
    print(f"knee: {result.knee.rate} ({result.knee.reason})")
    fail_point("rate_sweep")


def inference_load(p: BenchParams, worker: int, out: str) -> None:
    """Send load worker ``worker``'s share of the load and save its histograms at ``out``."""
    if not p.run_load:
        print("inference load switched off (run_load=false)")
        _write_json(out, {"skipped": True})
        return
    from kfp_bench.load.workers import run_load
    from kfp_bench.stats import store
    from kfp_bench.stats.load import cpu_caveat, cpu_figures

    stats = run_load(p.load_options().share(worker, p.load_workers))
    store.save(stats, out)
    print(f"worker {worker}: {stats.requests} requests, {stats.summary().rps:.1f} req/s")
    cpu = cpu_figures(stats)
    if cpu:
        print(f"worker {worker}: load generator CPU {cpu['cores']:.2f} cores")
    if caveat := cpu_caveat(cpu):
        print(f"worker {worker}: WARNING: {caveat}")
    fail_point("inference_load")


def watch_replicas(p: BenchParams, out: str) -> None:
    """Sample the InferenceService's pods and autoscaler for the sweep and the load."""
    if not p.isvc:
        print("no InferenceService to watch")
        _write_json(out, {"skipped": True})
        return
    from kfp_bench.kserve.kube import Kube
    from kfp_bench.kserve.watch import ReplicaWatcher, watcher_doc
    from kfp_bench.load.options import parse_rates

    spec = p.isvc_spec()
    steps = len(parse_rates(p.sweep_rates, "sweep_rates")) if p.sweep_rates.strip() else 0
    window = p.duration_sec + steps * p.sweep_step_sec + 30.0  # + the load pods' start
    w = ReplicaWatcher(Kube(spec.namespace), spec.name, knative=spec.serverless)
    samples = w.watch(window)
    doc = watcher_doc(samples, target=spec.predictor.scale_target, knative=spec.serverless)
    _write_json(out, doc)
    print(f"{len(samples)} samples, ready pods up to {max((s.ready for s in samples), default=0)}")
    fail_point("watch_replicas")


def aggregate(
    p: BenchParams, runs: str, loads: list[str], sweep: str, replicas: str, out: str
) -> None:
    """Write a results directory (``kfp_bench.results``) from the steps' outputs: the runs
    summary and records, the load workers' histograms merged (a missing worker named in
    load.workers.missing), the sweep and the replica rows."""
    from kfp_bench.results import write_results
    from kfp_bench.stats.store import merge_workers

    os.makedirs(out, exist_ok=True)
    summary = None
    if os.path.exists(os.path.join(runs, "runs_summary.json")):
        with open(os.path.join(runs, "runs_summary.json")) as f:
            summary = json.load(f)
        for name in ("runs.jsonl", "api_calls.jsonl"):
            shutil.copyfile(os.path.join(runs, name), os.path.join(out, name))
    merged, notes = merge_workers(loads, p.load_workers if p.run_load else 0)
    for note in notes:
        print(note)
    extra = {}
    with open(sweep) as f:
        doc = json.load(f)
    if not doc.get("skipped"):
        extra.update(doc)
    with open(replicas) as f:
        doc = json.load(f)
    if not doc.get("skipped"):
        from kfp_bench.kserve.watch import replica_rows, sweep_max_replicas

        series = merged.series.rows() if merged is not None else []
        extra.update(replica_rows(doc, series))
        if "sweep" in extra:
            extra["sweep"] = sweep_max_replicas(extra["sweep"], doc)
    write_results(out, runs_summary=summary, load=merged, extra=extra)
    print(f"results: {sorted(os.listdir(out))}")
    fail_point("aggregate")


#: The KFP UI truncates Markdown at 400 kB.
MARKDOWN_LIMIT = 390_000


def report(results: str, records: str, html: str, summary: str) -> dict[str, float]:
    """Build the report bundle into ``records``, copy its HTML and (bounded) Markdown out, and
    return the finite scalar metrics, by their stable names."""
    import math

    from kfp_bench.report.bundle import write_bundle
    from kfp_bench.results import read_results

    shutil.copytree(results, records, dirs_exist_ok=True)
    files = write_bundle(read_results(results), records)
    shutil.copyfile(files["report.html"], html)
    text = files["summary.md"].read_text()
    if len(text.encode()) > MARKDOWN_LIMIT:
        text = text.encode()[:MARKDOWN_LIMIT].decode(errors="ignore")
        text += "\n\n(truncated: see the HTML)\n"
    with open(summary, "w") as f:
        f.write(text)
    metrics = json.loads(files["metrics.json"].read_text())
    found = {
        name: value
        for name, value in sorted(metrics.items())
        if isinstance(value, int | float) and math.isfinite(value)
    }
    fail_point("report")
    return found


def cleanup(p: BenchParams, job_id: str, state: str, error: str) -> str:
    """Delete this benchmark's InferenceService (only one labelled with its benchmark id) and
    sweep the KFP server for its runs, experiment and pipeline, whatever state it ended in; what
    was deleted, or left alone as not ours, in one line."""
    from kfp_bench.errors import BenchError, ConfigError

    print(f"benchmark ended {state}" + (f": {error}" if error else ""))
    isvc_done = ""
    if p.isvc:
        from kfp_bench.kserve.deploy import delete
        from kfp_bench.kserve.kube import Kube

        try:
            spec, owner = p.isvc_spec(), benchmark_id_for(p.benchmark_id, job_id)
        except ConfigError as exc:  # refused by the first step: nothing was deployed
            spec, isvc_done = None, f"no InferenceService: {exc}; "
        if spec is not None:
            # a user's or another benchmark's InferenceService of that name is not ours to delete
            what = delete(Kube(spec.namespace), spec.name, benchmark_id=owner, wait_s=120.0)
            isvc_done = f"InferenceService {spec.name} {what}; "
            print(isvc_done)
    if not p.run_benchmark:
        return isvc_done + "nothing to clean up: the runs benchmark was switched off"
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    try:
        bid = benchmark_id_for(p.benchmark_id, job_id)
        opts = CleanupOptions(host=p.kfp_host, benchmark_id=bid, auth=token_auth(p.namespace))
        done = sweep(opts)
    except ConfigError as exc:  # a bad kfp_host or id: the first step failed, nothing was made
        return f"nothing to clean up: {exc}"
    if done["failed"]:
        raise BenchError(f"cleanup of benchmark {bid} failed: {'; '.join(done['failed'])}")
    d = done["deleted"]
    return isvc_done + (
        f"benchmark {bid}: deleted {d['runs']} runs, {d['experiments']} experiments, "
        f"{d['pipeline_versions']} pipeline versions, {d['pipelines']} pipelines"
    )
