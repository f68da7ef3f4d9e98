"""Cost (kfp_bench.stats.cost, report/cost.py): the arithmetic over the measured window, unknown
where the count is, and --cost-per-hour through ``load``, ``llm`` and ``report`` against the
real local servers (text, saved results, the bundles' Markdown, HTML and metrics, gates)."""

from __future__ import annotations

import json

import pytest

from kfp_bench import gates
from kfp_bench.cli import main
from kfp_bench.report.bundle import write_bundle
from kfp_bench.results import read_results
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.stats import store
from kfp_bench.stats.cost import Cost, is_price, llm_metrics, load_metrics
from kfp_bench.steps import llm_steps
from kfp_bench.steps.params import BenchParams
from tests.synthetic import make_results


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=20, token_gap_ms=2, max_tokens=4) as server:
        yield server


def test_the_window_s_price_over_what_it_served():
    """2.4/hour for 90 s is 0.06; 300 requests: 0.2 per 1000; 1.2M tokens: 0.05 per million."""
    c = Cost(per_hour=2.4, window_s=90.0, requests=300, output_tokens=1_200_000)
    assert c.total == pytest.approx(0.06)
    assert c.per_thousand_requests == pytest.approx(0.2)
    assert c.per_million_output_tokens == pytest.approx(0.05)
    assert llm_metrics(c) == {
        "cost_per_million_output_tokens": pytest.approx(0.05),
        "cost_per_thousand_requests": pytest.approx(0.2),
    }


def test_unknown_or_zero_counts_give_an_unknown_cost_never_zero():
    unknown = Cost(per_hour=2.4, window_s=90.0, requests=0, output_tokens=None)
    assert unknown.per_million_output_tokens is None and unknown.per_thousand_requests is None
    assert Cost(2.4, 90.0, 5, 0).per_million_output_tokens is None  # nothing served
    assert llm_metrics(unknown) == dict.fromkeys(llm_metrics(unknown))  # null in metrics.json
    assert load_metrics(unknown) == {} and llm_metrics(None) == {} and load_metrics(None) == {}


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), True, "2"])
def test_a_bad_price_is_refused(value):
    assert not is_price(value)


def test_the_gates_accept_the_cost_names():
    for name, kind in (
        ("cost_per_million_output_tokens", "llm"),
        ("llm_cost_per_thousand_requests", "llm"),
        ("load_cost_per_thousand_requests", "load"),
    ):
        assert gates.kind_of(name)[1] == kind


