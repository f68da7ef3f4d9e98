"""Argo Workflows v3.7.3, as KFP 2.15 drives it: a workflow's step runs, its log is archived in
the cluster's S3 store, and a step's retryStrategy (what `set_retry` compiles to) meets a
killed container and a force-deleted pod as docs/running-in-a-cluster.md ("When a pod dies")
says it does."""

from __future__ import annotations

import os
import signal

import boto3
import pytest
from kubernetes import client

from tests.cluster.conftest import PYTHON_IMAGE
from tests.cluster.kube import container_pids, wait_until

pytestmark = pytest.mark.slow
GROUP, VERSION = "argoproj.io", "v1alpha1"


@pytest.fixture
def runner(kube, namespace):
    """A namespace where workflows run as in a Kubeflow profile's: its default ServiceAccount may
    do what Argo's executor does (argo-workflows v3.7.3 docs/workflow-rbac.md: create and patch
    WorkflowTaskResults), and it holds the artifact store's Secret, which the controller's
    artifactRepository names (Kubeflow's profile controller copies it into each profile)."""
    core = client.CoreV1Api(kube)
    secret = core.read_namespaced_secret("mlpipeline-minio-artifact", "kubeflow")
    core.create_namespaced_secret(
        namespace, {"metadata": {"name": secret.metadata.name}, "data": secret.data}
    )
    rbac = client.RbacAuthorizationV1Api(kube)
    rbac.create_namespaced_role(
        namespace,
        {
            "metadata": {"name": "executor"},
            "rules": [
                {
                    "apiGroups": [GROUP],
                    "resources": ["workflowtaskresults"],
                    "verbs": ["create", "patch"],
                }
            ],
        },
    )
    rbac.create_namespaced_role_binding(
        namespace,
        {
            "metadata": {"name": "executor"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "Role",
                "name": "executor",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
        },
    )
    return namespace


def submit(kube, namespace: str, script: str, retries: int | None = None) -> str:
    template = {
        "name": "main",
        "container": {"image": PYTHON_IMAGE, "command": ["python3", "-c", script]},
    }
    if retries is not None:
        # As KFP's compiler writes set_retry: a limit and no retryPolicy (argocompiler
        # container.go), so Argo's default applies.
        template["retryStrategy"] = {"limit": str(retries)}
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "Workflow",
        "metadata": {"generateName": "t-"},
        "spec": {"entrypoint": "main", "templates": [template]},
    }
    made = client.CustomObjectsApi(kube).create_namespaced_custom_object(
        GROUP, VERSION, namespace, "workflows", body
    )
    return made["metadata"]["name"]


def workflow(kube, namespace: str, name: str) -> dict:
    return client.CustomObjectsApi(kube).get_namespaced_custom_object(
        GROUP, VERSION, namespace, "workflows", name
    )


def finished(kube, namespace: str, name: str, timeout: float = 240) -> dict:
    def done():
        wf = workflow(kube, namespace, name)
        return wf if wf.get("status", {}).get("finishedAt") else None

    return wait_until(f"workflow {name} to finish", done, timeout)


def pods(kube, namespace: str, name: str) -> list:
    return (
        client.CoreV1Api(kube)
        .list_namespaced_pod(namespace, label_selector=f"workflows.argoproj.io/workflow={name}")
        .items
    )


def first_attempt_running(kube, namespace: str, name: str):
    """The workflow's one pod once its main container runs (the step has printed its attempt)."""

    def running():
        for pod in pods(kube, namespace, name):
            for status in pod.status.container_statuses or []:
                if status.name == "main" and status.state.running:
                    log = client.CoreV1Api(kube).read_namespaced_pod_log(
                        pod.metadata.name, namespace, container="main"
                    )
                    if "attempt 0" in log:
                        return pod
        return None

    return wait_until(f"workflow {name}'s first attempt to run", running, 180)


ATTEMPT = (
    "import time; r = int('{{retries}}'); print('attempt', r, flush=True); "
    "time.sleep(600 if r == 0 else 0)"
)


