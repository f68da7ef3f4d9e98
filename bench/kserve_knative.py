"""KServe's autoscaling guide in its own form, Knative's (KServe's Serverless mode), on the
real-cluster tier (`make cluster-knative`), and cold starts of Serverless against RawDeployment.

1. The guide's concurrency target: scaleTarget 1, scaleMetric concurrency, loaded by `kfp-bench
   load -z 30s -c 5` (the guide's hey flags); the same InferenceService loaded as the guide's
   "target QPS" section loads it, `hey -z 30s -q 50` (hey's 50 workers, each at most 50
   requests a second); then containerConcurrency 10 as a hard limit, loaded with 50 in flight
   (`-c 50`). Replicas sampled every second by kfp-bench's watcher from the PodAutoscaler and
   the pods, beside Knative's rule for the load's concurrency, ceil(concurrency / (target x
   70%)) (kfp_bench.kserve.watch.expected_replicas), the concurrency by Little's law (requests
   a second x mean latency).
2. Cold starts, N of each: Serverless from zero (minReplicas 0: no traffic until Knative takes
   the last pod away, then one request, held by the activator until a new pod answers) against
   RawDeployment's new pod (its pod deleted, the Deployment's next one asked at its own address),
   each in phases from the pod's conditions and events; for Serverless also the activation, from
   the request sent to the pod created.

No Knative ingress runs here (docs/real-kfp.md#knative): the load goes to the revision's public
Service with the headers an ingress adds. Each pod has 150m of CPU so that the guide's five fit
beside the cluster's own on two cores.

Usage: .venv/bin/python bench/kserve_knative.py [--cold-starts N]
Needs a cluster with Knative (make cluster-knative); exit 2 without one, 1 when anything of an
InferenceService is left after its delete. Writes bench/results/kserve-knative/<started>.json
(bench/render.py puts it in BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import result_files
from kserve_guide import IRIS, leftovers, load
from kubernetes import client
from peers import host

from kfp_bench import __version__
from kfp_bench.kserve.coldstart import first_success, wait_for_zero
from kfp_bench.kserve.deploy import delete, deploy, failing_condition
from kfp_bench.kserve.kube import Kube, selector
from kfp_bench.kserve.phases import PHASES, new_pod_start, summary, timeline
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.kserve.watch import KPA, ReplicaWatcher, expected_replicas, knative_target
from kfp_bench.load.options import LoadOptions

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / ".cluster" / "env"
CPU, MEMORY = "150m", "512Mi"
#: (label, scale fields, in flight, per-worker requests a second (0: no limit), the guide's)
LOADS = (
    ("concurrency target 1", {"scale_target": 1, "scale_metric": "concurrency"}, 5, 0,
     "about 5 pods (hey -z 30s -c 5)"),
    ("concurrency target 1, -q 50", {"scale_target": 1, "scale_metric": "concurrency"}, 50, 50,
     "average concurrency 10, about 10 pods (hey -z 30s -q 50: 684 req/s)"),
    ("containerConcurrency 10", {"container_concurrency": 10, "scale_target": 0}, 50, 0,
     "a hard limit of 10 in flight per pod"),
)  # fmt: skip


def spec_of(name: str, namespace: str, uri: str, mode: str = "Serverless", **scale) -> IsvcSpec:
    return IsvcSpec(name=name, namespace=namespace, storage_uri=uri, deployment_mode=mode,
                    predictor=ScaleSpec(cpu=CPU, memory=MEMORY, **scale))  # fmt: skip


def revision_of(kube: Kube, name: str, timeout_s: float = 300) -> str:
    """The predictor's revision once it is Ready (the InferenceService is not: no ingress)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = (kube.get_isvc(name) or {}).get("status") or {}
        ready = {c["type"]: c["status"] for c in status.get("conditions", [])}
        if ready.get("PredictorConfigurationReady") == "True":
            return status["components"]["predictor"]["latestReadyRevision"]
        time.sleep(2)
    raise RuntimeError(f"{name}: no ready revision: {failing_condition(kube.get_isvc(name))}")


def revision_url(kube: Kube, name: str, revision: str) -> tuple[str, tuple[str, ...]]:
    svc = client.CoreV1Api(kube.api).read_namespaced_service(revision, kube.namespace)
    headers = (
        f"Knative-Serving-Revision: {revision}",
        f"Knative-Serving-Namespace: {kube.namespace}",
    )
    return f"http://{svc.spec.cluster_ip}/v1/models/{name}:predict", headers


