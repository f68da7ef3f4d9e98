"""The full-database fill in the pipeline (fill_runs, fill_steps): spawn_runs fills and probes
before the benchmark's runs, the fill section reaches the results through poll_runs and
aggregate, and the exit handler sweeps the fill's own id; against the local KFP API. (No
``from __future__ import annotations``: kfp.dsl reads the pipeline's annotations as types.)"""

import json
import re
from pathlib import Path

import pytest
from kfp import dsl
from kfp.dsl import Dataset

from kfp_bench.components import poll_runs, spawn_runs, stage_manifest, upload_manifest
from kfp_bench.errors import ConfigError
from kfp_bench.kfp.fill import fill_id
from kfp_bench.steps import exit_handler
from kfp_bench.steps.ids import benchmark_id_for
from kfp_bench.steps.params import BenchParams
from kfp_bench.steps.runs_params import check_fill
from tests.components.conftest import leftovers


def _params(**over) -> dict:
    base = dict(kfp_host="http://127.0.0.1:9", num_runs=2, create_concurrency=4)
    base.update(poll_interval_sec=0.2, run_timeout_sec=60.0)
    return BenchParams(**{**base, **over}).as_dict()


@pytest.mark.usefixtures("kfp_local")
def test_spawn_fills_poll_carries_the_fill_and_the_exit_handler_sweeps_it(kfp_api):
    url = kfp_api.url
    bid = benchmark_id_for("comp-fill", "job-fill-1")  # the run's own id, as check_params makes
    params = _params(kfp_host=url, benchmark_id=bid, fill_runs=20, fill_steps=2)

    @dsl.pipeline
    def filled(host: str) -> Dataset:
        staged = stage_manifest(params=params)
        uploaded = upload_manifest(params=params, manifest=staged.outputs["manifest"])
        handle = uploaded.outputs["Output"]
        spawned = spawn_runs(params=params, handle=handle, uploaded=uploaded.outputs["runs"])
        polled = poll_runs(params=params, handle=handle, spawned=spawned.outputs["runs"])
        return polled.outputs["runs"]

    out = Path(filled(host=url).output.path)
    fill = json.loads((out / "fill.json").read_text())
    assert fill["filled"] == 20 and fill["benchmark_id"] == fill_id(bid)
    assert len({r["k"] for r in fill["rows"]}) == 3 and "error" not in fill
    summary = json.loads((out / "runs_summary.json").read_text())
    assert summary["runs"]["created"] == 2  # the fill's runs are not the benchmark's
    assert leftovers(url, fill_id(bid)) == 20 + 2  # its runs, experiment and pipeline
    p = BenchParams(kfp_host=url, benchmark_id="comp-fill", run_benchmark=True, fill_runs=20)
    said = exit_handler.cleanup(p, "job-fill-1", "SUCCEEDED", "")
    assert "deleted 22 runs" in said  # the benchmark's 2 and the fill's 20
    assert leftovers(url, fill_id(bid)) == 0 and leftovers(url, bid) == 0


@pytest.mark.parametrize(
    ("over", "said"),
    [
        ({"fill_runs": -1}, "fill_runs=-1: give 0 (no fill)"),
        ({"fill_runs": 20_000}, "up to 10000"),
        ({"fill_runs": 10, "fill_steps": 11}, "fill_steps=11: give a whole number from 1 to 10"),
    ],
)
def test_bad_fill_parameters_are_named(over, said):
    with pytest.raises(ConfigError, match=re.escape(said)):
        check_fill(BenchParams(**over))
    check_fill(BenchParams(fill_runs=0, fill_steps=0))  # no fill: fill_steps is not read
