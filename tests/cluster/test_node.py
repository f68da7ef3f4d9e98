"""The cluster itself: Kubernetes at the release the tier pins, a Ready node, and pods that
resolve names, reach a Service and install from PyPI as a pipeline step does."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.cluster.kube import run_pod

pytestmark = pytest.mark.slow


def test_kubernetes_release_and_node(kube):
    version = client.VersionApi(kube).get_code()
    assert version.git_version == "v1.34.4"
    (node,) = client.CoreV1Api(kube).list_node().items
    assert node.status.node_info.kubelet_version == "v1.34.4"
    assert node.status.node_info.container_runtime_version.startswith("containerd://")
    ready = {c.type: c.status for c in node.status.conditions}
    assert ready["Ready"] == "True", node.status.conditions


def test_pod_resolves_reaches_a_service_and_installs(kube, namespace):
    script = """
import socket, subprocess, sys, urllib.request, urllib.error
print("api", socket.gethostbyname("kubernetes.default.svc.cluster.local"))
try:
    urllib.request.urlopen("http://minio-service.kubeflow:9000/", timeout=10)
except urllib.error.HTTPError as e:
    print("s3", e.code)
r = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", "wheels",
                    "six==1.16.0"], capture_output=True, text=True)
print("pip", r.returncode, r.stderr[-300:])
"""
    phase, log = run_pod(kube, namespace, "net", script)
    assert phase == "Succeeded", log
    assert "api 10.96.0.1" in log
    # SeaweedFS's S3 gateway refuses an unsigned request: it answered, through the Service.
    assert "s3 403" in log
    assert "pip 0 " in log, log