def serverless(kube: Kube, spec: IsvcSpec, bid: str, left: list[str], body) -> None:
    """Create ``spec``, wait for its revision, run ``body(url, headers)``, delete it."""
    kube.create_isvc(spec.to_dict(benchmark_id=bid))
    try:
        body(*revision_url(kube, spec.name, revision_of(kube, spec.name)))
    finally:
        print(f"{spec.name}: {delete(kube, spec.name, benchmark_id=bid, wait_s=180)}")
        left += leftovers(kube, spec.name)


def guide_load(kube, spec, in_flight: int, qps: float, url: str, headers, tmp: Path) -> dict:
    watcher = ReplicaWatcher(kube, spec.name, autoscaler=KPA, interval_s=1).start()
    t0 = time.time()
    result = load(url, 30, tmp / "input.json", tmp / f"{spec.name}.json", concurrency=in_flight,
                  headers=headers, qps=qps)  # fmt: skip
    time.sleep(5)
    samples = watcher.stop()
    return {"result": result, "t0": t0, "samples": [s for s in samples if s.t >= t0]}


def zero_start(kube: Kube, name: str, opts: LoadOptions) -> dict:
    """One cold start from zero: wait for no live pod, send the request, time it; the new pod's
    phases, and the activation (request sent to pod created)."""
    wait_for_zero(kube, name, timeout_s=600, poll_s=1)
    sent = time.time()
    took, attempts, errors = first_success(opts, timeout_s=300)
    loaded = time.time()
    sel = selector(name)
    pods = [p for p in kube.pod_docs(sel) if not p["metadata"].get("deletionTimestamp")]
    pod = max(pods, key=lambda p: p["metadata"]["creationTimestamp"])
    deadline = time.monotonic() + 120
    while True:
        line = timeline(pod, kube.pod_events(pod["metadata"]["name"]))
        if line.ready is not None or time.monotonic() > deadline:
            break
        time.sleep(1)
        pod = next((p for p in kube.pod_docs(sel) if p["metadata"]["name"] == line.pod), pod)
    phases = {"activation": round(line.created - sent), **line.phases(loaded)}
    return {"pod": line.pod, "attempts": attempts, "errors": list(errors),
            "first_success_s": round(took, 1), "phases": phases}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--cold-starts", type=int, default=5, help="cold starts of each mode (5; ~90 s each)"
    )
    a = parser.parse_args()
    if a.cold_starts < 1:
        parser.error(f"--cold-starts {a.cold_starts}: give 1 or more cold starts to time")
    env = dict(line.split("=", 1) for line in ENV.read_text().splitlines()) if ENV.exists() else {}
    if "KNATIVE_VERSION" not in env:
        print("kserve_knative: no cluster with Knative; run make cluster-knative", file=sys.stderr)
        return 2
    started, machine, commit = result_files.now(), host(), result_files.commit()
    kube = Kube(env["KSERVE_NAMESPACE"], kubeconfig=env["KUBECONFIG"])
    uri, bid = env["KSERVE_MODEL_URI"], f"kn-{uuid.uuid4().hex[:6]}"
    loads, zero, raw, left = {}, [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "input.json").write_text(IRIS)
        for i, (label, scale, in_flight, qps, _) in enumerate(LOADS):
            spec = spec_of(f"guide-{i}", kube.namespace, uri, min_replicas=1, **scale)
            print(f"load {label}: 30 s, {in_flight} workers", flush=True)

            def run(url, headers, spec=spec, n=in_flight, q=qps, label=label):
                loads[label] = guide_load(kube, spec, n, q, url, headers, Path(tmp))

            serverless(kube, spec, bid, left, run)

    def from_zero(url, headers):
        opts = LoadOptions(url=url, method="POST", body=IRIS.encode(),
                           content_type="application/json", headers=headers).validate()  # fmt: skip
        for i in range(a.cold_starts):
            zero.append(zero_start(kube, "zero", opts))
            print(f"Serverless from zero {i + 1}/{a.cold_starts}: {zero[-1]['phases']}", flush=True)

    serverless(kube, spec_of("zero", kube.namespace, uri, min_replicas=0), bid, left, from_zero)
    spec = spec_of("raw", kube.namespace, uri, "RawDeployment", scale_metric="cpu", scale_target=50)
    deploy(kube, spec, benchmark_id=bid, timeout_s=300)
    try:
        opts = LoadOptions(url="http://unused/v1/models/raw:predict", method="POST",
                           body=IRIS.encode(), content_type="application/json")  # fmt: skip
        for i in range(a.cold_starts):
            raw.append(new_pod_start(kube, "raw", opts, timeout_s=300))
            print(f"RawDeployment new pod {i + 1}/{a.cold_starts}: {raw[-1]['phases']}", flush=True)
    finally:
        print(f"raw: {delete(kube, 'raw', benchmark_id=bid, wait_s=180)}")
        left += leftovers(kube, "raw")
    machine = {**machine, "loadavg_1m_end": round(os.getloadavg()[0], 2)}
    saved = result_files.save(_result(loads, zero, raw, started, machine, commit, env))
    print(f"wrote {saved.relative_to(ROOT)}")
    if left:
        print(f"kserve_knative: left behind: {', '.join(left)}", file=sys.stderr)
        return 1
    return 0


