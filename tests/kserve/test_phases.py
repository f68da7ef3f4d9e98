"""A cold start's phases read from a pod and its events as a real cluster recorded them
(tests/kserve/data/coldstart_pod.json: KServe v0.15.2's RawDeployment predictor, made by
`make cluster-kserve`), and what is missing while a pod is still starting."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path

from kfp_bench.kserve.phases import PHASES, summary, timeline

RECORDED = json.loads((Path(__file__).parent / "data" / "coldstart_pod.json").read_text())


def at(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def test_the_moments_of_the_recorded_pod():
    line = timeline(RECORDED["pod"], RECORDED["events"])
    assert line.pod == "iris-rec-predictor-764ff8d9cf-6zk8f"
    assert line.created == at("2026-12-06T07:05:34+00:00")
    assert line.scheduled == at("2026-12-06T07:05:34+00:00")
    # the serving container's Pulled event ("already present on machine")
    assert line.image_ready == at("2026-12-06T07:05:35+00:00")
    assert line.started == at("2026-12-06T07:05:35+00:00")
    assert line.ready == at("2026-12-06T07:05:46+00:00")


def test_phases_in_whole_seconds_with_the_clients_moment_between():
    line = timeline(RECORDED["pod"], RECORDED["events"])
    phases = line.phases(loaded=at("2026-12-06T07:05:45.600+00:00"))
    assert list(phases) == [*PHASES, "total"]
    assert phases == {"scheduled": 0, "image_ready": 1, "started": 0, "model_loaded": 11,
                      "ready": 0, "total": 12}  # fmt: skip


def test_a_pod_not_ready_yet_has_no_ready_phase_nor_total():
    pod = copy.deepcopy(RECORDED["pod"])
    for c in pod["status"]["conditions"]:
        if c["type"] in ("Ready", "ContainersReady"):
            c["status"] = "False"
    phases = timeline(pod, RECORDED["events"]).phases(loaded=None)
    assert phases["ready"] is None and phases["model_loaded"] is None
    assert phases["total"] is None
    assert phases["started"] == 0


def test_another_containers_pull_is_not_the_serving_images():
    events = copy.deepcopy(RECORDED["events"])
    for e in events:
        if e["reason"] == "Pulled":
            e["involvedObject"]["fieldPath"] = "spec.initContainers{storage-initializer}"
    assert timeline(RECORDED["pod"], events).image_ready is None


def test_summary_of_repeated_starts():
    starts = [{"phases": {"scheduled": s, "model_loaded": m, "total": t}} for s, m, t in
              [(0, 4, 6), (1, 6, 9), (0, 5, 7)]]  # fmt: skip
    out = summary(starts)
    assert out["model_loaded"] == {"n": 3, "min": 4, "median": 5, "max": 6}
    assert out["total"] == {"n": 3, "min": 6, "median": 7, "max": 9}
    assert out["ready"] == {"n": 0}
