"""kfp_bench.kserve.hpa against Kubernetes v1.34.4's own tests of the replica calculator,
ported case by case from `pkg/controller/podautoscaler/replica_calculator_test.go` (the
TestReplicaCalc* CPU cases and TestGroupPods, names kept).

The harness there (prepareTestClientSet :113-175, runTest :343-380): each pod has two containers,
each asking `requests[i]` and using `levels[i]` (so a pod asks and uses twice that); pods without
a level have no sample; a pod is Running and Ready unless told; its start time and its Ready
condition's lastTransitionTime are the zero time unless told ("hot": now, "cool": 3 min ago,
horizontal_test.go :809-815); samples carry the zero timestamp and a 1 min window; the calculator
runs with a 2 min CPU initialization period, a 10 s readiness delay and a 0.1 tolerance
(replica_calculator.go :41-43).
"""

from __future__ import annotations

import pytest

from kfp_bench.kserve.hpa import Pod, Sample, group_pods, resource_replicas

NOW = 1_000_000.0
HOT, COOL = NOW, NOW - 180.0
T, F = "True", "False"
INIT, DELAY = 120.0, 10.0


def _case(current, target, requests, levels, readiness=None, start=None, phase=None,
          deleting=None):  # fmt: skip
    count = max(current, len(phase or ()))
    pods, samples = [], {}
    for i in range(count):
        name = f"test-pod-{i}"
        pods.append(Pod(
            name=name,
            request=2 * requests[i] if i < len(requests) else 0,
            phase=phase[i] if phase else "Running",
            deleting=bool(deleting and deleting[i]),
            start=start[i] if start else 0.0,
            ready=readiness[i] if readiness and i < len(readiness) else T,
            ready_since=0.0,
        ))  # fmt: skip
    for i, level in enumerate(levels):
        samples[f"test-pod-{i}"] = Sample(2 * level, timestamp=0.0, window_s=60.0)
    return resource_replicas(current, target, pods, samples, NOW,
                             cpu_initialization_s=INIT, readiness_delay_s=DELAY)  # fmt: skip


CASES = {
    # name: (current, expected, expected utilization, target, requests m, levels m, extras)
    "ScaleUp": (3, 5, 50, 30, [1000] * 3, [300, 500, 700], {}),
    "ScaleUpUnreadyLessScale": (3, 4, 60, 30, [1000] * 3, [300, 500, 700],
                                {"readiness": [F, T, T]}),
    "ScaleUpHotCpuLessScale": (3, 4, 60, 30, [1000] * 3, [300, 500, 700],
                               {"start": [HOT, COOL, COOL]}),
    "ScaleUpUnreadyNoScale": (3, 3, 40, 30, [1000] * 3, [400, 500, 700],
                              {"readiness": [T, F, F]}),
    "ScaleHotCpuNoScale": (3, 3, 40, 30, [1000] * 3, [400, 500, 700],
                           {"readiness": [T, F, F], "start": [COOL, HOT, HOT]}),
    "ScaleUpIgnoresFailedPods": (2, 4, 60, 30, [1000] * 4, [500, 700],
                                 {"readiness": [T, T, F, F],
                                  "phase": ["Running", "Running", "Failed", "Failed"]}),
    "ScaleUpIgnoresDeletionPods": (2, 4, 60, 30, [1000] * 4, [500, 700],
                                   {"readiness": [T, T, F, F], "phase": ["Running"] * 4,
                                    "deleting": [False, False, True, True]}),
    "ScaleDown": (5, 3, 28, 50, [1000] * 5, [100, 300, 500, 250, 250], {}),
    "ScaleDownExcludeUnreadyPods": (5, 2, 30, 50, [1000] * 5, [100, 300, 500, 250, 250],
                                    {"readiness": [T, T, T, F, F]}),
    "ScaleDownExcludeUnscheduledPods": (5, 1, 10, 50, [1000] * 5, [100],
                                        {"readiness": [T, F, F, F, F],
                                         "phase": ["Running"] + ["Pending"] * 4}),
    "ScaleDownIgnoreHotCpuPods": (5, 2, 30, 50, [1000] * 5, [100, 300, 500, 250, 250],
                                  {"start": [COOL, COOL, COOL, HOT, HOT]}),
    "ScaleDownIgnoresDeletionPods": (5, 3, 28, 50, [1000] * 7, [100, 300, 500, 250, 250],
                                     {"readiness": [T] * 5 + [F, F], "phase": ["Running"] * 7,
                                      "deleting": [False] * 5 + [True, True]}),
    "Tolerance": (3, 3, 102, 100, [900, 1000, 1100], [1010, 1030, 1020], {}),
    "SuperfluousMetrics": (4, 24, 587, 100, [1000] * 4, [4000, 9500, 3000, 7000, 3200, 2000],
                           {}),
    "MissingMetrics": (4, 3, 24, 100, [1000] * 4, [400, 95], {}),
    "MissingMetricsNoChangeEq": (2, 2, 100, 100, [1000] * 2, [1000], {}),
    "MissingMetricsNoChangeGt": (2, 2, 190, 100, [1000] * 2, [1900], {}),
    "MissingMetricsNoChangeLt": (2, 2, 60, 100, [1000] * 2, [600], {}),
    "MissingMetricsUnreadyChange": (3, 3, 45, 50, [1000] * 3, [100, 450],
                                    {"readiness": [F, T, T]}),
    "MissingMetricsHotCpuNoChange": (3, 3, 45, 50, [1000] * 3, [100, 450],
                                     {"start": [HOT, COOL, COOL]}),
    "MissingMetricsUnreadyScaleUp": (3, 4, 200, 50, [1000] * 3, [100, 2000],
                                     {"readiness": [F, T, T]}),
    "MissingMetricsHotCpuScaleUp": (3, 4, 200, 50, [1000] * 3, [100, 2000],
                                    {"readiness": [F, T, T], "start": [HOT, COOL, COOL]}),
}  # fmt: skip


