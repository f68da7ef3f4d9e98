"""The rate sweep and its knee, run for real against the sandbox KServe model server (iris) and the
fault server; the knee rule itself is also checked on hand-made steps."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace

import pytest

from kfp_bench.errors import ConfigError, EngineError
from kfp_bench.load.options import LoadOptions, parse_rates
from kfp_bench.load.sweep import SweepStep, find_knee, run_sweep, step_through
from kfp_bench.load.workers import run_load
from kfp_bench.report import sweep as sweep_text
from kfp_bench.stats.load import CPU_BOUND
from kfp_bench.steps.load_params import DEFAULT_PAYLOAD
from tests.conftest import run_cli

SWEEP_KEYS = {"rate", "rps", "mean_ms", "p50_ms", "p95_ms", "p99_ms", "success_ratio", "knee"}


def _post(url: str) -> LoadOptions:
    return LoadOptions(
        url=url, method="POST", body=DEFAULT_PAYLOAD.encode(), content_type="application/json"
    )


def _step(rate: float, p99: float, success: float = 1.0) -> SweepStep:
    return SweepStep(rate, rate, int(rate), p99 / 2, p99 / 2, p99, p99, success, 0.0, 1.0)


def test_a_sweep_against_the_model_server_gives_kserves_table_and_finds_the_knee(model_server):
    # 10 req/s is easy for iris on loopback. The second rate is four times what one kserve worker
    # answers on this machine, measured first with closed-loop clients (400-500 req/s on one
    # machine, 1,900 on another; past the per-process cap there): the backlog then drives p99 up
    # by orders on any machine.
    base = _post(model_server.v1_predict_url)
    answered = run_load(replace(base, concurrency=8, duration=1.0)).summary().rps
    over = max(1500, 500 * round(4 * answered / 500))
    seen = []
    result = run_sweep(replace(base, i_know=True), [10, over], 1.5, on_step=seen.append)
    low, high = result.steps
    assert [s.rate for s in seen] == [10, over]
    assert low.success_ratio == 1.0 and low.requests >= 14
    assert low.p50_ms <= low.p95_ms <= low.p99_ms
    assert high.p99_ms > 3 * low.p99_ms
    assert result.knee.level == over and "p99" in result.knee.reason
    rows = result.rows()
    assert all(SWEEP_KEYS <= set(r) for r in rows)
    assert [r["knee"] for r in rows] == [False, True]
    assert 0 < rows[0]["client_busiest"] < CPU_BOUND  # 10 req/s keeps no core busy
    assert json.loads(json.dumps(result.as_dict()))["sweep_knee"]["rate"] == over


def test_failing_responses_put_the_knee_at_the_first_rate(fault_server):
    result = run_sweep(_post(fault_server.url + "/?status=503"), [5, 10], 0.5)
    assert result.steps[0].success_ratio == 0.0
    assert result.knee.level == 5 and "success" in result.knee.reason


def test_the_knee_rule():
    assert find_knee([_step(5, 10), _step(50, 29), _step(500, 31)]).level == 500
    assert find_knee([_step(5, 10), _step(50, 12, success=0.98)]).level == 50
    assert find_knee([_step(5, 10), _step(50, 25)], factor=2).level == 50
    none = find_knee([_step(5, 10), _step(50, 11)])
    assert none.level is None and none.baseline_ms == 10


def test_the_table_names_the_step_where_the_load_generator_was_cpu_bound():
    busy = ((5, 0.02), (50, 0.5), (500, 0.97))
    steps = [replace(_step(rate, 10), client_busiest=b) for rate, b in busy]
    out = io.StringIO()
    sweep_text.write_text([s.row() for s in steps], find_knee(steps).as_dict(), out)
    text = out.getvalue()
    assert "client CPU" in text.splitlines()[0] and "97%" in text.splitlines()[3]
    assert "CPU-bound from 500 req/s on (a process at 97% of a core)" in text
    out = io.StringIO()
    sweep_text.write_text([s.row() for s in steps[:2]], None, out)
    assert "CPU-bound" not in out.getvalue()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "no rates"),
        ("5,x", "not a list of numbers"),
        ("50,5", "increasing order"),
        ("0,5", "positive number"),
    ],
)
def test_bad_rates_are_refused_before_sending(text, words):
    with pytest.raises(ConfigError, match=words):
        parse_rates(text)


def test_bad_step_settings_are_refused_before_sending():
    with pytest.raises(ConfigError, match="-z 0"):
        run_sweep(_post("http://127.0.0.1:9/"), [5], 0)
    with pytest.raises(ConfigError, match="--knee-factor"):
        run_sweep(_post("http://127.0.0.1:9/"), [5], 1, factor=1)


def test_cli_sweep_prints_the_table_and_writes_json(model_server, tmp_path):
    out = tmp_path / "sweep.json"
    args = ("sweep", "--rates", "5,20", "-z", "1s", "--v1-shape", "1,4", "--json-out", str(out))
    p = run_cli(*args, model_server.v1_predict_url)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^  20 req/s: \d+ requests, .*, client CPU \d+%$", p.stderr, re.M)
    header = p.stdout.splitlines()[0].split()
    assert header[:2] == ["QPS", "achieved"] and "p99" in header and "success" in header
    doc = json.loads(out.read_text())
    assert [r["rate"] for r in doc["sweep"]] == [5, 20]
    assert "rate" in doc["sweep_knee"]


def test_cli_sweep_bad_rates_exit_2_with_one_line():
    p = run_cli("sweep", "--rates", "50,5", "http://127.0.0.1:9/")
    assert p.returncode == 2
    assert p.stderr.strip() == (
        "kfp-bench: --rates 50,5: give the rates in increasing order (the first is the low-load "
        "baseline of the knee)"
    )


def test_the_shared_driver_keeps_the_steps_before_an_engine_error_and_stops_when_interrupted():
    """``step_through`` drives both sweeps: an engine error names the step and carries the result
    of the steps before it; an interrupted step is kept and is the last."""

    class Stats:
        def __init__(self, flags=()):
            self.flags = set(flags)

    kept = []

    def run(level):
        if level == 3:
            raise EngineError("a bug", Stats({"engine-error"}))
        return Stats({"interrupted"} if level == 4 else ())

    plans = [(f"level {n}", n) for n in (1, 2, 3)]
    with pytest.raises(EngineError, match=r"^the sweep's step at level 3: a bug; the 2 step") as e:
        step_through(plans, run, lambda lv, st: kept.append(lv), lambda: list(kept))
    assert e.value.partial == [1, 2] and e.value.stats.flags == {"engine-error"}
    kept.clear()
    step_through([("a", 1), ("b", 4), ("c", 5)], run, lambda lv, st: kept.append(lv), list)
    assert kept == [1, 4]


def test_a_steps_flags_follow_its_row_and_the_knee_line():
    rows = [
        _step(5, 10).row(),
        {**replace(_step(50, 40), warnings=("late-start",)).row(knee=True), "failures": ["x"]},
    ]
    out = io.StringIO()
    sweep_text.write_text(rows, find_knee([_step(5, 10), _step(50, 40)]).as_dict(), out)
    lines = out.getvalue().splitlines()
    assert not lines[1].endswith(")") and lines[2].endswith("< knee  (x, late-start)")
    assert lines[-1].startswith("Knee at 50 req/s: p99 ")
    assert lines[-1].endswith("(that step's flags: x, late-start).")
    assert rows[0].get("warnings") is None and rows[1]["warnings"] == ["late-start"]


def test_a_saved_sweep_reports_every_step(model_server, tmp_path):
    out = tmp_path / "sweep.json"
    args = ("sweep", "--rates", "5,20", "-z", "1s", "--v1-shape", "1,4", "--json-out", str(out))
    assert run_cli(*args, model_server.v1_predict_url).returncode == 0
    p = run_cli("report", str(out))
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].split()[:2] == ["QPS", "achieved"]
    assert p.stdout.count("\nSummary:\n") == 2  # hey's layout, a step each
    assert p.stdout.index("Step at 5 req/s:") < p.stdout.index("Step at 20 req/s:")
    p = run_cli("merge", str(out), "-o", str(tmp_path / "m.json"))
    assert p.returncode != 0 and "a rate sweep: its steps ran at different levels" in p.stderr
