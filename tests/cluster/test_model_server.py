"""The predict load against a real kserve ModelServer in a pod of the cluster: the sandbox's iris
model in the image `make cluster` builds from this checkout, behind a Service, loaded by
`kfp-bench load` from this host through kube-proxy's rules."""

from __future__ import annotations

import json

import pytest
from kubernetes import client

from tests.cluster.conftest import cluster_env
from tests.cluster.kube import wait_until
from tests.conftest import run_cli

pytestmark = pytest.mark.slow


@pytest.fixture
def model_server(kube, namespace):
    """The ModelServer's pod and Service, Ready; yields the Service's V1 predict URL."""
    core = client.CoreV1Api(kube)
    labels = {"app": "iris"}
    core.create_namespaced_pod(
        namespace,
        {
            "metadata": {"name": "iris", "labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "kserve-container",
                        "image": cluster_env()["MODEL_SERVER_IMAGE"],
                        "args": ["--http_port", "8080"],
                        "ports": [{"containerPort": 8080}],
                        "readinessProbe": {
                            "httpGet": {"path": "/v1/models/iris", "port": 8080},
                            "periodSeconds": 1,
                        },
                    }
                ]
            },
        },
    )
    svc = core.create_namespaced_service(
        namespace,
        {
            "metadata": {"name": "iris"},
            "spec": {"selector": labels, "ports": [{"port": 8080, "targetPort": 8080}]},
        },
    )

    def ready():
        status = core.read_namespaced_pod("iris", namespace).status
        return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])

    wait_until("the model server's pod to be Ready", ready, 180)
    yield f"http://{svc.spec.cluster_ip}:8080/v1/models/iris:predict"


def test_predict_load_against_a_model_server_pod(model_server, tmp_path):
    payload = tmp_path / "input.json"
    payload.write_text('{"instances": [[6.8, 2.8, 4.8, 1.4], [6.0, 3.4, 4.5, 1.6]]}')
    out = tmp_path / "load.json"
    r = run_cli(
        "load", "-z", "3s", "-c", "4", "-m", "POST", "-D", str(payload), "-T", "application/json",
        "--json-out", str(out), model_server,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    result = json.loads(out.read_text())
    assert result["requests"] > 0
    assert result["success_ratio"] == 1.0, result["status_codes"]
    assert "200" in {str(code) for code in result["status_codes"]}
