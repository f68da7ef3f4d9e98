"""The work of each step of the kfp_bench pipeline, as functions of parameters and paths.

A component (``components/``) is one call into this module: it turns its KFP inputs and outputs
into ``BenchParams`` and file paths, and prints what the function returns. Each function imports
what it uses inside itself, so that a step's pod needs only its own extra of kfp-bench (the
``@step`` mark of its component). Every step between the first and the exit handler calls
``fail_point`` once its work is done (the ``KFP_BENCH_FAIL_STEP`` test hook).

Partial results over no results: a helper step that fails to measure (``poll_runs``,
``inference_load``, ``watch_replicas``) saves what it had with the error, prints the error and
ends successfully, so that ``aggregate`` and ``report`` still run; ``aggregate`` flags what is
missing (``kfp_bench.outcome``: ``workers-lost``, ``no-load``, ``step-failed``), and
``check_outcome``, after the report is published, fails the run when a failure flag is set.
Only an error kfp-bench raises on purpose (``BenchError``: an API refusal, an engine error with
its stats) or the network's (``OSError``: a target whose name does not resolve) counts as a
failure to measure; any other exception is a bug and fails the step, as does the failpoint.
"""

from __future__ import annotations

import json
import os
import shutil

from kfp_bench.failpoint import fail_point
from kfp_bench.params import BenchParams, benchmark_id_for, token_auth
from kfp_bench.worker_start import RETRY_INDEX_ENV, worker_started  # noqa: F401 - the steps' API

OFF_RUNS = "runs benchmark switched off (run_benchmark=false)"
#: The file a runs step's directory holds when the step failed to measure: {"error": text}.
ERROR_FILE = "error.json"


def _write_json(path: str, doc) -> None:
    with open(path, "w") as f:
        json.dump(doc, f)


def _failed(step: str, exc: Exception, who: str = "") -> str:
    """Print and return the error of a helper step that failed to measure, with its type (so a
    KubeError reads apart from an ApiError in the report)."""
    text = f"{type(exc).__name__}: {exc}"
    print(f"{who}{step} failed to measure: {text}")
    return text


def check_params(p: BenchParams, job_id: str) -> dict:
    """Check every parameter (``BenchParams.check``), then take the benchmark's lease
    (``take_lease``); return the parameters, as every later step reads them, with this run's
    own benchmark id (``benchmark_id_for``: the given one is a prefix) and namespace
    (``BenchParams.with_namespace``: an empty one becomes the pod's own on multi-user KFP)."""
    import kfp_bench

    print(f"kfp-bench {kfp_bench.__version__} from {os.path.dirname(kfp_bench.__file__)}")
    p.check()
    p = p.with_namespace()  # decided once: every later step reads it from what this returns
    bid = benchmark_id_for(p.benchmark_id, job_id)
    print(f"parameters OK; benchmark id {bid} (pipeline run {job_id})")
    # The targets answer before anything is created or held (a refused benchmark then holds
    # no lease, and its cleanup releases nothing).
    from kfp_bench.probe import probe

    for line in probe(p):
        print(line)
    if p.run_llm and p.llm_url:
        import dataclasses

        from kfp_bench.probe import probe_llm

        line, model = probe_llm(p)
        print(line)
        p = dataclasses.replace(p, llm_model=model)  # the later steps ask for the model found
    if p.run_benchmark:
        print(take_lease(p, bid, job_id))
    return {**p.as_dict(), "benchmark_id": bid}


def _kfp_api(p: BenchParams, bid: str):
    from kfp_bench.kfp.api import Backoff, KfpApi

    opts = p.runs_options(bid)
    api = KfpApi(opts.host, auth=opts.auth, retry=Backoff.of(opts), timeout=opts.request_timeout)
    api.preflight()  # an unreachable host or refused token: a ConfigError, nothing created
    return api


