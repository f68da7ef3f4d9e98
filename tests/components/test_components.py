"""Each component, run with kfp.local on small inputs against real local servers."""

import json
import re
from pathlib import Path

import pytest
from kfp import dsl
from kfp.dsl import Dataset

from kfp_bench.components import (
    aggregate,
    check_params,
    cleanup,
    inference_load,
    poll_runs,
    rate_sweep,
    report,
    spawn_runs,
    stage_manifest,
    upload_manifest,
    watch_replicas,
)
from kfp_bench.results import read_results
from kfp_bench.stats import store
from kfp_bench.steps.params import BenchParams
from tests.components.conftest import leftovers

pytestmark = pytest.mark.usefixtures("kfp_local")


def _check_args(**over) -> dict:
    p = BenchParams(kfp_host="http://127.0.0.1:9", inference_url="http://127.0.0.1:9/")
    args = {n: getattr(p, n) for n in BenchParams.names()}
    args.update(over, job_id="job-1")
    return args


def test_check_params_hands_on_the_checked_parameters_with_the_benchmark_id(kfp_api):
    # it takes the benchmark's lease on the KFP server (kfp_bench.kfp.lease): a reachable one
    # and probes its targets (kfp_bench.steps.probe): the KFP API answers, and the load is off
    task = check_params(**_check_args(load_workers=3, kfp_host=kfp_api.url, run_load=False))
    checked = BenchParams.from_dict(task.output)
    assert checked.load_workers == 3 and isinstance(checked.load_workers, int)
    assert checked.benchmark_id == "job-1"  # derived from the run's id, as cleanup derives it
    import dataclasses

    from kfp_bench.steps import exit_handler

    given = dataclasses.replace(checked, benchmark_id="")  # what the exit handler is given
    assert exit_handler.cleanup(given, "job-1", "SUCCEEDED", "").endswith("released")


@pytest.mark.parametrize(
    ("param", "value", "words"),
    [
        ("num_runs", 0, "pipeline parameter num_runs=0: give a whole number"),
        ("pipeline", "ftp://x/p.yaml", "pipeline parameter pipeline='ftp://x/p.yaml'"),
        ("payload", "{not json", "pipeline parameter payload="),
        ("run_parameters", {"nope": 1}, "nope not declared by pipeline"),
    ],
)
def test_check_params_fails_naming_the_parameter(capfd, param, value, words):
    with pytest.raises(RuntimeError):
        check_params(**_check_args(**{param: value}))
    assert words in capfd.readouterr().out


def _params(**over) -> dict:
    """Checked parameters as check_params hands them on."""
    base = dict(kfp_host="http://127.0.0.1:9", benchmark_id="comp-test-1", num_runs=3)
    base.update(create_concurrency=2, poll_interval_sec=0.2, run_timeout_sec=60.0)
    base.update(run_node_selector={"pool": "pool-1"})
    return BenchParams(**{**base, **over}).as_dict()


def test_stage_manifest_keeps_the_bundled_child():
    task = stage_manifest(params=_params(pipeline="fanout", run_parameters={"width": 2}))
    text = Path(task.outputs["manifest"].path).read_text()
    assert "kfp-bench-fanout" in text


def test_inference_load_saves_a_mergeable_result(model_server, capfd):
    params = _params(
        load_workers=2, host_header="iris.example.com", duration_sec=1.0, concurrency=4
    )
    params["inference_url"] = model_server.v1_predict_url
    task = inference_load(params=params, worker=1)
    stats = store.load(task.outputs["result"].path)
    assert stats.requests > 0 and stats.ok == stats.requests
    assert stats.options["concurrency"] == 2  # this worker's share
    # The pipeline keeps to the safety caps (check_params enforces them): nothing overridden.
    assert not stats.options["i_know"] and "i-know" not in stats.flags
    # the pod's own CPU goes with the result and into its log
    assert stats.client_cpu["processes"] == 1 and stats.client_cpu["busiest"] > 0
    assert "worker 1: load generator CPU " in capfd.readouterr().out


def _upload(manifest, host: str, **over):
    return upload_manifest(params=_params(kfp_host=host, **over), manifest=manifest)


def test_upload_manifest_hands_on_the_handle(kfp_api):
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions
    from kfp_bench.kfp.phases import BenchmarkHandle

    @dsl.pipeline
    def upload_only(host: str) -> str:
        staged = stage_manifest(params=_params())
        return _upload(staged.outputs["manifest"], host).outputs["Output"]

    handle = BenchmarkHandle.from_json(upload_only(host=kfp_api.url).output)
    assert handle.benchmark_id == "comp-test-1" and handle.experiment_id and handle.version_id
    assert leftovers(kfp_api.url, "comp-test-1") == 2  # the pipeline and the experiment
    sweep(CleanupOptions(host=kfp_api.url, benchmark_id="comp-test-1"))


