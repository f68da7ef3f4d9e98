"""The meta-pipeline with kfp.local, its replica watcher refused by the Kubernetes API (a 403 on
podautoscalers an hour into the load): the report is still published, flagged step-failed, and
the run then fails in check_outcome, after which the exit handler deletes the InferenceService.

No Kubernetes API can run here: deploy_isvc, watch_replicas and cleanup talk to ``fake_kube``'s
loopback server (the one mock of the kserve tests) through the real kubernetes client, pointed at
it by $KUBECONFIG, which kfp.local's SubprocessRunner passes on to each step.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.kserve.fake_kube import NS, READY, Frame, Scenario
from tests.venv_image import pipeline

pytestmark = pytest.mark.slow


@pytest.fixture
def fake(fake_cluster):
    return fake_cluster


def test_a_refused_replica_watcher_still_gives_a_flagged_report(
    local_root, fake, fault_server, capfd
):
    frames = [Frame(1, 1, 1, 1)]
    s = fake.play(Scenario([READY], frames, pa_forbidden_after=2, address=fault_server.url))
    with pytest.raises(RuntimeError, match=r"Inner task failed: \S*'check-outcome'"):
        pipeline()(
            run_benchmark=False,
            load_workers=1,
            concurrency=1,
            isvc={"name": "bench-iris", "namespace": NS},
            duration_sec=1.0,
            benchmark_id="partial-403",
        )
    out = re.sub(r"\x1b\[[0-9;]*m", "", capfd.readouterr().out)
    assert "watch_replicas failed to measure: KubeError: " in out
    assert "the benchmark is flagged step-failed" in out
    assert "benchmark ended FAILED" in out and s.deleted == ["bench-iris"]  # the exit handler
    (md,) = [p for p in Path(local_root).rglob("summary") if p.parent.name == "report"]
    text = md.read_text()
    assert "**FAILED**" in text and "step-failed: a helper step failed to measure" in text
    assert "watch_replicas: KubeError: list podautoscalers" in text and "HTTP 403" in text
    doc = json.loads((md.parent / "executor_output.json").read_text())
    (metrics,) = doc["artifacts"]["metrics"]["artifacts"]  # the Metrics output, as published
    assert metrics["metadata"]["failures"] == 1 and metrics["metadata"]["flag_step_failed"] == 1
