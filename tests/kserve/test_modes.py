"""The deployment mode in the pipeline's steps (issue 18): deploy_isvc says which mode the
InferenceService got and where it was learnt, and watch_replicas reads the autoscaler of that
mode: Knative's PodAutoscalers, or in Standard/RawDeployment mode the HPA. The cluster is
``fake_kube`` (no Kubernetes API runs in this tier; tests/cluster/ has the real one), reached as
a step's pod reaches its own: through the default kubeconfig; the steps and the kubernetes client
are real."""

from __future__ import annotations

import json

import pytest

from kfp_bench.steps import serving
from kfp_bench.steps.params import BenchParams
from tests.kserve.fake_kube import (
    HPA_PATH,
    NS,
    PA_PATH,
    READY,
    Frame,
    Scenario,
)

RAW = {"name": "bench-iris", "namespace": NS, "predictor": {"scale_metric": "cpu",
                                                            "scale_target": 80}}  # fmt: skip


@pytest.fixture
def fake(fake_cluster):
    return fake_cluster


def _params(isvc: dict) -> BenchParams:
    return BenchParams(run_benchmark=False, benchmark_id="modes-1", duration_sec=1.0, isvc=isvc)


def test_deploy_isvc_says_the_mode_and_where_it_was_learnt(fake, capfd):
    fake.play(Scenario(conditions=[READY], default_mode="Standard"))
    serving.deploy_isvc(_params(RAW), 5.0)
    out = capfd.readouterr().out
    assert f"InferenceService bench-iris in namespace {NS} ready in" in out
    assert out.rstrip().endswith(
        "deployment mode Standard (from the cluster's default, defaultDeploymentMode in "
        "ConfigMap kubeflow/inferenceservice-config)"
    )


def test_deploy_isvc_says_when_the_config_map_is_forbidden(fake, capfd):
    fake.play(Scenario(conditions=[READY], default_mode="Standard", config_map="forbidden"))
    serving.deploy_isvc(_params(RAW), 5.0)
    out = capfd.readouterr().out
    assert "deployment mode Standard (from the InferenceService's deploymentMode annotation" in out
    assert "the cluster's default is not readable here: " in out
    assert "HTTP 403 Forbidden" in out and "WARNING" not in out


def _watch(fake, tmp_path, scenario: Scenario, isvc: dict) -> dict:
    """watch_replicas over the deployed InferenceService of ``isvc``; the autoscaler LISTs are
    refused after the second, which ends the step's window early (and is saved as its error)."""
    s = fake.play(scenario)
    serving.deploy_isvc(_params(isvc), 5.0)
    s.pa_forbidden_after = 2
    out = tmp_path / "replicas.json"
    serving.watch_replicas(_params(isvc), str(out))
    return json.loads(out.read_text())


def test_watch_replicas_reads_the_hpa_in_raw_deployment_mode(fake, tmp_path):
    s = Scenario(conditions=[READY], frames=[Frame(2, 3, 4, 3)], default_mode="RawDeployment")
    doc = _watch(fake, tmp_path, s, RAW)
    assert [(x["ready"], x["desired"], x["actual"]) for x in doc["samples"]] == [(2, 4, 3)] * 2
    assert doc["deployment_mode"] == "Standard" and doc["knative"] is False
    assert doc["mode_from"] == "the InferenceService's status.deploymentMode"
    assert doc["target"] == 0  # Knative's rule does not judge an HPA
    assert "horizontalpodautoscalers" in doc["error"]
    assert f"GET {HPA_PATH}" in s.requests and f"GET {PA_PATH}" not in s.requests


def test_watch_replicas_still_reads_podautoscalers_in_serverless_mode(fake, tmp_path):
    s = Scenario(conditions=[READY], frames=[Frame(1, 1, 5, 1)])
    doc = _watch(fake, tmp_path, s, {"name": "bench-iris", "namespace": NS})
    assert [(x["ready"], x["desired"], x["actual"]) for x in doc["samples"]] == [(1, 5, 1)] * 2
    assert doc["deployment_mode"] == "Knative" and doc["knative"] is True
    assert doc["target"] == 1
    assert f"GET {PA_PATH}" in s.requests and f"GET {HPA_PATH}" not in s.requests
