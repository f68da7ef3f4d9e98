"""Every command's gates (``--threshold``, ``report --fail-on-regression``) against the real local
servers: a gate that holds (exit 0), one that breaks (exit 3, the verdict in the first lines,
with the figure and the bound), and one on a figure the command does not measure (exit 2, one
line, nothing sent)."""

from __future__ import annotations

import json

import pytest

from kfp_bench.cli import main
from kfp_bench.results import write_results
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.stats import store
from tests.kfp.conftest import ADD, kfp_server  # noqa: F401 - the session's local KFP API


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=20, token_gap_ms=2, max_tokens=4) as server:
        yield server


def _sent(fault_server) -> int:
    return fault_server.stats()["requests"]


def _first(text: str) -> str:
    return text.splitlines()[0]


def test_load_gates(fault_server, capsys):
    url = fault_server.url + "/?delay_ms=2"
    assert main(["load", "-n", "20", "-c", "2", url, "--threshold", "load_success_ratio>=0.99",
                 "--threshold", "load_p99_ms<60000"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert _first(out) == "Gates: all held" and "held load_p99_ms<60000: load_p99_ms is" in out
    assert out.index("Gates: all held") < out.index("Summary:")
    assert main(["load", "-n", "20", "-c", "2", url, "--threshold", "load_p99_ms<0.5"]) == 3
    out = capsys.readouterr().out
    assert _first(out) == "GATES: 1 of 1 broken"
    assert "  BROKEN load_p99_ms<0.5: load_p99_ms is " in out and ", the bound < 0.5" in out
    before = _sent(fault_server)
    assert main(["load", "-n", "20", "-c", "2", url, "--threshold", "llm_ttft_p99_ms<500"]) == 2
    err = capsys.readouterr().err
    assert "--threshold 'llm_ttft_p99_ms<500': ttft_p99_ms is a figure of the LLM load" in err
    assert _sent(fault_server) == before  # refused before anything was sent


def test_a_figure_that_was_not_measured_breaks_its_gate_and_the_failure_exits_first(
    fault_server, capsys
):
    """Every request reset: no latency stands, so load_p99_ms<50 is not a pass; the load's own
    failure (no-response, exit 1) comes before the gate's code (kfp_bench.outcome)."""
    url = fault_server.url + "/?reset=1"
    assert main(["load", "-n", "6", "-c", "2", url, "--threshold", "load_p99_ms<50"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("GATES: 1 of 1 broken\n  BROKEN load_p99_ms<50: load_p99_ms was not ")


def test_sweep_gates(fault_server, capsys):
    args = ["sweep", fault_server.url, "--rates", "20,40", "-z", "0.5s", "-d", "{}"]
    assert main([*args, "--threshold", "sweep_max_rps>1"]) == 0
    assert _first(capsys.readouterr().out) == "Gates: all held"
    assert main([*args, "--threshold", "sweep_max_rps>=100000"]) == 3
    out = capsys.readouterr().out
    assert _first(out) == "GATES: 1 of 1 broken" and "BROKEN sweep_max_rps>=100000: " in out
    assert main([*args, "--threshold", "load_p99_ms<50"]) == 2
    assert "load_p99_ms is a figure of the inference load" in capsys.readouterr().err


def test_llm_gates(llm, capsys):
    args = ["llm", llm.url + "/openai", "-n", "6", "-c", "2", "--output-tokens", "fixed:3"]
    assert main([*args, "--threshold", "llm_goodput_ratio>=0.95,ttft_p99_ms<60000"]) == 0
    out = capsys.readouterr().out
    assert _first(out) == "Gates: all held" and "goodput_ratio is 1, the bound >= 0.95" in out
    assert main([*args, "--threshold", "llm_ttft_p50_ms<0.01"]) == 3
    out = capsys.readouterr().out
    assert _first(out) == "GATES: 1 of 1 broken" and "BROKEN llm_ttft_p50_ms<0.01: ttft_p50" in out
    assert main([*args, "--threshold", "runs_success_ratio>=0.99"]) == 2
    assert "figure of the KFP runs benchmark" in capsys.readouterr().err


def test_runs_gates(kfp_server, tmp_path, capsys):  # noqa: F811 - the fixture imported above
    args = ["runs", "--host", kfp_server.url, "--pipeline", str(ADD), "--num-runs", "2",
            "--poll-interval", "0.2", "--params", '{"a": 1, "b": 2}']  # fmt: skip
    ok = ["--threshold", "runs_success_ratio>=0.99,api_create_run_count>=2"]
    assert main([*args, "--out", str(tmp_path / "a"), *ok]) == 0
    assert _first(capsys.readouterr().out) == "Gates: all held"
    bad = ["--threshold", "run_duration_p50_s<0.001"]
    assert main([*args, "--out", str(tmp_path / "b"), *bad]) == 3
    out = capsys.readouterr().out
    assert _first(out) == "GATES: 1 of 1 broken" and "run_duration_p50_s is " in out
    assert main([*args, "--out", str(tmp_path / "c"), "--threshold", "load_rps>1"]) == 2
    assert not (tmp_path / "c").exists()  # refused before any run was created


@pytest.fixture(scope="module")
def two_loads(fault_server, tmp_path_factory):
    """Two results directories of a load, the second 20 ms slower, and a load result file."""
    d = tmp_path_factory.mktemp("gated")
    for name, delay in (("fast", 1), ("slow", 21)):
        url = f"{fault_server.url}/?delay_ms={delay}"
        assert (
            main(["load", "-n", "60", "-c", "2", url, "--json-out", str(d / f"{name}.json")]) == 0
        )
        write_results(d / name, load=store.load(d / f"{name}.json"))
    return d


def test_report_gates_on_a_results_directory(two_loads, capsys):
    slow = two_loads / "slow"
    assert main(["report", str(slow), "--threshold", "load_p50_ms>=20"]) == 0
    assert _first(capsys.readouterr().out) == f"{slow}: Gates: all held"
    assert main(["report", str(slow), "--threshold", "load_p50_ms<10,load_rps>0"]) == 3
    out = capsys.readouterr().out
    assert _first(out) == f"{slow}: GATES: 1 of 2 broken"
    assert f"{slow}: BROKEN load_p50_ms<10: load_p50_ms is " in out
    md = (slow / "report" / "summary.md").read_text()
    assert md.startswith(
        "# kfp-bench report\n\n> **GATES: 1 of 2 broken**\n>\n> - BROKEN load_p50_ms"
    )
    html = (slow / "report" / "report.html").read_text()
    assert '<div class="verdict bad" id="gates">GATES: 1 of 2 broken' in html
    metrics = json.loads((slow / "report" / "metrics.json").read_text())
    assert (metrics["gates_checked"], metrics["gates_broken"]) == (2, 1)
    doc = json.loads((slow / "report" / "gates.json").read_text())
    assert [g["state"] for g in doc["gates"]] == ["broken", "held"]
    assert main(["report", str(slow), "--threshold", "runs_success_ratio>=1"]) == 2
    err = capsys.readouterr().err
    assert f"--threshold (for {slow}) 'runs_success_ratio>=1': runs_success_ratio is a " in err


def test_report_gates_on_a_load_result_file(two_loads, capsys):
    path = two_loads / "fast.json"
    assert main(["report", str(path), "--threshold", "load_requests>=60"]) == 0
    assert _first(capsys.readouterr().out) == f"{path}: Gates: all held"
    assert main(["report", str(path), "--threshold", "load_requests>60"]) == 3
    out = capsys.readouterr().out
    assert f"{path}: BROKEN load_requests>60: load_requests is 60, the bound > 60" in out
    assert main(["report", str(path), "--threshold", "goodput_ratio>=1"]) == 2


def test_report_fails_on_a_regression_after_writing_the_report(two_loads, capsys):
    fast, slow = two_loads / "fast", two_loads / "slow"
    assert main(["report", str(fast), "--baseline", str(slow), "--fail-on-regression"]) == 0
    assert _first(capsys.readouterr().out) == f"{fast}: Gates: all held"
    assert main(["report", str(slow), "--baseline", str(fast), "--fail-on-regression"]) == 3
    out = capsys.readouterr().out
    assert _first(out) == f"{slow}: GATES: 1 of 1 broken"
    assert f"{slow}: BROKEN fail_on_regression: a regression was found" in out
    metrics = json.loads((slow / "report" / "metrics.json").read_text())
    assert metrics["regression"] == 1 and metrics["gates_broken"] == 1
    assert json.loads((slow / "report" / "gates.json").read_text())["regression"] == "broken"
    assert main(["report", str(slow), "--fail-on-regression"]) == 2
    assert "--fail-on-regression: give --baseline" in capsys.readouterr().err
