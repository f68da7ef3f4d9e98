"""Fixtures of the pipeline runs: the steps' wheels and the wheel volume (pod-faithful runs),
and kfp.local in this process's environment (``local_root``)."""

from __future__ import annotations

import contextlib
import os
import shutil
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
#: Where the steps' wheel volumes are kept between runs, one folder per ConfigMap.
VOLUMES = Path(sys.prefix) / "kfp-bench-test-volumes"


@pytest.fixture(scope="session")
def wheels() -> Path:
    """Every wheel the steps install but kfp-bench's (pip's folder, no index)."""
    return wheelhouse(WHEELS)


@pytest.fixture(scope="module")
def mounted(tmp_path_factory) -> Path:
    """What ``kfp-bench install`` writes into a namespace, laid out as the kubelet lays out the
    steps' volume: the command runs against a loopback API of ConfigMaps (no cluster runs here,
    tests/fake_config_maps.py), and the object it created is the one mounted.

    The volume is kept at a path of its own per ConfigMap in ``VOLUMES``: the steps'
    environments are kept by install script and pip settings, the volume's path among them
    (``pods.pod_env``), so one path lets every module and worker share them. Each module still
    runs the install, and its volume must be byte for byte the one kept."""
    folder = tmp_path_factory.mktemp("install")
    with config_map_api(folder, allowed={"team"}) as (store, kubeconfig):
        assert main(["install", "--namespace", "team", "--kubeconfig", kubeconfig]) == 0
    ((_, obj),) = store.items()
    own = mount_config_map(obj, folder / "volume")
    kept = VOLUMES / obj["metadata"]["name"]
    VOLUMES.mkdir(exist_ok=True)
    with contextlib.suppress(OSError):  # another module or worker laid it out first
        os.rename(own, kept)
        for old in VOLUMES.iterdir():  # other sources' volumes: their environments are gone
            if old != kept:
                shutil.rmtree(old, ignore_errors=True)
    assert _files(kept) == _files(mount_config_map(obj, folder / "again"))
    return kept


def _files(folder: Path) -> dict[str, bytes]:
    return {f.name: f.read_bytes() for f in folder.iterdir()}


@pytest.fixture
def local_root(tmp_path):
    """kfp.local with its tasks in this process's environment, its pipeline root under
    ``tmp_path``; the previous configuration restored after."""
    before = config.LocalExecutionConfig.instance
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(tmp_path / "r"))
    yield tmp_path / "r"
    config.LocalExecutionConfig.instance = before
