"""The meta-pipeline with kfp.local: a bad parameter fails the first step and the cleanup still
sweeps. (The whole pipeline end to end runs as pods run it: tests/pipelines/test_pods.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from kfp import local
from kfp_bench.pipelines.meta import kfp_bench

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.components.conftest import leftovers


@pytest.fixture(scope="module")
def kfp_api():
    with start_kfp_server(simulate="all:fixed(0.2)", max_parallel_runs=8) as server:
        yield server


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    path = tmp_path_factory.mktemp("meta")
    local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=str(path))
    return path


def test_bad_parameter_fails_first_step_and_cleanup_still_runs(root, kfp_api, capfd):
    from kfp_bench.kfp.api import KfpApi
    from kfp_bench.kfp.options import NAME_PREFIX

    # Something this benchmark id "left" earlier: cleanup must sweep it although check fails.
    desc = "Created by kfp-bench, benchmark meta-bad; delete with kfp-bench cleanup."
    assert KfpApi(kfp_api.url).create_experiment(NAME_PREFIX + "meta-bad", desc).ok
    with pytest.raises(RuntimeError, match="check-params"):
        kfp_bench(kfp_host=kfp_api.url, num_runs=0, benchmark_id="meta-bad", run_load=False)
    out = capfd.readouterr().out
    assert "pipeline parameter num_runs=0: give a whole number from 1 to 1000" in out
    assert "benchmark ended FAILED" in out
    assert leftovers(kfp_api.url, "meta-bad") == 0
    assert not list(Path(root).glob("kfp-bench-*/stage-manifest/manifest"))[1:]
