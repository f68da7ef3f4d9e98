"""Partial results over no results (issue 17): a helper step that fails to measure saves what it
had and its error and succeeds; aggregate flags what is missing; the report and its metrics show
the flags; check_outcome fails the run after the report is written.

The steps' functions are called directly (kfp_bench.steps's step modules), as a component's
one call into them.
The Kubernetes API is ``fake_kube``'s loopback server, the one mock of the kserve tests (no
Kubernetes API can run here); the kubernetes client that talks to it is real.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kfp_bench.errors import BenchError
from kfp_bench.report.bundle import write_bundle
from kfp_bench.results import read_results
from kfp_bench.stats import store
from kfp_bench.stats.load import LoadStats
from kfp_bench.steps import outcome, predict, publish, serving
from kfp_bench.steps.params import BenchParams
from tests.kserve.fake_kube import NS, Frame, Scenario

ISVC = {"name": "bench-iris", "namespace": NS}


@pytest.fixture
def fake(fake_cluster):
    return fake_cluster


def _params(**over) -> BenchParams:
    base = dict(run_benchmark=False, run_load=True, load_workers=2, duration_sec=1.0)
    return BenchParams(**{**base, **over})


def _skipped(path: Path) -> str:
    path.write_text(json.dumps({"skipped": True}))
    return str(path)


def _worker(path: Path, requests: int = 10) -> str:
    stats = LoadStats(started_at=1_790_000_000.0)
    stats.requests = stats.ok = requests
    stats.status_codes[200] = requests
    stats.close(1.0)
    store.save(stats, path)
    return str(path)


def _aggregate(tmp_path, p, loads, replicas=None) -> dict:
    runs = tmp_path / "runs"
    runs.mkdir(exist_ok=True)
    out = tmp_path / "results"
    replicas = replicas or _skipped(tmp_path / "replicas.json")
    publish.aggregate(p, str(runs), loads, _skipped(tmp_path / "sweep.json"), replicas, str(out))
    return read_results(out).summary


def test_a_403_on_podautoscalers_keeps_the_samples_and_the_error(fake, tmp_path, capfd):
    fake.play(Scenario(frames=[Frame(1, 1, 1, 1)], pa_forbidden_after=2))
    out = tmp_path / "replicas.json"
    serving.watch_replicas(_params(isvc=ISVC), str(out))  # ends successfully
    doc = json.loads(out.read_text())
    assert doc["error"].startswith("KubeError: ")
    assert "HTTP 403" in doc["error"] and "podautoscalers" in doc["error"]
    assert len(doc["samples"]) == 2 and doc["samples"][0]["ready"] == 1
    assert "watch_replicas failed to measure: KubeError: " in capfd.readouterr().out


def test_a_failed_helper_step_is_flagged_and_reaches_the_report(fake, tmp_path):
    fake.play(Scenario(frames=[Frame(1, 1, 1, 1)], pa_forbidden_after=1))
    replicas = tmp_path / "replicas.json"
    p = _params(isvc=ISVC)
    serving.watch_replicas(p, str(replicas))
    loads = [_worker(tmp_path / "w0.json"), _worker(tmp_path / "w1.json")]
    summary = _aggregate(tmp_path, p, loads, str(replicas))
    assert summary["pipeline"]["flags"] == ["step-failed"]
    assert "HTTP 403" in summary["pipeline"]["errors"]["watch_replicas"]
    assert len(summary["replicas"]) >= 1  # the one sample it had is kept
    assert summary["load"]["requests"] == 20


def test_a_missing_worker_is_flagged_workers_lost(tmp_path):
    p = _params(load_workers=3)
    loads = [_worker(tmp_path / "w0.json"), str(tmp_path / "gone.json")]  # 1 unreadable, 2 absent
    summary = _aggregate(tmp_path, p, loads)
    assert summary["pipeline"]["flags"] == ["workers-lost"]
    assert summary["pipeline"]["workers_lost"] == [1, 2]
    assert "workers-lost" in summary["load"]["flags"]
    assert summary["load"]["workers"]["missing"] == [1, 2]


def test_no_readable_load_is_flagged_no_load(tmp_path):
    p = _params(load_workers=2)
    (tmp_path / "torn.json").write_text('{"format": "kfp-bench/lo')
    loads = [str(tmp_path / "torn.json"), str(tmp_path / "gone.json")]
    summary = _aggregate(tmp_path, p, loads)
    assert "load" not in summary
    assert summary["pipeline"]["flags"] == ["workers-lost", "no-load"]
    assert summary["pipeline"]["workers_lost"] == [0, 1]


def test_load_switched_off_flags_nothing(tmp_path):
    p = _params(run_load=False)
    summary = _aggregate(tmp_path, p, [_skipped(tmp_path / "w0.json")])
    assert summary["pipeline"]["flags"] == []


def test_a_load_worker_that_fails_to_measure_saves_its_error_and_succeeds(tmp_path, capfd):
    # The engine refuses the URL (a ConfigError, before anything is sent): a measurement failure.
    p = _params(inference_url="ftp://127.0.0.1:9/v1/models/m:predict")
    out = tmp_path / "w0.json"
    predict.inference_load(p, 0, str(out))
    doc = json.loads(out.read_text())
    assert doc["error"].startswith("ConfigError: ") and "ftp" in doc["error"]
    assert "worker 0: inference_load failed to measure: ConfigError" in capfd.readouterr().out
    summary = _aggregate(tmp_path, _params(load_workers=1), [str(out)])
    assert summary["pipeline"]["flags"] == ["workers-lost", "no-load", "step-failed"]
    assert "ConfigError" in summary["pipeline"]["errors"]["inference_load 0"]


def test_the_failpoint_still_fails_a_helper_step(fake, tmp_path, monkeypatch):
    fake.play(Scenario(frames=[Frame(1, 1, 1, 1)], pa_forbidden_after=0))
    monkeypatch.setenv("KFP_BENCH_FAIL_STEP", "watch_replicas")
    with pytest.raises(BenchError, match="failed on purpose"):
        serving.watch_replicas(_params(isvc=ISVC, sweep_rates=""), str(tmp_path / "r.json"))


@pytest.fixture(scope="module")
def flagged_bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("flagged")
    p = _params(load_workers=2)
    replicas = tmp / "replicas.json"
    replicas.write_text(json.dumps({"error": "KubeError: HTTP 403 Forbidden", "samples": []}))
    summary = _aggregate(tmp, p, [_worker(tmp / "w0.json")], str(replicas))
    assert summary["pipeline"]["flags"] == ["workers-lost", "step-failed"]
    out = tmp / "records"
    html, md = tmp / "report.html", tmp / "summary.md"
    metrics = publish.report(str(tmp / "results"), str(out), str(html), str(md))
    return metrics, md.read_text(), html.read_text(), tmp


def test_the_flags_reach_the_markdown_html_and_metrics(flagged_bundle):
    metrics, md, html, _ = flagged_bundle
    assert metrics["failures"] == 2
    assert metrics["flag_workers_lost"] == 1 and metrics["flag_step_failed"] == 1
    assert "flag_no_load" not in metrics
    for text in (md, html):
        assert "workers-lost: a load worker&#x27;s result is missing" in text or (
            "workers-lost: a load worker's result is missing" in text
        )
        assert "step-failed: a helper step failed to measure" in text
        assert "watch_replicas: KubeError: HTTP 403 Forbidden" in text
        assert "load workers lost: 1" in text
    assert md.index("FAILED") < md.index("## Load")  # prominent: before the figures


def test_a_clean_result_has_zero_failures(tmp_path):
    summary_dir = tmp_path / "results"
    _aggregate(tmp_path, _params(load_workers=1), [_worker(tmp_path / "w0.json")])
    files = write_bundle(read_results(summary_dir), tmp_path / "records")
    metrics = json.loads(files["metrics.json"].read_text())
    assert metrics["failures"] == 0
    assert not [k for k in metrics if k.startswith("flag_")]
    assert (
        outcome.check_outcome(outcome.outcome_of(str(summary_dir))) == "no failure flag, no gate"
    )  # no failure: the run may end SUCCEEDED


def test_check_outcome_fails_the_run_after_the_report(flagged_bundle):
    *_, tmp = flagged_bundle
    with pytest.raises(BenchError, match="workers-lost, step-failed") as err:
        outcome.check_outcome(outcome.outcome_of(str(tmp / "results")))
    assert "its report is published" in str(err.value)
