"""The meta-pipeline with kfp.local: a bad parameter fails the first step and the cleanup still
sweeps. (The whole pipeline end to end runs as pods run it: tests/pipelines/test_pods.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from kfp import local

from kfp_bench.sandbox.kfp_server import start_kfp_server
from tests.components.conftest import leftovers
from tests.venv_image import pipeline


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
    before = set(root.iterdir())
    with pytest.raises(RuntimeError, match="check-params"):
        pipeline()(kfp_host=kfp_api.url, num_runs=0, benchmark_id="meta-bad", run_load=False)
    out = capfd.readouterr().out
    assert "pipeline parameter num_runs=0: give a whole number from 1 to 1000" in out
    assert "benchmark ended FAILED" in out
    # The sweep ran, by this run's own id (the prefix and its run's hash), and found nothing: a
    # refused benchmark creates nothing and takes no lease.
    assert re.search(r"benchmark meta-bad-[0-9a-f]{10}: deleted 0 runs, 0 experiments", out)
    assert "lease kfp-bench-lease-meta-bad: none held" in out
    assert leftovers(kfp_api.url, "meta-bad") == 0
    # kfp.local keeps a folder per task that wrote an output, under one per run: the exit
    # handler's cleanup did, and no step after the refusal (stage-manifest would be the first).
    (run,) = set(root.iterdir()) - before
    assert sorted(p.name for p in run.iterdir()) == ["cleanup"]


@pytest.mark.slow
def test_two_runs_into_one_results_uri_give_the_second_a_verdict(root, model_server, tmp_path):
    """A nightly schedule in miniature (issue 18): the second run's report step finds the first
    run archived at results_uri and publishes the trend and the verdict in its metrics; each
    run's check step pushes its figures to a real Pushgateway (when Debian's is installed)."""
    import contextlib
    import json

    from kfp_bench import history as hist
    from kfp_bench.history import regress
    from tests import pushgateway as pg

    uri = str(tmp_path / "history")
    with contextlib.ExitStack() as stack:
        gateway = stack.enter_context(pg.pushgateway(tmp_path)) if pg.binary() else ""
        for n in (1, 2):
            _nightly(n, model_server, uri, gateway)
        pushed = pg.series(gateway) if gateway else {}
    store = hist.open_store(uri)
    first, second = hist.entries(store)
    runs = [json.loads(store.read(e.key, "metrics.json")) for e in (first, second)]
    for n, metrics in zip((1, 2), runs, strict=True):  # through check_params and report's records
        labels = {"job": "kfp_bench", "instance": "", "benchmark": f"meta-history-{n}"}
        labels |= {"target": model_server.v1_predict_url, "part": "main"}
        if gateway:
            assert pushed[("kfp_bench_load_requests_per_second", frozenset(labels.items()))] > 0
            # two 1 s loads of one server may differ enough for a verdict: passed is its inverse
            passed = 1 - metrics.get("regression", 0)
            assert pushed[("kfp_bench_passed", frozenset(labels.items()))] == passed
    assert "regression" not in runs[0]
    # The published verdict is the one of these two archived results, the first the baseline.
    fetched = [hist.fetch(store, e.key, tmp_path / str(n)) for n, e in enumerate((first, second))]
    want = regress.compare(fetched[1], fetched[:1], names=[first.key]).metrics()
    got = json.loads(store.read(second.key, "metrics.json"))
    assert {k: got[k] for k in want} == want and want["baseline_results"] == 1
    published = [
        doc["artifacts"]["metrics"]["artifacts"][0]["metadata"]
        for doc in (json.loads(p.read_text()) for p in Path(root).rglob("executor_output.json"))
        if "metrics" in doc.get("artifacts", {})
    ]
    assert [m.get("baseline_results") for m in published if "baseline_results" in m] == [1]


def _nightly(n: int, model_server, uri: str, gateway: str) -> None:
    pipeline()(
        run_benchmark=False,
        inference_url=model_server.v1_predict_url,
        duration_sec=1.0,
        concurrency=1,
        benchmark_id=f"meta-history-{n}",
        results_uri=uri,
        baseline="last:5",
        pushgateway_url=gateway,
    )
