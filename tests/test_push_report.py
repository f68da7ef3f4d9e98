"""The push from where it is made: ``kfp-bench report --pushgateway-url`` on a saved results
directory, and the pipeline's check step (``outcome.check_outcome``) on the records its report step
wrote; each read back from a real Pushgateway's query API (tests/pushgateway.py)."""

from __future__ import annotations

import json

import pytest

from kfp_bench import cli
from kfp_bench.errors import BenchError, ConfigError, PushError
from kfp_bench.push import LAST_SUCCESS
from kfp_bench.sandbox.process import free_port
from kfp_bench.stats import store
from kfp_bench.stats.load import LoadStats
from kfp_bench.steps import ids, outcome, publish
from kfp_bench.steps.ids import benchmark_id_for
from kfp_bench.steps.load_params import DEFAULT_INFERENCE_URL
from kfp_bench.steps.params import BenchParams
from tests.conftest import run_cli
from tests.pushgateway import binary, pushgateway, series
from tests.synthetic import make_results

pytestmark = pytest.mark.skipif(binary() is None, reason="Debian prometheus-pushgateway missing")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    with pushgateway(tmp_path_factory.mktemp("pushgateway")) as url:
        yield url


def _group(url: str, job: str = "kfp_bench", **labels) -> dict[str, float]:
    """The figures of the one group whose labels include ``labels``, by name."""
    found = {}
    for (name, got), value in series(url).items():
        got = dict(got)
        if got["job"] == job and all(got.get(k) == v for k, v in labels.items()):
            found[name] = value
            assert got == {**got, **labels}
    return found


