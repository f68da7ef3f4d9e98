"""Small helpers of the cluster tests over the kubernetes client: run a pod to its end, wait for a
condition, find a container's processes on this node."""

from __future__ import annotations

import time
from pathlib import Path

from kubernetes import client

from tests.cluster.conftest import PYTHON_IMAGE


def wait_until(what: str, check, timeout: float = 120, every: float = 0.5):
    """Call ``check`` until it returns something truthy, and return that; fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not after {timeout:.0f} s")
        time.sleep(every)


def run_pod(kube, namespace: str, name: str, script: str, timeout: float = 180) -> tuple[str, str]:
    """Run ``python3 -c script`` in a pod of the Python image to its end: (phase, its log)."""
    core = client.CoreV1Api(kube)
    core.create_namespaced_pod(
        namespace,
        {
            "metadata": {"name": name},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {"name": "main", "image": PYTHON_IMAGE, "command": ["python3", "-c", script]}
                ],
            },
        },
    )

    def ended():
        phase = core.read_namespaced_pod(name, namespace).status.phase
        return phase if phase in ("Succeeded", "Failed") else None

    phase = wait_until(f"pod {namespace}/{name} to end", ended, timeout)
    return phase, core.read_namespaced_pod_log(name, namespace)


def container_pids(pod, container_id: str) -> list[int]:
    """The processes of one of a pod's containers on this node, read from its cgroup (v1,
    cgroupfs: the kubepods/<qos>/pod<uid>/<container id>/ tree kubelet makes)."""
    found = []
    pattern = f"**/pod{pod.metadata.uid}/{container_id}/tasks"
    for tasks in Path("/sys/fs/cgroup/pids/kubepods").glob(pattern):
        found.extend(int(pid) for pid in tasks.read_text().split())
    return found
