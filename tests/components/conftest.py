"""Fixtures of the component tests: kfp.local in this venv, and a local KFP API server.

Components run with kfp.local's SubprocessRunner without a venv, built for this environment as
image mode's image (tests/venv_image.py): no step installs anything (the session checks that kfp
and the editable kfp-bench are unchanged).
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest
from kfp import local

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.venv_image import DELIVERY

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def kfp_local(tmp_path_factory):
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=str(tmp_path_factory.mktemp("kfp-local")),
    )
    with DELIVERY.active():
        yield
    assert importlib.metadata.version("kfp") == "2.17.3", "a component changed the venv's kfp"
    where = subprocess.run(
        [sys.executable, "-c", "import kfp_bench; print(kfp_bench.__file__)"],
        capture_output=True, text=True, cwd=tmp_path_factory.mktemp("cwd"), check=True,
    ).stdout  # fmt: skip
    assert where.startswith(str(ROOT)), f"a component replaced the editable kfp-bench: {where}"


@pytest.fixture(scope="session")
def kfp_api():
    """A local KFP API whose runs are simulated (0.2 s each): quick, and no child environment."""
    with start_kfp_server(simulate="all:fixed(0.2)", max_parallel_runs=8) as server:
        yield server


def leftovers(url: str, benchmark_id: str) -> int:
    """Resources on the server whose names carry the benchmark id."""
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    report = sweep(CleanupOptions(host=url, benchmark_id=benchmark_id, dry_run=True))
    return len(report["experiments"]) + len(report["pipelines"]) + report["runs"]