def test_a_step_runs_and_its_log_is_archived(kube, runner):
    name = submit(kube, runner, "print('hello from a step')")
    wf = finished(kube, runner, name)
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    (node,) = [n for n in wf["status"]["nodes"].values() if n["type"] == "Pod"]
    logs = [a for a in node["outputs"]["artifacts"] if a["name"] == "main-logs"]
    assert logs, node["outputs"]
    key = logs[0]["s3"]["key"]
    assert key.startswith(f"artifacts/{name}/")
    # The host reaches the store through its Service (kube-proxy's rules).
    svc = client.CoreV1Api(kube).read_namespaced_service("minio-service", "kubeflow")
    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://{svc.spec.cluster_ip}:9000",
        aws_access_key_id="minio",
        aws_secret_access_key="minio123",
        region_name="us-east-1",
    )
    body = s3.get_object(Bucket="mlpipeline", Key=key)["Body"].read()
    assert b"hello from a step" in body


def test_a_killed_container_is_retried(kube, runner):
    """An OOM kill, as the kernel does it: SIGKILL to the main container's processes. The pod
    fails, and the default retry policy (OnFailure) gives the step a new pod: `{{retries}}` 1."""
    name = submit(kube, runner, ATTEMPT, retries=2)
    pod = first_attempt_running(kube, runner, name)
    main_id = next(s for s in pod.status.container_statuses if s.name == "main").container_id
    main_id = main_id.split("://", 1)[1]
    killed = 0
    for pid in container_pids(pod, main_id):
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass  # gone with one killed before it
    assert killed, "found no process of the main container in its cgroup"
    wf = finished(kube, runner, name)
    assert wf["status"]["phase"] == "Succeeded", wf["status"].get("message")
    attempts = sorted(
        (n for n in wf["status"]["nodes"].values() if n["type"] == "Pod"),
        key=lambda n: n["startedAt"],
    )
    assert [n["phase"] for n in attempts] == ["Failed", "Succeeded"]
    log = client.CoreV1Api(kube).read_namespaced_pod_log(
        next(p.metadata.name for p in pods(kube, runner, name) if p.status.phase == "Succeeded"),
        runner,
        container="main",
    )
    assert "attempt 1" in log


def test_a_force_deleted_pod_is_never_retried_as_a_new_attempt(kube, runner):
    """A pod deleted from under its running step (`kubectl delete --force`, a lost node's pods
    removed by the API). Argo v3.7.3 has two answers, and which one comes is a race: it marks the
    step Error, "pod deleted" (operator.go:1226-1264, for a pod it finds missing), which the
    default retry policy (OnFailure) does not retry; or, while the step shows Pending again, it
    makes the pod again under the same name (workflowpod.go:112-122 creates a node's pod
    whenever its informer holds none) and the step starts over as the same attempt,
    `{{retries}}` 0. Never a retry: a kfp-bench worker that starts over finds its start mark and
    saves itself lost; one whose step ends Error fails the loop (docs/running-in-a-cluster.md,
    "When a pod dies")."""
    name = submit(kube, runner, ATTEMPT, retries=2)
    core = client.CoreV1Api(kube)
    first = first_attempt_running(kube, runner, name)

    def step_running():
        nodes = workflow(kube, runner, name)["status"].get("nodes", {}).values()
        return any(n["type"] == "Pod" and n["phase"] == "Running" for n in nodes)

    wait_until(f"workflow {name}'s step to be Running in its status", step_running, 60)
    core.delete_namespaced_pod(first.metadata.name, runner, grace_period_seconds=0)

    def answered():
        wf = workflow(kube, runner, name)
        nodes = [n for n in wf["status"]["nodes"].values() if n["type"] == "Pod"]
        if wf["status"].get("finishedAt"):
            return "ended", nodes
        for pod in pods(kube, runner, name):
            if pod.metadata.uid != first.metadata.uid and pod.status.phase == "Running":
                log = core.read_namespaced_pod_log(pod.metadata.name, runner, container="main")
                if "attempt" in log:
                    return ("made again", pod.metadata.name, log.strip().splitlines()[-1]), nodes
        return None

    outcome, nodes = wait_until(f"Argo's answer to workflow {name}'s deleted pod", answered, 120)
    assert len(nodes) == 1, f"the step was retried: {nodes}"
    if outcome == "ended":
        assert (nodes[0]["phase"], nodes[0]["message"]) == ("Error", "pod deleted"), nodes
    else:
        assert outcome == ("made again", first.metadata.name, "attempt 0"), outcome
