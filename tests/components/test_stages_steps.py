"""The pipeline's stages and llm_stages (and cost_per_hour) at the step level: checked in the
first step's text checks, split across the load workers by lane (each worker pod runs its lane
of the one schedule), the replica watcher's window their sum, and the report's chart of the
load, its latency and the replicas on one time axis with the stages marked.

The load workers run for real against the local fault server. The replica samples are written
with the watcher's own ``watcher_doc`` (no Kubernetes API runs in this tier: the watcher's
reading of one is tested against the stand-in API in tests/kserve/test_modes.py, and against a
real one in the cluster tier, tests/cluster/)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.kserve.watch import ReplicaSample, watcher_doc
from kfp_bench.results import read_results
from kfp_bench.stats import store
from kfp_bench.steps import predict, publish, serving
from kfp_bench.steps.llm_params import llm_options
from kfp_bench.steps.load_params import load_options
from kfp_bench.steps.params import BenchParams

STAGES = "1s@20,idle 1s,1s@10-40"  # 20 + 0 + 25 requests over 3 s


def _params(**over) -> BenchParams:
    p = BenchParams(run_benchmark=False, inference_url="http://127.0.0.1:9/", concurrency=4)
    return dataclasses.replace(p, **over).check(fetch=False)


@pytest.mark.parametrize(
    "over, said",
    [
        ({"stages": STAGES, "rate": 5}, "pipeline parameter rate=5: the stages of stages set"),
        ({"stages": STAGES, "duration_sec": 60}, "duration_sec=60: the stages of stages last 3"),
        ({"stages": "1s@20,soon"}, "pipeline parameter stages: stage 'soon' is not one of"),
        ({"stages": "61m@1"}, "they last 3660 s; keep their sum at most 3600 s"),
        ({"stages": "5s@8000"}, "8000 req/s per load worker at the peak, above the safety cap"),
        (
            {"run_llm": True, "llm_url": "http://h/openai", "llm_stages": "5s@2", "llm_rate": 1},
            "pipeline parameter llm_rate=1: the stages of llm_stages set the rate",
        ),
        (
            {
                "run_llm": True,
                "llm_url": "http://h/openai",
                "llm_stages": "5s@2",
                "llm_warmup_sec": 5,
            },
            "llm_warmup_sec=5: give seconds from 0 to below the sum of llm_stages (5)",
        ),  # fmt: skip
        ({"cost_per_hour": -2.0}, "pipeline parameter cost_per_hour=-2.0: give the serving"),
    ],
)
def test_the_first_step_refuses_naming_the_parameter(over, said):
    with pytest.raises(ConfigError) as err:
        _params(**over)
    assert said in str(err.value)


def test_each_worker_takes_its_lane_and_the_watcher_the_stages_sum():
    p = _params(stages=STAGES, load_workers=2, duration_sec=30.0, sweep_rates="5",
                sweep_step_sec=2.0)  # fmt: skip
    opts = load_options(p)
    assert opts.duration == 3.0 and [s.kind for s in opts.stages] == ["constant", "idle", "ramp"]
    assert [opts.share(i, 2).lane for i in (0, 1)] == [(0, 2), (1, 2)]
    assert serving.watch_window(p) == 3.0 + 2.0 + 30.0
    two = _params(stages="4s@1", load_workers=2, run_llm=True, llm_url="http://h/openai",
                  llm_stages="10s@1,idle 20s")  # fmt: skip
    assert serving.watch_window(two) == 30.0 + 30.0  # the longer of the two loads
    assert llm_options(two, model="m").duration == 30.0 and len(llm_options(two).stages) == 2
    # a peak a single process may not send, two may: each lane sends half of it
    _params(stages="5s@8000", load_workers=2)


def test_a_staged_load_in_two_workers_and_its_report(fault_server, tmp_path):
    p = _params(stages=STAGES, load_workers=2, inference_url=fault_server.url + "/?delay_ms=1",
                cost_per_hour=3.6)  # fmt: skip
    loads = []
    for worker in (0, 1):
        out = tmp_path / f"load-{worker}.json"
        predict.inference_load(p, worker, str(out))
        loads.append(str(out))
    # lane i of 2 takes requests i, i + 2, ... of the one schedule: 23 and 22 of the 45
    assert [store.load(x).requests for x in loads] == [23, 22]
    started = store.load(loads[0]).started_at
    samples = [ReplicaSample(started + t, ready, ready) for t, ready in
               ((0, 1), (1, 2), (2, 1), (3, 3), (4, 3))]  # fmt: skip
    replicas = tmp_path / "replicas.json"
    replicas.write_text(json.dumps(watcher_doc(samples, target=1, knative=True)))
    sweep = tmp_path / "sweep.json"
    sweep.write_text('{"skipped": true}')
    runs = tmp_path / "runs"
    runs.mkdir()
    results = tmp_path / "results"
    publish.aggregate(p, str(runs), loads, str(sweep), str(replicas), str(results))
    res = read_results(results)
    assert res.load.requests == 45 and res.summary["cost_per_hour"] == 3.6
    assert [r["requests"] for r in res.load.stages.summary()] == [20, 0, 25]
    records, html, md = tmp_path / "records", tmp_path / "r.html", tmp_path / "r.md"
    metrics = publish.report(str(results), str(records), str(html), str(md))
    page = html.read_text()
    assert 'alt="Load in stages"' in page or "Load in stages" in page
    assert "1s@20 (constant), idle 1s (idle), 1s@10-40 (ramp)" in page
    assert "InferenceService&#x27;s replicas" in page or "InferenceService's replicas" in page
    assert metrics["load_cost_per_thousand_requests"] > 0
    assert "Cost per 1000 requests" in md.read_text()
