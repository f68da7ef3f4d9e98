"""The replica watcher: ready and total pods, and the autoscaler's scales, over time.

``ReplicaWatcher`` samples one InferenceService component through ``kube.Kube`` (its pods, and
Knative's PodAutoscaler, the HPA, or KEDA's ScaledObject and its HPA), in a thread beside a
load or for a fixed time. ``replica_rows`` joins the samples with the load's per-second series
into summary.json's ``replicas`` rows: ``expected`` is Knative's ceil(inflight / (target x
utilization)), ``apart`` where the pods part from it by more than one, ``panic`` where the
desired scale at least doubled by 2 pods or more (Knative's 6 s panic window overtaking its 60 s
stable one). It never prints."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from kfp_bench.kserve.kube import Kube, ScaledObjectState, ScaleState, selector

#: Knative's defaults (config-autoscaler): container-concurrency-target-percentage 70%.
UTILIZATION = 0.7
#: The autoscalers the watcher reads: Knative's (KPA), Kubernetes' HPA, KEDA's ScaledObject and
#: its HPA, or none.
KPA, HPA, KEDA, NONE = "kpa", "hpa", "keda", ""
#: config-autoscaler's container-concurrency-target-default and requests-per-second-target-default
CONCURRENCY_TARGET_DEFAULT, RPS_TARGET_DEFAULT = 100.0, 200.0


@dataclass(frozen=True, slots=True)
class ReplicaSample:
    """The replicas of one component at one moment.

    Attributes:
        t: when, epoch seconds.
        ready: pods whose Ready condition is True.
        total: pods neither terminating nor finished.
        desired: the PodAutoscalers' desiredScale (or the HPA's desiredReplicas) summed; None
            before the autoscaler decides, or when none is read.
        actual: their actualScale (the HPA's currentReplicas) summed; None likewise.
    """

    t: float
    ready: int
    total: int
    desired: int | None = None
    actual: int | None = None


class ReplicaWatcher:
    """Samples the replicas of ``name``'s ``component`` every ``interval_s`` seconds.

    Args:
        kube: the cluster interface.
        name: the InferenceService.
        component: predictor or transformer.
        autoscaler: which autoscaler to read: KPA (Knative's PodAutoscalers, Serverless
            mode), HPA (the HorizontalPodAutoscaler, Standard/RawDeployment mode), KEDA (the
            ScaledObjects and the HPA each drives, RawDeployment with autoscalerClass keda) or
            NONE.
        interval_s: seconds between samples.

    Attributes:
        scaled_objects: with KEDA, the ScaledObjects as the latest sample read them (their
            triggers' targets, their bounds, the HPA each drives).
    """

    def __init__(self, kube: Kube, name: str, component: str = "predictor", *,
                 autoscaler: str = KPA, interval_s: float = 1.0):  # fmt: skip
        if autoscaler not in (KPA, HPA, KEDA, NONE):
            raise ValueError(f"autoscaler {autoscaler!r}: use kpa, hpa, keda or none")
        self.kube = kube
        self.selector = selector(name, component)
        self.autoscaler = autoscaler
        self.interval_s = interval_s
        self.samples: list[ReplicaSample] = []
        self.scaled_objects: list[ScaledObjectState] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: Exception | None = None

    def sample(self) -> ReplicaSample:
        t = time.time()
        pods = self.kube.pods(self.selector)
        desired = actual = None
        if self.autoscaler:
            pas = self._scales()
            if any(p.desired is not None for p in pas):
                desired = sum(p.desired or 0 for p in pas)
            if any(p.actual is not None for p in pas):
                actual = sum(p.actual or 0 for p in pas)
        ready = sum(p.ready for p in pods)
        return ReplicaSample(t, ready, sum(p.live for p in pods), desired, actual)

    def _scales(self) -> list[ScaleState]:
        """The autoscaler's scales now: the PodAutoscalers', the HPAs', or with KEDA those of
        the HPA each ScaledObject drives (one not made yet counts as none)."""
        if self.autoscaler == HPA:
            return self.kube.hpas(self.selector)
        if self.autoscaler == KPA:
            return self.kube.podautoscalers(self.selector)
        self.scaled_objects = self.kube.scaled_objects(self.selector)
        found = (self.kube.hpa(so.hpa) for so in self.scaled_objects)
        return [h for h in found if h is not None]

    def watch(self, duration_s: float) -> list[ReplicaSample]:
        """Sample for ``duration_s`` seconds (or until ``stop``); return every sample."""
        end = time.monotonic() + duration_s
        next_at = time.monotonic()
        while not self._stop.is_set() and time.monotonic() < end:
            self.samples.append(self.sample())
            next_at += self.interval_s  # paced from the start, not after each sample
            self._stop.wait(max(0.0, next_at - time.monotonic()))
        return list(self.samples)

    def start(self, duration_s: float = math.inf) -> ReplicaWatcher:
        """Watch in a background thread; an API error stops it and is kept in ``error``."""

        def run():
            try:
                self.watch(duration_s)
            except Exception as exc:  # reported by stop(), never lost in the thread
                self.error = exc

        self._thread = threading.Thread(target=run, name="replica-watcher", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> list[ReplicaSample]:
        """Stop the background thread; return the samples. Re-raises its API error."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.error is not None:
            raise self.error
        return list(self.samples)

    def max_ready(self, t0: float, t1: float) -> int | None:
        """The most ready pods sampled between ``t0`` and ``t1`` (epoch seconds)."""
        seen = [s.ready for s in list(self.samples) if t0 <= s.t <= t1 + self.interval_s]
        return max(seen) if seen else None


def watcher_doc(samples: Iterable[ReplicaSample], *, target: float, knative: bool,
                utilization: float = UTILIZATION, **about) -> dict:  # fmt: skip
    """The watcher's saved result: its samples and the autoscaler settings to judge them by;
    ``about``: more keys to save (the deployment mode and where it was learnt)."""
    return {
        "samples": [asdict(s) for s in samples],
        "target": target,
        "utilization": utilization,
        "knative": knative,
        **about,
    }


def sweep_max_replicas(rows: list[dict], doc: dict) -> list[dict]:
    """Fill ``max_replicas`` of sweep rows from a ``watcher_doc`` whose samples fall in each step's
    window (in a pipeline the sweep and the watcher run in separate pods and meet only here)."""
    samples = doc.get("samples") or []
    out = []
    for row in rows:
        row = dict(row)
        t0 = row.get("started_at")
        if row.get("max_replicas") is None and t0 is not None:
            t1 = t0 + (row.get("duration_s") or 0.0)
            seen = [s["ready"] for s in samples if t0 <= s["t"] <= t1]
            if seen:
                row["max_replicas"] = max(seen)
        out.append(row)
    return out


def knative_target(
    scale_metric: str, scale_target: float = 0, container_concurrency: int = 0
) -> float:
    """The per-pod target Knative's autoscaler resolves for a revision, before utilization, at
    config-autoscaler's defaults: ResolveMetricTarget, knative.dev/serving v0.43.3
    pkg/reconciler/autoscaling/resources/target.go:31-63 (defaults pkg/autoscaler/config/
    config.go:45-49). rps: the target given, else 200; concurrency: containerConcurrency, else
    100, and a target given replaces it, no higher than containerConcurrency. KServe writes the
    target annotation only for a scaleTarget given (pkg/controller/v1alpha1/utils/utils.go:61)."""
    if scale_metric == "rps":
        return float(scale_target or RPS_TARGET_DEFAULT)
    total = float(container_concurrency or CONCURRENCY_TARGET_DEFAULT)
    if scale_target:
        total = float(scale_target)
        if container_concurrency:
            total = min(total, float(container_concurrency))
    return total


def expected_replicas(concurrency: float, target: float, utilization: float = UTILIZATION) -> int:
    """Knative's pods for an observed concurrency: ceil(concurrency / (target x utilization))."""
    return math.ceil(round(concurrency / (target * utilization), 9))


def replica_rows(doc: dict, series: list[dict]) -> dict:
    """summary.json's ``replicas`` rows and ``replicas_summary`` from a ``watcher_doc`` and the
    load's per-second series rows (``t``, requests, inflight, p50_ms, p99_ms)."""
    by_sec = {int(r["t"]): r for r in series}
    target, util = doc.get("target") or 0, doc.get("utilization") or UTILIZATION
    rows, prev_desired = [], None
    for s in doc.get("samples", []):
        row = {k: s.get(k) for k in ("t", "ready", "total", "desired", "actual")}
        load = by_sec.get(int(s["t"]))
        if load is not None:
            row.update(
                inflight=load.get("inflight"),
                rps=load.get("requests"),
                p50_ms=load.get("p50_ms"),
                p99_ms=load.get("p99_ms"),
            )
            if target and load.get("inflight") is not None:
                row["expected"] = expected_replicas(load["inflight"], target, util)
                row["apart"] = abs(row["expected"] - s["ready"]) > 1
        desired = s.get("desired")
        row["panic"] = bool(
            desired is not None
            and prev_desired is not None
            and desired >= 2 * max(prev_desired, 1)
            and desired - prev_desired >= 2
        )
        prev_desired = desired if desired is not None else prev_desired
        rows.append(row)
    summary = {
        "max_ready": max((r["ready"] for r in rows), default=0),
        "panic_moments": [r["t"] for r in rows if r["panic"]],
        "apart_seconds": sum(1 for r in rows if r.get("apart")),
        "target": target,
        "utilization": util,
    }
    return {"replicas": rows, "replicas_summary": summary}