def take_lease(p: BenchParams, bid: str, job_id: str) -> str:
    """Take the lease of ``p.benchmark_id`` for ``bid`` (``kfp_bench.kfp.lease``), waiting up to
    lease_wait_sec while another live benchmark holds it; when an expired one is taken over,
    sweep what its holder left (it was terminated or crashed: its exit handler did not clean
    up). What was done, in one line."""
    import time

    from kfp_bench.kfp import lease

    mine = lease.Lease(
        lease.lease_name(p.benchmark_id), bid, job_id, time.time() + lease.lease_ttl(p)
    )
    api = _kfp_api(p, bid)
    try:
        got = lease.acquire(api, mine, wait_s=p.lease_wait_sec, poll_s=p.poll_interval_sec)
    finally:
        api.close()
    line = f"lease {got.lease.name} taken until {got.lease.describe().rsplit(', until ', 1)[1]}"
    if got.waited >= 1:
        line += f" after waiting {got.waited:.0f}s"
    if got.taken_over is not None:
        line += f"; took over the stale lease of {got.taken_over.describe()}; "
        line += _sweep_leftovers(p, got.taken_over.holder)
    return line


def _sweep_leftovers(p: BenchParams, holder: str) -> str:
    """Sweep the KFP server for what benchmark ``holder`` created; what was removed."""
    from kfp_bench.errors import ConfigError
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    try:
        opts = CleanupOptions(host=p.kfp_host, benchmark_id=holder, auth=token_auth(p.namespace))
        done = sweep(opts)
    except ConfigError as exc:  # a holder id no sweep takes: say so, nothing to find by it
        return f"its leftovers not swept: {exc}"
    d = done["deleted"]
    line = (
        f"swept its leftovers: {d['recurring_runs']} recurring runs, {d['runs']} runs, "
        f"{d['experiments']} experiments, {d['pipeline_versions']} pipeline versions, "
        f"{d['pipelines']} pipelines"
    )
    if done["failed"]:
        left = "; ".join(done["failed"])
        line += f"; NOT removed: {left} (kfp-bench cleanup --benchmark-id {holder})"
    return line


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
            from kfp_bench.llm_steps import deployed_llm_target

            p = deployed_llm_target(p, spec, done.url)
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
    from kfp_bench.errors import BenchError
    from kfp_bench.kfp.phases import BenchmarkHandle, poll

    shutil.copytree(spawned, out, dirs_exist_ok=True)
    h = BenchmarkHandle.from_json(handle)
    try:
        doc = poll(h, p.runs_options(h.benchmark_id), out).summary()
    except (BenchError, OSError) as exc:  # the records written so far stay in ``out``
        _write_json(os.path.join(out, ERROR_FILE), {"error": _failed("poll_runs", exc)})
    else:
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
        on_step=_said_step,
    )
    _write_json(out, result.as_dict())
    print(f"knee: {result.knee.rate} ({result.knee.reason})")
    fail_point("rate_sweep")


def _said_step(s) -> None:
    p99 = "no response" if s.p99_ms is None else f"p99 {s.p99_ms:.1f} ms"
    print(f"{s.rate:g} req/s: {p99}, {s.success_ratio:.2%}, {s.no_response} without a response")


def inference_load(p: BenchParams, worker: int, out: str) -> None:
    """Send load worker ``worker``'s share of the load and save its histograms at ``out``."""
    if not p.run_load:
        print("inference load switched off (run_load=false)")
        _write_json(out, {"skipped": True})
        return
    from kfp_bench.errors import BenchError
    from kfp_bench.jsonl import write_json_atomic
    from kfp_bench.load.workers import run_load
    from kfp_bench.stats.load import cpu_caveat, cpu_figures

    if worker_started(out, worker, f"load worker {worker}: ", p, "worker"):
        return
    error = ""
    try:
        stats = run_load(p.load_options().share(worker, p.load_workers))
    except (BenchError, OSError) as exc:
        stats = getattr(exc, "stats", None)  # an EngineError's: what was measured before it
        error = _failed("inference_load", exc, f"worker {worker}: ")
    # The error beside the stats (LoadStats reads past it); alone, the result is unreadable and
    # aggregate names the worker lost.
    doc = {**(stats.to_dict() if stats is not None else {}), "worker": worker}
    write_json_atomic({**doc, "error": error} if error else doc, out)
    if stats is None:
        fail_point("inference_load")
        return
    print(f"worker {worker}: {stats.requests} requests, {stats.summary().rps:.1f} req/s")
    cpu = cpu_figures(stats)
    if cpu:
        print(f"worker {worker}: load generator CPU {cpu['cores']:.2f} cores")
    if caveat := cpu_caveat(cpu):
        print(f"worker {worker}: WARNING: {caveat}")
    fail_point("inference_load")


