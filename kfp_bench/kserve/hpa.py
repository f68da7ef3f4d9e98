"""What Kubernetes' HPA proposes for a CPU or memory utilization target, from the pods and the
metrics API as it reads them: a port of the replica calculator of Kubernetes v1.34.4
(`pkg/controller/podautoscaler/replica_calculator.go`, GetResourceReplicas :80-165 and groupPods
:409-455; `pkg/controller/podautoscaler/metrics/utilization.go`, GetResourceUtilizationRatio
:26-52), with kube-controller-manager's defaults (`pkg/controller/podautoscaler/config/v1alpha1/
defaults.go` :46-53: a 5 min CPU initialization period, a 30 s initial readiness delay, a 0.1
tolerance).

The plain rule ceil(current x utilization / target) is what the HPA does only when every pod is
ready and measured. Pods that are Pending, not Ready, or within their first five minutes with a
sample taken less than one metrics window after they turned Ready are set aside on the way up
(counted at 0%), and pods without a sample are counted at 0% on the way up and at 100% on the way
down; a proposal that would reverse the direction keeps the current count. The result is the
calculator's proposal, before the HPA's min/max and its behavior (stabilization windows and rate
policies) are applied. The module never prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: kube-controller-manager's --horizontal-pod-autoscaler-* defaults (defaults.go :46-53).
CPU_INITIALIZATION_S = 300.0
INITIAL_READINESS_DELAY_S = 30.0
TOLERANCE = 0.1


@dataclass(frozen=True, slots=True)
class Pod:
    """One pod as the calculator reads it (times in epoch seconds).

    Attributes:
        name: the pod's name, which joins it to its sample.
        request: the resource's request summed over the containers (millicores, bytes).
        phase: Pending, Running, Succeeded or Failed.
        deleting: a deletionTimestamp is set.
        start: status.startTime, None before the kubelet sets it.
        ready: the Ready condition's status ("True", "False"), None without the condition.
        ready_since: the Ready condition's lastTransitionTime.
    """

    name: str
    request: int
    phase: str = "Running"
    deleting: bool = False
    start: float | None = 0.0
    ready: str | None = "True"
    ready_since: float = 0.0


@dataclass(frozen=True, slots=True)
class Sample:
    """The metrics API's reading of one pod: its usage summed over containers, when, over what
    window (PodMetrics' timestamp and window)."""

    value: int
    timestamp: float = 0.0
    window_s: float = 60.0


@dataclass(frozen=True, slots=True)
class Proposal:
    """The calculator's answer: replicas, and the utilization (%) of the pods it counted; None
    replicas when it has no usable sample (the HPA then keeps its scale and reports an error)."""

    replicas: int | None
    utilization: int | None
    ready: int = 0
    unready: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()


def group_pods(
    pods: list[Pod],
    samples: dict[str, Sample],
    cpu: bool,
    now: float,
    cpu_initialization_s: float = CPU_INITIALIZATION_S,
    readiness_delay_s: float = INITIAL_READINESS_DELAY_S,
) -> tuple[int, set[str], set[str], set[str]]:
    """groupPods (:409-455): ready count, and the unready, missing and ignored pods' names."""
    ready, unready, missing, ignored = 0, set(), set(), set()
    for pod in pods:
        if pod.deleting or pod.phase == "Failed":
            ignored.add(pod.name)
            continue
        if pod.phase == "Pending":
            unready.add(pod.name)
            continue
        sample = samples.get(pod.name)
        if sample is None:
            missing.add(pod.name)
            continue
        if cpu:
            if pod.ready is None or pod.start is None:
                is_unready = True
            elif pod.start + cpu_initialization_s > now:
                is_unready = pod.ready == "False" or (
                    sample.timestamp < pod.ready_since + sample.window_s
                )
            else:
                is_unready = pod.ready == "False" and (
                    pod.start + readiness_delay_s > pod.ready_since
                )
            if is_unready:
                unready.add(pod.name)
                continue
        ready += 1
    return ready, unready, missing, ignored


def _ratio(values: dict[str, int], requests: dict[str, int], target: int) -> tuple[float, int]:
    """GetResourceUtilizationRatio (utilization.go :26-52): the ratio to the target and the
    utilization in whole percent, as the integer division there gives it."""
    used = sum(v for name, v in values.items() if name in requests)
    asked = sum(requests[name] for name in values if name in requests)
    if asked == 0:
        raise ValueError("no metrics returned matched known pods")
    utilization = (used * 100) // asked
    return utilization / target, utilization


def resource_replicas(
    current: int,
    target: int,
    pods: list[Pod],
    samples: dict[str, Sample],
    now: float,
    cpu: bool = True,
    tolerance: float = TOLERANCE,
    cpu_initialization_s: float = CPU_INITIALIZATION_S,
    readiness_delay_s: float = INITIAL_READINESS_DELAY_S,
) -> Proposal:
    """GetResourceReplicas (:80-165) for a utilization ``target`` (%): the replicas it proposes."""
    ready, unready, missing, ignored = group_pods(
        pods, samples, cpu, now, cpu_initialization_s, readiness_delay_s
    )
    values = {n: s.value for n, s in samples.items() if n not in ignored and n not in unready}
    names = (tuple(sorted(unready)), tuple(sorted(missing)), tuple(sorted(ignored)))
    if not values:
        return Proposal(None, None, ready, *names)
    requests = {p.name: p.request for p in pods}
    ratio, utilization = _ratio(values, requests, target)

    def answer(replicas: int) -> Proposal:
        return Proposal(replicas, utilization, ready, *names)

    within = lambda r: 1.0 - tolerance <= r <= 1.0 + tolerance  # noqa: E731
    up_with_unready = bool(unready) and ratio > 1.0
    if not up_with_unready and not missing:
        if within(ratio):
            return answer(current)
        return answer(math.ceil(ratio * ready))
    if missing:
        if ratio < 1.0:
            fallback = max(100, target)
            for name in missing:
                values[name] = requests[name] * fallback // 100
        elif ratio > 1.0:
            for name in missing:
                values[name] = 0
    if up_with_unready:
        for name in unready:
            values[name] = 0
    new_ratio, _ = _ratio(values, requests, target)
    if within(new_ratio) or (ratio < 1.0 < new_ratio) or (new_ratio < 1.0 < ratio):
        return answer(current)
    replicas = math.ceil(new_ratio * len(values))
    if (new_ratio < 1.0 and replicas > current) or (new_ratio > 1.0 and replicas < current):
        return answer(current)
    return answer(replicas)
