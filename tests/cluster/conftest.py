"""The real-cluster tier: tests against the single-node cluster that `make cluster` starts
(docs/real-kfp.md), read from `.cluster/env`. Without a cluster each test here is skipped, with one
line saying so; `make test` runs none of them."""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from kubernetes import client, config

from kfp_bench.kserve.kube import Kube

REPO = Path(__file__).resolve().parents[2]
CLUSTER_ENV = REPO / ".cluster" / "env"
NO_CLUSTER = "no cluster is up: `make cluster` starts one (docs/real-kfp.md)"
#: The image every test pod runs: Debian's Python 3.11 with pip, built by make cluster.
PYTHON_IMAGE = "docker.io/library/python:3.11-slim"


def cluster_env() -> dict[str, str]:
    """`.cluster/env` as a mapping, empty when no cluster is up."""
    if not CLUSTER_ENV.exists():
        return {}
    pairs = (line.split("=", 1) for line in CLUSTER_ENV.read_text().splitlines() if "=" in line)
    return {key: value for key, value in pairs}


def pytest_collection_modifyitems(config, items):
    if cluster_env():
        return
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason=NO_CLUSTER)
    for item in items:
        if here in Path(item.fspath).parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def kube():
    """The cluster's API as the kubernetes client's ApiClient, admin credentials."""
    return config.new_client_from_config(config_file=cluster_env()["KUBECONFIG"])


@pytest.fixture
def namespace(kube):
    """A namespace of the test's own, deleted afterwards with everything in it."""
    core = client.CoreV1Api(kube)
    name = f"t-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    # The namespace's default ServiceAccount is made by a controller, shortly after.
    deadline = time.monotonic() + 30
    while not core.list_namespaced_service_account(name).items:
        assert time.monotonic() < deadline, f"namespace {name} got no default ServiceAccount"
        time.sleep(0.2)
    yield name
    core.delete_namespace(name, grace_period_seconds=0)


@pytest.fixture
def isvc_kube():
    """kfp-bench's own cluster interface, in the namespace of the KServe tier's model."""
    env = cluster_env()
    return Kube(env["KSERVE_NAMESPACE"], kubeconfig=env["KUBECONFIG"])


@pytest.fixture
def benchmark_id():
    """A benchmark id of the test's own: what it deploys carries it, and only that is deleted."""
    return f"t-{uuid.uuid4().hex[:8]}"
