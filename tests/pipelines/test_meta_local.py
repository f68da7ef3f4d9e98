"""The whole meta-pipeline with kfp.local against the local servers; cleanup after a failure."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kfp import local
from kfp_bench.pipelines.meta import kfp_bench

from kfp_bench.results import read_results
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


def test_meta_pipeline_end_to_end(root, kfp_api, model_server):
    kfp_bench(
        kfp_host=kfp_api.url,
        num_runs=3,
        poll_interval_sec=0.2,
        inference_url=model_server.v1_predict_url,
        duration_sec=1.0,
        concurrency=2,
        load_workers=2,
        benchmark_id="meta-e2e",
    )
    (records,) = root.glob("kfp-bench-*/report/records")
    res = read_results(records)
    assert res.summary["runs"]["by_state"] == {"SUCCEEDED": 3}
    assert res.load.workers["reported"] == 2 and not res.load.workers["missing"]
    assert json.loads((records / "metrics.json").read_text())
    assert leftovers(kfp_api.url, "meta-e2e") == 0


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
