"""Fixtures of the pipeline runs: the steps' wheels and the wheel volume (pod-faithful runs),
and kfp.local in this process's environment (``local_root``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kfp import local
from kfp.local import config

from kfp_bench.cli import main
from kfp_bench.sandbox.pods import mount_config_map, wheelhouse
from tests.fake_config_maps import config_map_api

#: Where the steps' wheels are kept between runs: in this environment, as the demo keeps them.
WHEELS = Path(sys.prefix) / "kfp-bench-pod-wheels"


@pytest.fixture(scope="module")
def wheels() -> Path:
    """Every wheel the steps install but kfp-bench's (pip's folder, no index)."""
    return wheelhouse(WHEELS)


@pytest.fixture(scope="module")
def mounted(tmp_path_factory) -> Path:
    """What ``kfp-bench install`` writes into a namespace, laid out as the kubelet lays out the
    steps' volume: the command runs against a loopback API of ConfigMaps (no cluster runs here,
    tests/fake_config_maps.py), and the object it created is the one mounted."""
    folder = tmp_path_factory.mktemp("install")
    with config_map_api(folder, allowed={"team"}) as (store, kubeconfig):
        assert main(["install", "--namespace", "team", "--kubeconfig", kubeconfig]) == 0
    ((_, obj),) = store.items()
    return mount_config_map(obj, folder / "volume")


@pytest.fixture
def local_root(tmp_path):
    """kfp.local with its tasks in this process's environment, its pipeline root under
    ``tmp_path``; the previous configuration restored after."""
    before = config.LocalExecutionConfig.instance
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path / "r"))
    yield tmp_path / "r"
    config.LocalExecutionConfig.instance = before