def watch_replicas(p: BenchParams, out: str) -> None:
    """Sample the InferenceService's pods and autoscaler for the sweep and the load: Knative's
    PodAutoscalers, or in Standard/RawDeployment mode its HPA (the mode as ``learn_mode`` finds
    it, the deployed object first; unknown: Serverless, with a warning)."""
    if not p.isvc:
        print("no InferenceService to watch")
        _write_json(out, {"skipped": True})
        return
    from kfp_bench.errors import BenchError
    from kfp_bench.kserve.kube import Kube
    from kfp_bench.kserve.mode import Mode, learn_mode
    from kfp_bench.kserve.watch import HPA, KPA, ReplicaWatcher, watcher_doc
    from kfp_bench.load.options import parse_rates

    spec = p.isvc_spec()
    steps = len(parse_rates(p.sweep_rates, "sweep_rates")) if p.sweep_rates.strip() else 0
    window = p.duration_sec + steps * p.sweep_step_sec + 30.0  # + the load pods' start
    w, error, mode = None, "", Mode("")
    try:
        kube = Kube(spec.namespace)
        mode = learn_mode(kube, spec, kube.get_isvc(spec.name))
        if not mode.name:
            mode = mode.assumed("the InferenceService records no mode, so Serverless is assumed")
        print(mode.said())
        w = ReplicaWatcher(kube, spec.name, autoscaler=KPA if mode.knative else HPA)
        samples = w.watch(window)
    except (BenchError, OSError) as exc:  # a 403 on podautoscalers: keep the samples before it
        samples, error = list(w.samples) if w is not None else [], _failed("watch_replicas", exc)
    # Knative's rule (expected replicas from the concurrency) judges a KPA only: an HPA's target
    # is a CPU or memory utilization, so its samples go without one.
    target = spec.predictor.scale_target if mode.knative else 0
    doc = watcher_doc(samples, target=target, knative=mode.knative, deployment_mode=mode.name,
                      mode_from=mode.source)  # fmt: skip
    _write_json(out, {**doc, "error": error} if error else doc)
    print(f"{len(samples)} samples, ready pods up to {max((s.ready for s in samples), default=0)}")
    fail_point("watch_replicas")


