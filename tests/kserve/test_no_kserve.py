"""The InferenceService steps need the kubernetes client only: each pod installs its packages at
start-up, and the kserve SDK (69 packages) costs about a minute per step, so no module of
kfp_bench.kserve may import it.

A fresh interpreter with ``kserve`` blocked in ``sys.modules`` builds and validates a spec, then
deploys, samples and deletes it against the loopback API of ``fake_kube``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys
    sys.modules["kserve"] = None  # any "import kserve..." now raises ImportError

    from kfp_bench.kserve import coldstart, deploy, kube, spec, watch
    from tests.kserve.fake_kube import NS, READY, FakeKube, Frame, Scenario

    s = spec.IsvcSpec("bench-iris", namespace=NS, predictor=spec.ScaleSpec(cpu="1"))
    body = s.validate().to_dict(benchmark_id="no-sdk-1")
    assert body["spec"]["predictor"]["model"]["resources"]["limits"] == {"cpu": "1"}, body
    fake = FakeKube()
    try:
        sc = fake.play(Scenario(conditions=[READY], frames=[Frame(1, 1, 1, 1)]))
        k = kube.Kube(NS, config_dict=fake.kube_config())
        done = deploy.deploy(k, s, benchmark_id="no-sdk-1", timeout_s=5, poll_s=0.01)
        assert sc.created == [body], sc.created
        sample = watch.ReplicaWatcher(k, s.name).sample()
        assert (sample.ready, sample.desired) == (1, 1), sample
        assert deploy.delete(k, s.name, benchmark_id="no-sdk-1") == "deleted", sc.requests
        assert sc.deleted == [s.name]
    finally:
        fake.close()
    loaded = sorted(m for m in sys.modules if m.split(".")[0] == "kserve" and sys.modules[m])
    assert not loaded, loaded
    print("ok", done.name)
    """
)


def test_kfp_bench_kserve_runs_without_the_kserve_sdk():
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "ok bench-iris"