@pytest.mark.parametrize("name", CASES)
def test_replica_calc(name):
    current, expected, utilization, target, requests, levels, extra = CASES[name]
    got = _case(current, target, requests, levels, **extra)
    assert (got.replicas, got.utilization) == (expected, utilization)


def _pod(name, phase="Succeeded", start=None, ready=None, since=0.0, deleting=False):
    return Pod(name, 1000, phase=phase, deleting=deleting, start=start, ready=ready,
               ready_since=since)  # fmt: skip


M = 60.0
GROUPS = {
    # name: (pods, samples, cpu, (ready count, unready, missing, ignored))
    "void": ([], {}, True, (0, set(), set(), set())),
    "count in a ready pod - memory": (
        [_pod("bentham")], {"bentham": Sample(1, NOW, M)}, False, (1, set(), set(), set())),
    "unready a pod without ready condition - CPU": (
        [_pod("lucretius", start=NOW)], {"lucretius": Sample(1, 0.0, 0.0)}, True,
        (0, {"lucretius"}, set(), set())),
    "count in a ready pod with fresh metrics during initialization period - CPU": (
        [_pod("bentham", start=NOW - M, ready=T, since=NOW - 30)],
        {"bentham": Sample(1, NOW, 30.0)}, True, (1, set(), set(), set())),
    "unready a ready pod without fresh metrics during initialization period - CPU": (
        [_pod("bentham", start=NOW - M, ready=T, since=NOW - 30)],
        {"bentham": Sample(1, NOW, 60.0)}, True, (0, {"bentham"}, set(), set())),
    "unready an unready pod during initialization period - CPU": (
        [_pod("lucretius", start=NOW - 10 * M, ready=F, since=NOW - 9 * M - 54)],
        {"lucretius": Sample(1, 0.0, 0.0)}, True, (0, {"lucretius"}, set(), set())),
    "count in a ready pod without fresh metrics after initialization period - CPU": (
        [_pod("bentham", start=NOW - 3 * M, ready=T, since=NOW - 3 * M)],
        {"bentham": Sample(1, NOW - 2 * M, M)}, True, (1, set(), set(), set())),
    "count in an unready pod that was ready after initialization period - CPU": (
        [_pod("lucretius", start=NOW - 10 * M, ready=F, since=NOW - 9 * M)],
        {"lucretius": Sample(1, 0.0, 0.0)}, True, (1, set(), set(), set())),
    "unready pod that has never been ready after initialization period - CPU": (
        [_pod("lucretius", start=NOW - 10 * M, ready=F, since=NOW - 9 * M - 50)],
        {"lucretius": Sample(1, 0.0, 0.0)}, True, (1, set(), set(), set())),
    "a missing pod": (
        [_pod("epicurus", start=NOW - 3 * M)], {}, True, (0, set(), {"epicurus"}, set())),
    "several pods": (
        [_pod("lucretius", start=NOW),
         _pod("niccolo", start=NOW - 3 * M, ready=T, since=NOW - 3 * M),
         _pod("epicurus", start=NOW - 3 * M)],
        {"lucretius": Sample(1, 0.0, 0.0), "niccolo": Sample(1, 0.0, 0.0)}, True,
        (1, {"lucretius"}, {"epicurus"}, set())),
    "pending pods are unreadied": (
        [_pod("unscheduled", phase="Pending")], {}, True, (0, {"unscheduled"}, set(), set())),
    "ignore pods with deletion timestamps": (
        [_pod("deleted", phase="Pending", deleting=True)], {"deleted": Sample(1, 0.0, 0.0)},
        True, (0, set(), set(), {"deleted"})),
    "ignore pods in a failed state": (
        [_pod("failed", phase="Failed")], {"failed": Sample(1, 0.0, 0.0)}, True,
        (0, set(), set(), {"failed"})),
}  # fmt: skip


@pytest.mark.parametrize("name", GROUPS)
def test_group_pods(name):
    pods, samples, cpu, expected = GROUPS[name]
    assert group_pods(pods, samples, cpu, NOW, INIT, DELAY) == expected


def test_no_usable_sample_proposes_nothing():
    """Every pod unready: the calculator has no metrics to go on (:96-98)."""
    pods = [Pod("a", 1000, ready=F, start=NOW - 10)]
    got = resource_replicas(1, 50, pods, {"a": Sample(900, NOW, 15.0)}, NOW)
    assert got.replicas is None and got.unready == ("a",)


def test_the_run_that_stayed_at_two_pods():
    """A pod started 40 s ago, Ready for 20 s, measured over a 15 s window that began before it
    turned Ready, beside a pod at its whole request: the new pod is set aside and counted at 0%,
    so at a 50% target the HPA stays at two, where the plain rule says four."""
    pods = [Pod("old", 200, start=NOW - 900, ready_since=NOW - 890),
            Pod("new", 200, start=NOW - 40, ready_since=NOW - 20)]  # fmt: skip
    samples = {"old": Sample(200, NOW - 2, 15.0), "new": Sample(3, NOW - 8, 15.0)}
    got = resource_replicas(2, 50, pods, samples, NOW)
    assert (got.replicas, got.utilization, got.unready) == (2, 100, ("new",))