def aggregate(
    p: BenchParams, runs: str, loads: list[str], sweep: str, replicas: str, out: str
) -> None:
    """Write a results directory (``kfp_bench.results``) from the steps' outputs: the runs
    summary and records, the load workers' histograms merged (a missing worker named in
    load.workers.missing), the sweep and the replica rows, and in ``pipeline`` the failure
    flags of what is missing: ``workers-lost`` (which in ``workers_lost``), ``no-load`` (load
    was on and no worker's result could be read) and ``step-failed`` (each helper step's error
    in ``errors``, by step)."""
    from kfp_bench.results import write_results
    from kfp_bench.stats.store import by_worker, merge_workers

    os.makedirs(out, exist_ok=True)
    errors: dict[str, str] = {}
    summary = None
    if os.path.exists(os.path.join(runs, "runs_summary.json")):
        with open(os.path.join(runs, "runs_summary.json")) as f:
            summary = json.load(f)
    for name in ("runs.jsonl", "api_calls.jsonl"):  # also what a failed poll recorded
        if os.path.exists(os.path.join(runs, name)):
            shutil.copyfile(os.path.join(runs, name), os.path.join(out, name))
    if (error := _error_of(os.path.join(runs, ERROR_FILE))) is not None:
        errors["poll_runs"] = error
    expected = p.load_workers if p.run_load else 0
    merged, lost, notes = merge_workers(loads, expected)
    for note in notes:
        print(note)
    for i, path in sorted(by_worker(loads).items()):
        if i < expected and (error := _error_of(path)) is not None:
            errors[f"inference_load {i}"] = error
    extra = {}
    with open(sweep) as f:
        doc = json.load(f)
    if not doc.get("skipped"):
        extra.update(doc)
    with open(replicas) as f:
        doc = json.load(f)
    if doc.get("error"):
        errors["watch_replicas"] = doc["error"]
    if not doc.get("skipped"):
        from kfp_bench.kserve.watch import replica_rows, sweep_max_replicas

        series = merged.series.rows() if merged is not None else []
        extra.update(replica_rows(doc, series))
        if "sweep" in extra:
            extra["sweep"] = sweep_max_replicas(extra["sweep"], doc)
    flags = ["workers-lost"] if lost else []
    flags += ["no-load"] if expected and merged is None else []
    flags += ["step-failed"] if errors else []
    extra["pipeline"] = {"flags": flags, "errors": errors, "workers_lost": lost}
    for step, error in errors.items():
        print(f"step-failed: {step}: {error}")
    write_results(out, runs_summary=summary, load=merged, extra=extra)
    print(f"results: {sorted(os.listdir(out))}" + (f"; flags {flags}" if flags else ""))
    fail_point("aggregate")


def _error_of(path: str) -> str | None:
    """The error a helper step saved in its output at ``path`` (None: none, or no output)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return (doc.get("error") or None) if isinstance(doc, dict) else None


def check_outcome(
    results: str, params: dict | None = None, flags: bool = True, verdicts: dict | None = None
) -> str:
    """Push the results' figures to ``params``' pushgateway_url when set (``push_outcome``),
    then fail when the results carry a failure flag (``kfp_bench.outcome``; only with ``flags``)
    or a gate the report step checked broke (its gates.json, ``kfp_bench.gates``), so that the
    run does not end SUCCEEDED; the report step before it has published its outputs. A push
    that failed fails the step too, after the flags and gates (which it never hides). What was
    found, in one line.

    One check pushes each part's group (``_pushes``): with results_uri, the check after
    report_history (``flags`` False), whose figures carry the regression verdict; else the
    check after report; and the LLM's check its own."""
    from kfp_bench import gates
    from kfp_bench.errors import BenchError, PushError, ResultsError
    from kfp_bench.outcome import describe, failures, summary_flags

    # summary.json and gates.json, with the standard library: the step installs no extra
    path = os.path.join(results, "summary.json")
    try:
        with open(path) as f:
            summary = json.load(f)
        broken = gates.broken_lines(results)
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{results}: no results summary or gates to check ({exc})") from None
    flagged = failures(summary_flags(summary))
    found = flagged if flags else []
    p = BenchParams.from_dict(params) if params else None
    push_error, pushed = None, []
    if p is not None and _pushes(p, results, flags):
        try:
            pushed = push_outcome(p, results, flagged, verdicts or gates.saved_verdicts(results))
        except PushError as exc:
            print(f"push failed: {exc}")
            push_error = exc
    fail_point("check_outcome")
    also = f" (the push failed too: {push_error})" if push_error else ""
    for line in broken:
        print(line)
    if broken and not found:
        raise BenchError(
            f"{len(broken)} gate(s) broke ({'; '.join(broken)}): the report is published (the "
            "report step's HTML, Markdown and metrics, its first lines saying which gate broke) "
            f"and this step fails so that the run does not end SUCCEEDED{also}"
        )
    if found:
        for line in describe(found):
            print(line)
        raise BenchError(
            f"the benchmark is flagged {', '.join(found)}: its report is published (the report "
            "step's HTML, Markdown and metrics) and says what is missing; this step fails so "
            f"that the run does not end SUCCEEDED{also}"
        )
    if push_error is not None:
        raise PushError(
            f"the benchmark passed and its report is published, but {push_error}; this step "
            "fails so that a missing push shows in the run, not only as a stale alert"
        )
    gated = os.path.exists(os.path.join(results, gates.GATES_FILE))
    done = ("no failure flag, " if flags else "") + ("no gate broken" if gated else "no gate")
    return "; ".join([done, *pushed])


