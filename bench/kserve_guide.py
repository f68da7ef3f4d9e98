"""KServe's autoscaling guide on the real-cluster tier (`make cluster-kserve`): the HPA form of the
guide (RawDeployment: minReplicas 1, maxReplicas 5, scaleMetric cpu, a 50% utilization target,
as KServe's "Autoscale InferenceService with KEDA"/HPA samples write it) deployed by kfp-bench's
deploy code, loaded by `kfp-bench load` with the guide's hey flags (`-z 30s -c 5 -m POST -D
input.json`, plus `-T application/json`, which KServe's Python servers need), then for longer;
replicas sampled every second beside what the HPA proposes (kfp_bench.kserve.hpa, the replica
calculator of Kubernetes ported, fed the pods and the metrics API's samples as the HPA reads them)
and the plain rule ceil(current x utilization / target); each pod's CPU beside it, which shows
where the load went; the longer load again with a new connection per request
(`-disable-keepalive`); then N cold starts of a new pod, in phases.

Usage: .venv/bin/python bench/kserve_guide.py [--cold-starts N] [--long-s S]
Needs a cluster with KServe (make cluster-kserve); exit 2 without one, 1 when anything of the
InferenceService is left after its delete. Writes
bench/results/kserve-guide/<started>.json (bench/render.py puts it in BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path

import result_files
from kubernetes import client
from peers import host

from kfp_bench import __version__
from kfp_bench.kserve.deploy import delete, deploy
from kfp_bench.kserve.hpa import TOLERANCE, Pod, Sample, resource_replicas
from kfp_bench.kserve.kube import Kube
from kfp_bench.kserve.phases import PHASES, new_pod_start, summary
from kfp_bench.kserve.spec import IsvcSpec, ScaleSpec
from kfp_bench.load.options import LoadOptions

ROOT = Path(__file__).resolve().parents[1]
ENV = ROOT / ".cluster" / "env"
IRIS = '{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}'
TARGET = 50  # % of the CPU request


def hpa_rule(current: int, utilization: float | None, target: int = TARGET, top: int = 5) -> int:
    """The HPA's replica rule (Kubernetes' docs, Horizontal Pod Autoscaling, Algorithm details):
    ceil(current * utilization / target), unchanged within the tolerance, within 1..max."""
    if not current or utilization is None:
        return current
    ratio = utilization / target
    if abs(ratio - 1.0) <= TOLERANCE:
        return current
    return max(1, min(top, math.ceil(current * ratio)))


def millicores(quantity: str) -> int:
    """A CPU quantity as the metrics API writes it (`123456789n`, `12u`, `250m`, `1`) in m."""
    units = {"n": 1e-6, "u": 1e-3, "m": 1.0}
    if quantity and quantity[-1] in units:
        return round(float(quantity[:-1]) * units[quantity[-1]])
    return round(float(quantity) * 1000)


def _epoch(t) -> float | None:
    return t.timestamp() if t is not None else None


def _calc_pod(p) -> Pod:
    """A pod as the replica calculator reads it (its CPU request summed over containers)."""
    ready = next((c for c in p.status.conditions or [] if c.type == "Ready"), None)
    request = sum(
        millicores((c.resources.requests or {}).get("cpu", "0")) for c in p.spec.containers
    )
    return Pod(
        name=p.metadata.name, request=request, phase=p.status.phase or "Pending",
        deleting=p.metadata.deletion_timestamp is not None, start=_epoch(p.status.start_time),
        ready=ready.status if ready else None,
        ready_since=_epoch(ready.last_transition_time) if ready else 0.0,
    )  # fmt: skip


def _window_s(window: str) -> float:
    """A metrics API window (`15.002s`, `1m0s`) in seconds."""
    total, number = 0.0, ""
    for ch in window:
        if ch.isdigit() or ch == ".":
            number += ch
        else:
            total += float(number or 0) * {"h": 3600, "m": 60, "s": 1}[ch]
            number = ""
    return total


class Sampler:
    """Every second: ready pods, the HPA's current and desired replicas and CPU utilization, and
    each pod's CPU as the metrics API last read it (busiest first)."""

    def __init__(self, api, namespace: str, name: str):
        self.core = client.CoreV1Api(api)
        self.hpa = client.AutoscalingV2Api(api)
        self.metrics = client.CustomObjectsApi(api)
        self.namespace, self.name = namespace, name
        self.rows: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        t0 = time.time()
        while not self._stop.wait(1.0 - (time.time() - t0) % 1.0):
            sel = f"serving.kserve.io/inferenceservice={self.name}"
            pods = self.core.list_namespaced_pod(self.namespace, label_selector=sel).items
            ready = sum(
                any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
                for p in pods
                if p.metadata.deletion_timestamp is None
            )
            status = self.hpa.read_namespaced_horizontal_pod_autoscaler(
                f"{self.name}-predictor", self.namespace
            ).status
            samples = {
                m["metadata"]["name"]: Sample(
                    sum(millicores(c["usage"]["cpu"]) for c in m["containers"]),
                    datetime.fromisoformat(m["timestamp"].replace("Z", "+00:00")).timestamp(),
                    _window_s(m["window"]),
                )
                for m in self.metrics.list_namespaced_custom_object(
                    "metrics.k8s.io", "v1beta1", self.namespace, "pods", label_selector=sel
                )["items"]
            }
            cpu = sorted((s.value for s in samples.values()), reverse=True)
            util = None
            for m in status.current_metrics or []:
                if m.resource is not None and m.resource.current.average_utilization is not None:
                    util = m.resource.current.average_utilization
            self.rows.append({"t": round(time.time() - t0), "ready": ready,
                              "current": status.current_replicas,
                              "desired": status.desired_replicas, "utilization": util,
                              "rule": hpa_rule(status.current_replicas or 0, util),
                              "calculator": resource_replicas(
                                  status.current_replicas or 0, TARGET,
                                  [_calc_pod(p) for p in pods], samples, time.time()).replicas,
                              "pod_cpu_m": cpu})  # fmt: skip

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def load(url: str, seconds: int, payload: Path, out: Path, keepalive: bool = True, *,
         concurrency: int = 5, headers: tuple[str, ...] = (), qps: float = 0) -> dict:  # fmt: skip
    """``kfp-bench load`` as the guide runs hey: ``-c`` in flight, each worker at most ``qps``
    requests a second when given (hey's -q)."""
    cmd = [sys.executable, "-m", "kfp_bench.cli", "load", "-z", f"{seconds}s",
           "-c", str(concurrency), *(["-q", f"{qps:g}"] if qps else []),
           "-m", "POST", "-D", str(payload), "-T", "application/json",
           *(a for h in headers for a in ("-H", h)), "--json-out", str(out),
           *([] if keepalive else ["-disable-keepalive"]), url]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
    if r.returncode != 0:
        raise RuntimeError(f"kfp-bench load exited {r.returncode}: {r.stderr.strip()[-300:]}")
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cold-starts", type=int, default=10, help="new pods timed (10)")
    parser.add_argument("--long-s", type=int, default=120, help="the longer load's seconds (120)")
    a = parser.parse_args()
    if a.cold_starts < 1:
        parser.error(f"--cold-starts {a.cold_starts}: give 1 or more new pods to time")
    if a.long_s < 30:
        parser.error(f"--long-s {a.long_s}: give 30 or more (the guide's own load is 30 s)")
    env = dict(line.split("=", 1) for line in ENV.read_text().splitlines()) if ENV.exists() else {}
    if "KSERVE_MODEL_URI" not in env:
        print("kserve_guide: no cluster with KServe; run make cluster-kserve", file=sys.stderr)
        return 2
    started, machine, commit = result_files.now(), host(), result_files.commit()
    kube = Kube(env["KSERVE_NAMESPACE"], kubeconfig=env["KUBECONFIG"])
    bid = f"guide-{uuid.uuid4().hex[:6]}"
    spec = IsvcSpec(
        name="sklearn-iris", namespace=kube.namespace, storage_uri=env["KSERVE_MODEL_URI"],
        deployment_mode="RawDeployment",
        predictor=ScaleSpec(scale_metric="cpu", scale_target=TARGET, min_replicas=1,
                            max_replicas=5, cpu="200m", memory="512Mi"),
    )  # fmt: skip
    loads, cold = {}, []
    done = deploy(kube, spec, benchmark_id=bid, timeout_s=300)
    try:
        svc = client.CoreV1Api(kube.api).read_namespaced_service(
            f"{spec.name}-predictor", kube.namespace
        )
        url = f"http://{svc.spec.cluster_ip}/v1/models/{spec.name}:predict"
        with tempfile.TemporaryDirectory() as tmp:
            payload = Path(tmp) / "input.json"
            payload.write_text(IRIS)
            for label, seconds, keepalive in LOADS(a.long_s):
                print(f"load {label}: {seconds} s, 5 in flight", flush=True)
                with Sampler(kube.api, kube.namespace, spec.name) as sampler:
                    result = load(url, seconds, payload, Path(tmp) / f"{label}.json", keepalive)
                    time.sleep(5)
                loads[label] = {"result": result, "samples": sampler.rows}
                wait_one(kube, spec.name)
        opts = LoadOptions(url=url, method="POST", body=IRIS.encode(),
                           content_type="application/json")  # fmt: skip
        for i in range(a.cold_starts):
            cold.append(new_pod_start(kube, spec.name, opts, timeout_s=300))
            print(f"cold start {i + 1}/{a.cold_starts}: {cold[-1]['phases']}", flush=True)
    finally:
        print(f"delete: {delete(kube, spec.name, benchmark_id=bid, wait_s=180)}")
        left = leftovers(kube, spec.name)
    machine = {**machine, "loadavg_1m_end": round(os.getloadavg()[0], 2)}
    saved = result_files.save(_result(done.ready_s, loads, cold, started, machine, commit))
    print(f"wrote {saved.relative_to(ROOT)}")
    if left:
        print(f"kserve_guide: left behind: {', '.join(left)}", file=sys.stderr)
        return 1
    return 0


