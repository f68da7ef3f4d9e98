"""A cold start in phases, from what the cluster recorded of one new pod and its first answer.

A pod goes created → scheduled → image ready → container started → model loaded → ready. Each
moment but one is read from the pod and its events as the API server keeps them (Kubernetes'
core/v1 types): ``metadata.creationTimestamp``; the PodScheduled condition's
``lastTransitionTime``; the kubelet's Pulled event of the serving container (``Successfully
pulled`` or ``already present on machine``, pkg/kubelet/images/image_manager.go); the
container's ``state.running.startedAt``; the ContainersReady condition, the kubelet's readiness
probe passing, from which a Service routes to the pod. Those are whole seconds (RFC 3339 without
a fraction), so each phase is given in whole seconds, never finer.

"Model loaded" is the first success of a request sent to the pod's own address, on the client's
clock: kserve's ModelServer loads its model before it listens, so its first answer is the load
done. It comes before "ready" (the probe's next period after it), or in the same second. The
module never prints.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

from kfp_bench.errors import NotReadyError
from kfp_bench.kserve.coldstart import first_success
from kfp_bench.kserve.kube import Kube, selector
from kfp_bench.load.options import LoadOptions

#: The serving container of a KServe component's pod.
SERVING_CONTAINER = "kserve-container"
#: The phases, in order: each one's duration ends at the moment of its name.
PHASES = ("scheduled", "image_ready", "started", "model_loaded", "ready")


@dataclass(frozen=True, slots=True)
class PodTimeline:
    """When one pod reached each moment, epoch seconds (None: not reached, or not recorded).

    Attributes:
        pod: the pod's name.
        created: metadata.creationTimestamp.
        scheduled: the PodScheduled condition became True.
        image_ready: the serving container's image was pulled, or found present.
        started: the serving container started running.
        ready: the ContainersReady condition became True.
    """

    pod: str
    created: float
    scheduled: float | None
    image_ready: float | None
    started: float | None
    ready: float | None

    def phases(self, loaded: float | None) -> dict[str, int | None]:
        """Seconds of each phase, from the moment before it (created first), and ``total`` from
        created to ready, whole seconds: the API's resolution. ``loaded``: when the pod first
        answered (epoch seconds, the client's clock). A phase whose ends are not both known is
        None; the two phases around ``loaded`` can be -1 where the clocks' seconds differ."""
        moments = [self.created, self.scheduled, self.image_ready, self.started, loaded,
                   self.ready]  # fmt: skip
        out: dict[str, int | None] = {}
        for name, before, after in zip(PHASES, moments[:-1], moments[1:], strict=True):
            out[name] = None if before is None or after is None else round(after - before)
        out["total"] = None if self.ready is None else round(self.ready - self.created)
        return out


def timeline(pod: dict, events: list[dict], container: str = SERVING_CONTAINER) -> PodTimeline:
    """The ``PodTimeline`` of ``pod`` (a core/v1 Pod as JSON, camelCase) and its ``events``
    (core/v1 Events whose involvedObject is that pod)."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    conditions = {c.get("type"): c for c in status.get("conditions") or []}

    def condition(kind: str) -> float | None:
        c = conditions.get(kind) or {}
        return _time(c.get("lastTransitionTime")) if c.get("status") == "True" else None

    started = None
    for c in status.get("containerStatuses") or []:
        if c.get("name") == container:
            started = _time(((c.get("state") or {}).get("running") or {}).get("startedAt"))
    pulled = [
        _time(e.get("firstTimestamp") or e.get("eventTime"))
        for e in events
        if e.get("reason") == "Pulled"
        and (e.get("involvedObject") or {}).get("fieldPath") == f"spec.containers{{{container}}}"
    ]
    pulled = [t for t in pulled if t is not None]
    return PodTimeline(
        pod=meta.get("name", ""),
        created=_time(meta.get("creationTimestamp")) or 0.0,
        scheduled=condition("PodScheduled"),
        image_ready=min(pulled) if pulled else None,
        started=started,
        ready=condition("ContainersReady"),
    )


def new_pod_start(kube: Kube, name: str, opts: LoadOptions, *, component: str = "predictor",
                  timeout_s: float = 600.0, poll_s: float = 0.5) -> dict:  # fmt: skip
    """One cold start of a new pod: delete ``name``'s ``component`` pods, let their Deployment
    (RawDeployment) make another, send ``opts``' request to that pod's own address until it
    succeeds, wait for it to be Ready, and return ``{"pod", "attempts", "phases"}``
    (``PodTimeline.phases``).

    The request goes to the new pod, not to the Service: a Service still routes to the old
    pod while it terminates, and routes to the new one only once it is Ready."""
    sel = selector(name, component)
    old = {p["metadata"]["name"] for p in kube.pod_docs(sel)}
    for pod in sorted(old):
        kube.delete_pod(pod)
    deadline = time.monotonic() + timeout_s
    while True:
        new = [p for p in kube.pod_docs(sel) if p["metadata"]["name"] not in old]
        addressed = [p for p in new if (p.get("status") or {}).get("podIP")]
        if addressed:
            pod = min(addressed, key=lambda p: p["metadata"]["creationTimestamp"])
            break
        if time.monotonic() > deadline:
            raise NotReadyError(
                f"InferenceService {name}: no new {component} pod with an address within "
                f"{timeout_s:g}s of deleting {', '.join(sorted(old)) or 'none'}"
            )
        time.sleep(poll_s)
    left = max(1.0, deadline - time.monotonic())
    _, attempts, _ = first_success(replace(opts, url=_at_pod(opts.url, pod)), timeout_s=left)
    loaded = time.time()
    pod_name = pod["metadata"]["name"]
    while True:  # the pod again, until the kubelet counts it Ready
        pod = next((p for p in kube.pod_docs(sel) if p["metadata"]["name"] == pod_name), pod)
        line = timeline(pod, kube.pod_events(pod_name))
        if line.ready is not None:
            return {"pod": pod_name, "attempts": attempts, "phases": line.phases(loaded)}
        if time.monotonic() > deadline:
            raise NotReadyError(
                f"InferenceService {name}: pod {pod_name} answered but was not Ready within "
                f"{timeout_s:g}s; check its readiness probe"
            )
        time.sleep(poll_s)


def summary(starts: list[dict]) -> dict:
    """The distribution of each phase over repeated starts: n, min, median, max (seconds)."""
    out = {}
    for phase in (*PHASES, "total"):
        seen = [s["phases"][phase] for s in starts if s["phases"].get(phase) is not None]
        out[phase] = (
            {"n": len(seen), "min": min(seen), "median": statistics.median(seen), "max": max(seen)}
            if seen
            else {"n": 0}
        )
    return out


def _at_pod(url: str, pod: dict) -> str:
    """``url`` sent to ``pod``'s own address, at its serving container's port (8080, KServe's
    runtimes' --http_port, when the container names none)."""
    port = 8080
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == SERVING_CONTAINER and c.get("ports"):
            port = c["ports"][0].get("containerPort", port)
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=f"{pod['status']['podIP']}:{port}"))


def _time(value: str | None) -> float | None:
    """An RFC 3339 time of the API (``2026-12-06T06:30:00Z``, a MicroTime with a fraction) as
    epoch seconds."""
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