def test_load_prints_saves_and_gates_its_cost(fault_server, tmp_path, capsys):
    out = tmp_path / "r.json"
    url = fault_server.url + "/?delay_ms=1"
    args = ["load", "-n", "40", "-c", "2", url, "--json-out", str(out), "--cost-per-hour", "3.6"]
    assert main([*args, "--threshold", "load_cost_per_thousand_requests<1000"]) == 0
    text = capsys.readouterr().out
    stats = store.load(out)
    assert stats.options["cost_per_hour"] == 3.6
    want = 3.6 * stats.summary().duration_s / 3600 / 40 * 1000
    assert "Cost per 1000 requests:\t" in text and "(40 successful requests)" in text
    line = next(x for x in text.splitlines() if "Cost per 1000 requests" in x)
    assert float(line.split("\t")[1].split()[0]) == pytest.approx(want, rel=1e-5)
    # report of the saved file: its own price, or the one given over it
    assert main(["report", str(out), "--cost-per-hour", "7.2"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "Cost per 1000" in x)
    assert float(line.split("\t")[1].split()[0]) == pytest.approx(2 * want, rel=1e-5)


def test_a_load_without_a_price_shows_no_cost(fault_server, capsys):
    assert main(["load", "-n", "10", "-c", "2", fault_server.url]) == 0
    assert "Cost" not in capsys.readouterr().out


@pytest.mark.parametrize("price", ["-1", "nan", "free"])
def test_a_bad_flag_is_one_line_and_exit_2(fault_server, price, capsys):
    sent = fault_server.stats()["requests"]
    assert main(["load", "-n", "10", fault_server.url, "--cost-per-hour", price]) == 2
    err = capsys.readouterr().err
    assert f"--cost-per-hour: {price!r}: give the serving nodes' or GPUs' price per hour" in err
    assert len(err.splitlines()) == 1 and fault_server.stats()["requests"] == sent


def test_llm_cost_per_million_output_tokens(llm, tmp_path, capsys):
    """The llm-server's streams carry usage: 8 requests of 4 tokens, 32 output tokens."""
    out = tmp_path / "llm.json"
    code = main(
        [
            "llm", llm.url + "/openai", "-n", "8", "-c", "2", "--output-tokens", "fixed:4",
            "--cost-per-hour", "36", "--json-out", str(out),
            "--threshold", "llm_cost_per_million_output_tokens>0",
        ]
    )  # fmt: skip
    text = capsys.readouterr().out
    assert code == 0, text
    s = store.load(out).summary()
    assert s.output_tokens == 32
    per_m = 36 * s.measured_s / 3600 / 32 * 1e6
    line = next(x for x in text.splitlines() if "Cost per 1M output tokens" in x)
    assert float(line.split("\t")[1].split()[0]) == pytest.approx(per_m, rel=1e-5)
    assert "(32 output tokens)" in line
    # the bundle: metrics.json by the stable names, the Markdown's Cost table
    assert main(["report", str(out), "--out", str(tmp_path / "rep")]) == 0
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert metrics["cost_per_million_output_tokens"] == pytest.approx(per_m, rel=1e-5)
    assert metrics["cost_per_thousand_requests"] == pytest.approx(per_m * 32 / 8 / 1000, rel=1e-5)
    assert "## Cost" in (tmp_path / "rep" / "summary.md").read_text()


def test_a_results_directory_with_a_price_reports_its_cost(tmp_path):
    """summary.json's cost_per_hour (the pipeline's parameter, written by aggregate)."""
    res = read_results(make_results(tmp_path / "r", extra={"cost_per_hour": 1.8}))
    files = write_bundle(res, tmp_path / "out")
    metrics = json.loads(files["metrics.json"].read_text())
    load = res.summary["load"]
    ok = round(load["requests"] * load["success_ratio"])
    want = 1.8 * load["duration_s"] / 3600 / ok * 1000
    assert metrics["load_cost_per_thousand_requests"] == pytest.approx(want, rel=1e-5)
    assert "Cost per 1000 requests" in files["summary.md"].read_text()
    assert "Cost per 1000 requests" in files["report.html"].read_text()
    plain = read_results(make_results(tmp_path / "p"))
    files = write_bundle(plain, tmp_path / "out2")
    assert "load_cost_per_thousand_requests" not in json.loads(files["metrics.json"].read_text())


def test_the_pipelines_llm_report_prices_its_window(llm, tmp_path):
    """cost_per_hour, the pipeline's parameter, reaches report_llm's metrics and Markdown as
    --cost-per-hour does the command's."""
    p = BenchParams(
        run_benchmark=False, run_load=False, run_llm=True, llm_url=llm.url + "/openai",
        llm_model="kfp-bench-llm", llm_concurrency=2, llm_duration_sec=1.0,
        llm_output_tokens="fixed:4", cost_per_hour=36.0,
    )  # fmt: skip
    load = tmp_path / "w0.json"
    llm_steps.llm_load(p, 0, str(load))
    out, html, md = tmp_path / "llm", tmp_path / "r.html", tmp_path / "s.md"
    metrics = llm_steps.report_llm(p, [str(load)], str(out), str(html), str(md))
    s = store.load(out / llm_steps.LLM_RESULT).summary()
    per_m = 36 * s.measured_s / 3600 / s.output_tokens * 1e6
    assert metrics["cost_per_million_output_tokens"] == pytest.approx(per_m, rel=1e-5)
    assert "## Cost" in md.read_text()