def test_report_pushes_the_figures_of_a_results_dir(gateway, tmp_path):
    night = make_results(tmp_path / "night")
    p = run_cli(
        "report", str(night), "--out", str(tmp_path / "rep"), "--pushgateway-url", gateway,
        "--push-label", "benchmark=cli", "--push-label", "target=kfp.test",
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert f"pushed 7 figures to {gateway}/metrics/job/kfp_bench/benchmark/cli/" in p.stdout
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    got = _group(gateway, benchmark="cli", target="kfp.test", part="main")
    assert got["kfp_bench_load_latency_p99_seconds"] == pytest.approx(metrics["load_p99_ms"] / 1e3)
    assert got["kfp_bench_load_requests_per_second"] == pytest.approx(metrics["load_rps"])
    assert got["kfp_bench_runs_success_ratio"] == pytest.approx(metrics["runs_success_ratio"])
    assert got["kfp_bench_run_duration_p99_seconds"] == metrics["run_duration_p99_s"]
    assert got["kfp_bench_failures"] == 0 and got["kfp_bench_passed"] == 1
    assert _group(gateway, "kfp_bench_last_success", benchmark="cli")[LAST_SUCCESS] > 0


def test_report_with_an_unreachable_pushgateway_writes_the_report_and_exits_5(tmp_path, capsys):
    night = make_results(tmp_path / "night", runs=3, requests=50)
    url = f"http://bench:s3cret@127.0.0.1:{free_port()}"
    assert cli.main(["report", str(night), "--pushgateway-url", url]) == 5
    captured = capsys.readouterr()
    assert (night / "report" / "metrics.json").exists() and "wrote" in captured.out
    assert "could not be reached" in captured.err and "s3cret" not in captured.err + captured.out
    assert "/metrics/job/kfp_bench/benchmark/kfp-bench/part/main" in captured.err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--push-label", "benchmark=x"], "--push-label: takes effect only beside"),
        (["--pushgateway-url", "pushgw:9091"], "--pushgateway-url 'pushgw:9091': give the"),
        (["--pushgateway-url", "http://h:1", "--push-label", "job=x"], "--push-label job=..."),
        (["--pushgateway-url", "http://h:1", "--push-label", "x"], "give NAME=VALUE"),
        (["SECOND", "--pushgateway-url", "http://h:1"], "one run's figures are pushed at a time"),
    ],
)
def test_bad_push_input_is_refused_before_the_report(tmp_path, capsys, extra, message):
    night = make_results(tmp_path / "night", runs=3, requests=50)
    extra = [str(night) if e == "SECOND" else e for e in extra]
    assert cli.main(["report", str(night), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (night / "report").exists()


def _pipeline_records(tmp_path, p: BenchParams, workers: int) -> str:
    """What the pipeline's report step leaves for check_outcome: aggregate's results (with
    ``workers`` of p.load_workers load results; fewer: flagged workers-lost) and the report's
    records (results and metrics.json), through the steps' own functions."""
    tmp_path.mkdir(exist_ok=True)
    loads = []
    for i in range(workers):
        stats = LoadStats(started_at=1_790_000_000.0)
        stats.requests = stats.ok = 10
        stats.status_codes[200] = 10
        stats.close(1.0)
        loads.append(str(store.save(stats, tmp_path / f"w{i}.json")))
    for name in ("sweep", "replicas"):
        (tmp_path / f"{name}.json").write_text(json.dumps({"skipped": True}))
    (tmp_path / "runs").mkdir()
    results, records = tmp_path / "results", tmp_path / "records"
    publish.aggregate(
        p, str(tmp_path / "runs"), loads, str(tmp_path / "sweep.json"),
        str(tmp_path / "replicas.json"), str(results),
    )  # fmt: skip
    publish.report(str(results), str(records), str(tmp_path / "r.html"), str(tmp_path / "r.md"))
    return str(records)


def test_the_check_step_pushes_then_fails_a_flagged_run(gateway, tmp_path):
    p = BenchParams(run_benchmark=False, load_workers=2, benchmark_id="nightly-gpu")
    p = BenchParams(**{**p.as_dict(), "pushgateway_url": gateway})
    # As check_params hands the parameters on: the run's own benchmark id.
    params = {**p.as_dict(), "benchmark_id": benchmark_id_for(p.benchmark_id, "run-1")}
    labels = {"benchmark": "nightly-gpu", "target": DEFAULT_INFERENCE_URL, "part": "main"}
    done = outcome.check_outcome(
        outcome.outcome_of(_pipeline_records(tmp_path / "a", p, 2)), params
    )
    assert done.startswith("no failure flag, no gate; pushed")
    got = _group(gateway, **labels)
    assert got["kfp_bench_load_requests_per_second"] == 20 and got["kfp_bench_passed"] == 1
    first = _group(gateway, "kfp_bench_last_success", **labels)[LAST_SUCCESS]
    # The next night loses a load worker: its figures are pushed, the run fails, and the last
    # success stays the first night's.
    params["benchmark_id"] = benchmark_id_for(p.benchmark_id, "run-2")
    with pytest.raises(BenchError, match="flagged workers-lost"):
        outcome.check_outcome(outcome.outcome_of(_pipeline_records(tmp_path / "b", p, 1)), params)
    got = _group(gateway, **labels)
    assert got["kfp_bench_failures"] == 1 and got["kfp_bench_passed"] == 0
    assert _group(gateway, "kfp_bench_last_success", **labels)[LAST_SUCCESS] == first


def test_with_a_history_the_one_check_pushes(gateway, tmp_path):
    """With results_uri the check takes report_history's outcome (dsl.OneOf) and pushes it: one
    check, one PUT to the group."""
    p = BenchParams(run_benchmark=False, load_workers=1, benchmark_id="hist")
    p = BenchParams(**{**p.as_dict(), "pushgateway_url": gateway, "results_uri": "s3://bkt/p"})
    params = {**p.as_dict(), "benchmark_id": benchmark_id_for(p.benchmark_id, "run-1")}
    labels = {"benchmark": "hist", "target": DEFAULT_INFERENCE_URL, "part": "main"}
    records = _pipeline_records(tmp_path, p, 1)
    assert _group(gateway, **labels) == {}
    assert "pushed" in outcome.check_outcome(outcome.outcome_of(records), params)
    assert _group(gateway, **labels)["kfp_bench_passed"] == 1


def test_the_check_step_fails_a_passed_run_whose_push_failed(tmp_path, capsys):
    p = BenchParams(run_benchmark=False, load_workers=1)
    p = BenchParams(**{**p.as_dict(), "pushgateway_url": f"http://127.0.0.1:{free_port()}"})
    records = _pipeline_records(tmp_path, p, 1)
    with pytest.raises(PushError, match="the benchmark passed and its report is published, but"):
        outcome.check_outcome(
            outcome.outcome_of(records), {**p.as_dict(), "benchmark_id": "ab12cd34-run"}
        )
    assert "push failed: Pushgateway http://127.0.0.1:" in capsys.readouterr().out
    # Without a pushgateway_url the step is what it was: no push.
    p = BenchParams(run_benchmark=False, load_workers=1)
    assert outcome.check_outcome(outcome.outcome_of(records), p.as_dict()) == (
        "no failure flag, no gate"
    )


@pytest.mark.parametrize(
    "bid, label",
    [
        (benchmark_id_for("nightly", "job"), "nightly"),
        (
            benchmark_id_for("a-long-benchmark-name-of-over-29-chars", "j"),
            "a-long-benchmark-name-of-over",
        ),
        (benchmark_id_for("", "0f3c9a52-6d0e-4c1b-9a7e-2b8c1d4e5f60"), "kfp-bench"),
    ],
)
def test_the_benchmark_label_is_the_id_as_given(bid, label):
    assert ids.benchmark_label(bid) == label


def test_a_bad_pushgateway_url_parameter_is_refused_without_its_password():
    p = BenchParams(run_benchmark=False, pushgateway_url="https://u:hunter2@pushgw:x")
    with pytest.raises(ConfigError, match="pipeline parameter pushgateway_url='https://pushgw:x'"):
        p.check(fetch=False)