def test_upload_spawn_poll_runs_measure_and_leave_the_cleanup_to_the_sweep(kfp_api):
    from kfp_bench.kfp.cleanup import sweep
    from kfp_bench.kfp.options import CleanupOptions

    @dsl.pipeline
    def runs_only(host: str) -> Dataset:
        staged = stage_manifest(params=_params())
        uploaded = _upload(staged.outputs["manifest"], host)
        handle = uploaded.outputs["Output"]
        params = _params(kfp_host=host)
        spawned = spawn_runs(params=params, handle=handle, uploaded=uploaded.outputs["runs"])
        polled = poll_runs(params=params, handle=handle, spawned=spawned.outputs["runs"])
        return polled.outputs["runs"]

    out = Path(runs_only(host=kfp_api.url).output.path)
    summary = json.loads((out / "runs_summary.json").read_text())
    assert summary["runs"]["by_state"] == {"SUCCEEDED": 3}
    assert summary["api"]["upload_pipeline"]["count"] == 1
    assert summary["api"]["create_run"]["count"] == 3 and summary["poll_rounds"] >= 1
    assert len((out / "runs.jsonl").read_text().splitlines()) == 3
    calls = (out / "api_calls.jsonl").read_text().splitlines()
    assert len(calls) == summary["api_calls_total"]
    # Left for the exit handler (test_cleanup_sweeps_what_a_failed_benchmark_left runs it).
    assert leftovers(kfp_api.url, "comp-test-1") == 5
    sweep(CleanupOptions(host=kfp_api.url, benchmark_id="comp-test-1"))
    assert leftovers(kfp_api.url, "comp-test-1") == 0


def test_cleanup_sweeps_what_a_failed_benchmark_left(kfp_api):
    from kfp_bench.kfp.api import KfpApi
    from kfp_bench.kfp.options import NAME_PREFIX
    from kfp_bench.steps.ids import benchmark_id_for

    api = KfpApi(kfp_api.url)
    bid = benchmark_id_for("comp-test-2", "x")  # the run's own id: the parameter is a prefix
    desc = f"Created by kfp-bench, benchmark {bid}; delete with kfp-bench cleanup."
    assert api.create_experiment(NAME_PREFIX + bid, desc).ok
    assert leftovers(kfp_api.url, bid) == 1

    @dsl.pipeline
    def failing():
        done = cleanup(
            kfp_host=kfp_api.url,
            namespace="",
            benchmark_id="comp-test-2",
            job_id="x",
            run_benchmark=True,
            isvc={},
        )
        with dsl.ExitHandler(done):
            check_params(**_check_args(num_runs=-1))

    with pytest.raises(RuntimeError, match="check-params"):
        failing()
    assert leftovers(kfp_api.url, bid) == 0


def test_aggregate_reports_a_missing_worker_and_report_publishes_the_bundle(model_server):
    url = model_server.v1_predict_url  # a constant of the pipeline below, as a dict's value

    @dsl.pipeline
    def chain() -> Dataset:
        # the runs benchmark off; three load workers, of which only two report
        params = _params(
            run_benchmark=False, load_workers=3, duration_sec=0.5, concurrency=3,
            sweep_rates="5,10", sweep_step_sec=0.5,
            thresholds="load_success_ratio>=0.5,sweep_max_rps>0",
        )  # fmt: skip
        staged = stage_manifest(params=params)
        uploaded = upload_manifest(params=params, manifest=staged.outputs["manifest"])
        handle = uploaded.outputs["Output"]
        spawned = spawn_runs(params=params, handle=handle, uploaded=uploaded.outputs["runs"])
        runs = poll_runs(params=params, handle=handle, spawned=spawned.outputs["runs"])
        with dsl.ParallelFor([0, 1]) as worker:
            load = inference_load(params={**params, "inference_url": url}, worker=worker)
        sweep = rate_sweep(targets=[{"worker": 0, "params": {**params, "inference_url": url}}])
        watch = watch_replicas(params=params)  # no InferenceService: it only says so
        merged = aggregate(
            params=params,
            runs=runs.outputs["runs"],
            loads=dsl.Collected(load.outputs["result"]),
            sweep=sweep.outputs["sweep"],
            replicas=watch.outputs["replicas"],
        )
        shown = report(params=params, results=merged.outputs["results"])
        return shown.outputs["records"]

    records = Path(chain().output.path)
    res = read_results(records)
    assert res.load.workers["missing"] == [2]
    assert res.load.workers["expected"] == 3
    assert [r["rate"] for r in res.summary["sweep"]] == [5, 10] and "replicas" not in res.summary
    assert {"report.html", "summary.md", "metrics.json", "load.json"} <= {
        p.name for p in records.iterdir()
    }
    html = (records / "report.html").read_text()
    # self-contained: no script, no stylesheet or image fetched from anywhere, charts inline
    assert "<script" not in html and "<link" not in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html, re.I)
    assert 'src="data:image/png;base64,' in html
    assert len((records / "summary.md").read_bytes()) < 400_000
    # the thresholds' verdicts, for check_outcome, and first in the report
    gates = json.loads((records / "gates.json").read_text())
    assert (gates["gates_checked"], gates["gates_broken"]) == (2, 0), gates
    assert (records / "summary.md").read_text().startswith("# kfp-bench report\n\n> **Gates: all")
    assert all(
        isinstance(v, int | float)
        for v in json.loads((records / "metrics.json").read_text()).values()
    )