def leftovers(kube: Kube, name: str, timeout_s: float = 180) -> list[str]:
    """What of the InferenceService is still there after its delete, once its pods have had
    ``timeout_s`` to end: the object, its pods."""
    deadline = time.monotonic() + timeout_s
    sel = f"serving.kserve.io/inferenceservice={name}"
    while True:
        left = [f"inferenceservice {name}"] if kube.get_isvc(name) is not None else []
        left += [f"pod {p.name}" for p in kube.pods(sel)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(3)


def LOADS(long_s: int) -> tuple[tuple[str, int, bool], ...]:
    """(label, seconds, keep-alive) of each load: the guide's, longer, longer without keep-alive."""
    return (("guide", 30, True), ("long", long_s, True), ("long-new-conn", long_s, False))


def wait_one(kube: Kube, name: str, timeout_s: float = 900) -> None:
    """Until the HPA is back at one pod (its 300 s scale-down window)."""
    deadline = time.monotonic() + timeout_s
    sel = f"serving.kserve.io/inferenceservice={name}"
    while len(kube.pods(sel)) > 1:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: not back at one pod after {timeout_s:g} s")
        time.sleep(5)


def _result(ready_s, loads, cold, started, machine, commit) -> result_files.Result:
    rows = []
    for label, run in loads.items():
        r, samples = run["result"], run["samples"]
        rows.append([
            {"guide": "guide flags, 30 s", "long": f"{r['duration_s']:.0f} s",
             "long-new-conn": f"{r['duration_s']:.0f} s, -disable-keepalive"}[label],
            r["requests"], f"{r['rps']:.0f}", f"{r['success_ratio']:.3f}",
            f"{r['latency_ms']['p50']:.0f} / {r['latency_ms']['p99']:.0f}",
            max(s["ready"] for s in samples), max((s["desired"] or 0) for s in samples),
            max((s["utilization"] or 0) for s in samples),
        ])  # fmt: skip
    over_time = {
        label: [[s["t"], s["ready"], s["current"], s["desired"], s["calculator"],
                 s["utilization"], s["rule"], " / ".join(map(str, s["pod_cpu_m"])) or "-"]
                for s in loads[label]["samples"][::5]]
        for label in ("long", "long-new-conn")
    }  # fmt: skip
    spread = summary(cold)
    phase_rows = [
        [p, spread[p]["n"], spread[p].get("min"), spread[p].get("median"), spread[p].get("max")]
        for p in (*PHASES, "total")
    ]
    return result_files.Result(
        benchmark="kserve-guide",
        title="KServe's autoscaling guide, HPA form, on the real-cluster tier",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={
            "kfp-bench": __version__,
            "kserve": "0.15.2",
            "kubernetes": "v1.34.4",
            "metrics-server": "v0.8.0",
        },  # fmt: skip
        goals=[
            result_files.Goal(
                f"most ready pods, {label}",
                str(max(s["ready"] for s in loads[label]["samples"])),
                "the guide's KPA form: about 5 (concurrency target 1, 5 in flight)",
                None,
            )  # fmt: skip
            for label in ("guide", "long", "long-new-conn")
        ]
        + [
            result_files.Goal(
                "cold start of a new pod to its first answer, median",
                f"{spread['total'].get('median')} s",
                "the guide: about 10 s (its 5 slowest requests)",
                None,
            )  # fmt: skip
        ],
        tables=[
            result_files.Table(
                "sklearn iris (SVC), RawDeployment, HPA on cpu 50% of 200m, 1..5 pods, "
                f"Ready {ready_s:.0f} s after create; `kfp-bench load -c 5 -m POST -D input.json "
                "-T application/json`",
                [
                    "load",
                    "requests",
                    "req/s",
                    "success",
                    "p50 / p99 ms",
                    "ready pods, most",
                    "HPA desired, most",
                    "cpu utilization % (HPA), most",
                ],
                rows,
            ),  # fmt: skip
            *(
                result_files.Table(
                    f"the longer load{what}, every 5 s: the HPA's replicas against what its "
                    "calculator proposes from the same pods and samples (kfp_bench.kserve.hpa) "
                    "and the plain rule ceil(current x utilization / 50), and each pod's CPU "
                    "(metrics API, busiest first)",
                    [
                        "s",
                        "ready",
                        "HPA current",
                        "HPA desired",
                        "calculator",
                        "utilization %",
                        "plain rule",
                        "pods' cpu m",
                    ],
                    over_time[label],
                    detail=True,
                )  # fmt: skip
                for label, what in (
                    ("long", ""),
                    ("long-new-conn", ", a new connection per request"),
                )
            ),
            result_files.Table(
                f"cold start of a new pod, {len(cold)} times (whole seconds: the API's "
                "resolution; model loaded: the pod's first answer, the client's clock)",
                ["phase", "n", "min", "median", "max"],
                phase_rows,
            ),
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