def _pushes(p: BenchParams, results: str, flags: bool) -> bool:
    """Whether this check pushes its part's group: two checks PUT to one group would race."""
    if not p.pushgateway_url:
        return False
    llm = os.path.exists(os.path.join(results, "llm.json"))  # llm_steps.LLM_RESULT
    return llm or not flags or not p.results_uri


def push_outcome(p: BenchParams, results: str, flags: list[str], verdicts=None) -> list[str]:
    """Push the figures of ``results`` (its metrics.json, which the report steps write; else
    only the failure count) to ``p.pushgateway_url`` (``kfp_bench.push``), labelled benchmark
    (``benchmark_label``), target (what was measured) and part (main, or llm for report_llm's
    results); print and return what was pushed."""
    from kfp_bench.push import push
    from kfp_bench.redact import public_url

    metrics = {"failures": len(flags)}
    if os.path.exists(path := os.path.join(results, "metrics.json")):
        with open(path) as f:
            metrics = {**json.load(f), **metrics}
    llm = os.path.exists(os.path.join(results, "llm.json"))  # llm_steps.LLM_RESULT
    isvc = f"isvc/{p.isvc.get('name', '')}" if p.isvc else ""  # deployed: its URL is made later
    if llm:
        target = p.llm_url or isvc
    else:
        target = (isvc or p.inference_url) if (p.run_load or p.sweep_rates) else p.kfp_host
    labels = {
        "benchmark": benchmark_label(p.benchmark_id),
        "target": public_url(target).split("?")[0],
        "part": "llm" if llm else "main",
    }
    lines = push(p.pushgateway_url, metrics, labels, verdicts=verdicts)
    for line in lines:
        print(line)
    return lines


def benchmark_label(bid: str) -> str:
    """The benchmark_id parameter as given, from the run's own id (``benchmark_id_for``: the
    given prefix + "-" + 10 hex digits); "kfp-bench" for an id made from the run's id (no
    benchmark_id given), as the lease's name (``kfp.lease.lease_name``). Stable across the runs
    of a recurring run, so that their pushes share a group."""
    import re

    from kfp_bench.params import RUN_HASH_LEN

    found = re.fullmatch(rf"(.+)-[0-9a-f]{{{RUN_HASH_LEN}}}", bid)
    return found.group(1) if found else "kfp-bench"


#: The parts of the benchmark whose figures the report step publishes (``kfp_bench.gates``).
REPORT_KINDS = frozenset({"runs", "load", "sweep", "replicas"})
#: The KFP UI truncates Markdown at 400 kB.
MARKDOWN_LIMIT = 390_000


def report(
    results: str,
    records: str,
    html: str,
    summary: str,
    *,
    results_uri: str = "",
    baseline: str = "",
    gates=(),
) -> dict[str, float]:
    """Build the report bundle into ``records``, copy its HTML and (bounded) Markdown out, and
    return the finite scalar metrics, by their stable names.

    With ``results_uri``, as ``kfp-bench report --results-uri --baseline`` does
    (``kfp_bench.report.rebuild.rebuild``): the report shows the trend of the earlier results
    there and the regression verdict against ``baseline`` (its figures join the metrics), and
    the results are archived there. A baseline too small for a verdict is said in the report; a
    history that cannot be read or written fails the step (``HistoryError``), naming the
    parameter: in the pipeline that is the report_history step, beside the plain report, whose
    outputs stay published. The verdicts of ``gates`` open the report and are saved in
    ``records``' gates.json, which check_outcome reads; a broken gate never fails this step.
    """
    import math

    from kfp_bench.results import read_results

    shutil.copytree(results, records, dirs_exist_ok=True)
    res = read_results(results)
    if results_uri:
        files = _report_with_history(res, records, results_uri, baseline, gates)
    else:
        from kfp_bench.report.bundle import write_bundle

        files = write_bundle(res, records, gates=gates)
    _print_gates(files)
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


