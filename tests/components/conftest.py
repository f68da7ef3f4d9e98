"""Fixtures of the component tests: kfp.local in this venv, and a local KFP API server.

Components run with kfp.local's SubprocessRunner without a venv: their pins equal this venv's, so
their pip installs are no-ops (test_embed checks the pins; the session checks kfp is unchanged).
"""

from __future__ import annotations

import importlib.metadata

import pytest
from kfp import local

from kfp_bench.sandbox.kfp_server import start_kfp_server


@pytest.fixture(scope="session")
def kfp_local(tmp_path_factory):
    local.init(
        runner=local.SubprocessRunner(use_venv=False),
        pipeline_root=str(tmp_path_factory.mktemp("kfp-local")),
    )
    yield
    assert importlib.metadata.version("kfp") == "2.17.3", "a component changed the venv's kfp"


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