def _result(loads, zero, raw, started, machine, commit, env) -> result_files.Result:
    rows, over_time = [], {}
    for label, scale, in_flight, qps, guide in LOADS:
        run = loads[label]
        r, samples = run["result"], run["samples"]
        target = knative_target(scale.get("scale_metric", "concurrency"), scale["scale_target"],
                                scale.get("container_concurrency", 0))  # fmt: skip
        # Little's law: the load's mean concurrency, what the KPA's stable window averages
        concurrency = r["rps"] * r["latency_ms"]["mean"] / 1000
        rows.append([
            label, f"-c {in_flight}" + (f" -q {qps:g}" if qps else ""), r["requests"],
            f"{r['rps']:.0f}", f"{concurrency:.1f}", f"{r['success_ratio']:.3f}",
            f"{r['latency_ms']['p50']:.0f} / {r['latency_ms']['p99']:.0f}",
            max(s.ready for s in samples), max((s.desired or 0) for s in samples),
            expected_replicas(concurrency, target), guide,
        ])  # fmt: skip
        over_time[label] = [[round(s.t - run["t0"]), s.ready, s.total, s.desired, s.actual]
                            for s in samples[::2]]  # fmt: skip
    spread = {"Serverless": summary(zero), "Raw": summary(raw)}
    act = [z["phases"]["activation"] for z in zero]
    phase_rows = [["activation (request to pod created)", len(act), min(act),
                   statistics.median(act), max(act), "-", "-", "-"]]  # fmt: skip
    phase_rows += [
        [p, spread["Serverless"][p]["n"],
         *(spread[m][p].get(k) for m in ("Serverless", "Raw") for k in ("min", "median", "max"))]
        for p in (*PHASES, "total")
    ]  # fmt: skip
    held = sum(z["attempts"] == 1 for z in zero)
    firsts = sorted(z["first_success_s"] for z in zero)
    return result_files.Result(
        benchmark="kserve-knative",
        title="KServe's autoscaling guide, Knative form, and cold starts Serverless against Raw",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={
            "kfp-bench": __version__,
            "kserve": "0.15.2",
            "knative-serving": env["KNATIVE_VERSION"],
            "kubernetes": "v1.34.4",
        },
        goals=[
            result_files.Goal(
                "most ready pods, the guide's concurrency target",
                str(rows[0][7]),
                "the guide: about 5",
                None,
            ),
            result_files.Goal(
                "Serverless cold start, request to first answer, median",
                f"{firsts[len(firsts) // 2]} s",
                "the guide: about 10 s",
                None,
            ),
            result_files.Goal(
                "cold-start requests held by the activator (one attempt)",
                f"{held} of {len(zero)}",
                "all",
                held == len(zero),
            ),
        ],  # fmt: skip
        tables=[
            result_files.Table(
                f"sklearn iris (SVC), Serverless, {CPU} CPU per pod, 1 pod at the start, 30 s "
                "of `kfp-bench load -c N [-q Q] -m POST -D input.json -T application/json` to the "
                "revision (no ingress)",
                [
                    "form",
                    "load",
                    "requests",
                    "req/s",
                    "concurrency",
                    "success",
                    "p50 / p99 ms",
                    "ready pods, most",
                    "KPA desired, most",
                    "Knative's rule",
                    "the guide",
                ],
                rows,
            ),  # fmt: skip
            *(
                result_files.Table(
                    f"{label}, every 2 s from the load's start: pods ready and live, the "
                    "PodAutoscaler's desired and actual scale",
                    ["s", "ready", "live", "desired", "actual"],
                    over_time[label],
                    detail=True,
                )
                for label, *_ in LOADS
            ),
            result_files.Table(
                f"cold starts, {len(zero)} Serverless from zero (the first request held by the "
                f"activator; to its answer: {', '.join(map(str, firsts))} s) and {len(raw)} "
                "RawDeployment new pods (asked at the pod's address), in phases, seconds "
                "(whole: the API's resolution)",
                ["phase", "n", "Serverless min", "median", "max", "Raw min", "median", "max"],
                phase_rows,
            ),
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