def _print_gates(files: dict) -> None:
    from kfp_bench import gates

    if gates.GATES_FILE in files:
        doc = json.loads(files[gates.GATES_FILE].read_text())
        print(f"gates: {doc['gates_broken']} of {doc['gates_checked']} broken")
        for row in doc["gates"]:
            print(f"  {row['line']}")


def _report_with_history(res, records: str, results_uri: str, baseline: str, gates) -> dict:
    from kfp_bench.errors import ConfigError, HistoryError
    from kfp_bench.report.rebuild import rebuild

    try:
        done = rebuild(res, records, results_uri=results_uri, baseline=baseline, gates=gates)
    except (ConfigError, HistoryError) as exc:
        # the engine's messages name the CLI's flags; here they are the pipeline's parameters
        text = str(exc).replace("--results-uri", "results_uri").replace("--baseline", "baseline")
        raise type(exc)(f"pipeline parameters: {text}") from None
    h = done.history
    print(f"history {results_uri}: {len(h.entries)} earlier results")
    if h.verdict is not None:
        print(h.verdict.headline())
    elif h.refused:
        print(f"no verdict: {h.refused}")
    print(f"{'archived' if done.archived else 'already archived'} as {done.key}")
    return done.files


def cleanup(p: BenchParams, job_id: str, state: str, error: str) -> str:
    """Delete this benchmark's InferenceService (only one labelled with its benchmark id) and
    sweep the KFP server for its runs, experiment and pipeline and its load workers' start marks
    (``kfp_bench.kfp.start_mark``), whatever state it ended in; what was deleted, or left alone
    as not ours, in one line."""
    from kfp_bench.errors import BenchError, ConfigError

    print(f"benchmark ended {state}" + (f": {error}" if error else ""))
    try:  # the exit handler reads the pipeline's own parameters: decided as check_params did
        p = p.with_namespace()
    except ConfigError as exc:  # multi-user and no namespace: the first step refused it too
        return f"nothing to clean up: {exc}"
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
    if not (p.run_benchmark or p.run_load or p.run_llm):  # the load workers' start marks too
        return isvc_done + "nothing to clean up: the runs benchmark and the loads were off"
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    try:
        bid = benchmark_id_for(p.benchmark_id, job_id)
        auth = token_auth(p.namespace, p.kfp_host, p.token_secret)  # the pod's, if multi-user
        opts = CleanupOptions(host=p.kfp_host, benchmark_id=bid, auth=auth)
        done = sweep(opts)
    except ConfigError as exc:  # a bad kfp_host or id: the first step failed, nothing was made
        return f"nothing to clean up: {exc}"
    # also after a failed sweep: the error names what remains; only run_benchmark takes a lease
    released = _release_lease(p, bid) if p.run_benchmark else "no lease taken"
    if done["failed"]:
        raise BenchError(
            f"cleanup of benchmark {bid} failed: {'; '.join(done['failed'])}; {released}"
        )
    d = done["deleted"]
    return isvc_done + (
        f"benchmark {bid}: deleted {d['runs']} runs, {d['experiments']} experiments, "
        f"{d['pipeline_versions']} pipeline versions, {d['pipelines']} pipelines; {released}"
    )


def _release_lease(p: BenchParams, bid: str) -> str:
    """Give back the lease check_params took for ``bid``; one held by another is left alone."""
    from kfp_bench.errors import BenchError
    from kfp_bench.kfp import lease

    try:
        api = _kfp_api(p, bid)
        try:
            return lease.release(api, lease.lease_name(p.benchmark_id), bid)
        finally:
            api.close()
    except BenchError as exc:  # it expires, and the next run takes it over and sweeps
        return f"lease not released ({exc}): it expires and the next run takes it over"
