"""Gates (kfp_bench.gates): the syntax, the catalogue held to the names the reports really publish,
verdicts (held, broken, not measured), and the pipeline parameters refused before anything
starts."""

from __future__ import annotations

import json

import pytest

from kfp_bench import gates
from kfp_bench.errors import BenchError, ConfigError
from kfp_bench.report.metrics import collect
from kfp_bench.report.tables import build
from kfp_bench.results import read_results
from kfp_bench.stats.llm import metric_values
from kfp_bench.steps import outcome, publish
from kfp_bench.steps.params import BenchParams
from tests.report.llm_results import merged
from tests.synthetic import REPLICAS, SWEEP, make_results


def test_every_published_name_is_a_gates_figure_of_the_right_part(tmp_path):
    """The catalogue is written out in gates.py (the check step imports no report code): held
    to the metrics a full results directory and an LLM result really publish."""
    res = make_results(tmp_path / "r", extra={"sweep": SWEEP, "replicas": REPLICAS})
    names = set(collect(build(read_results(res))))
    names -= {"failures"} | {n for n in names if n.startswith("flag_")}
    assert names and all(gates.kind_of(n) is not None for n in names), [
        n for n in names if gates.kind_of(n) is None
    ]
    assert {gates.kind_of(n)[1] for n in names} == {"runs", "load", "sweep", "replicas"}
    llm = metric_values(merged().summary())
    assert {gates.kind_of(n) for n in llm} == {(n, "llm") for n in llm}
    assert {gates.kind_of(f"llm_{n}") for n in llm} == {(n, "llm") for n in llm}


@pytest.mark.parametrize(
    "text, said",
    [
        ("load_p99<50", "no metric load_p99; did you mean load_p99_ms?"),
        ("load_p99_ms=50", "give an operator <, <=, > or >="),
        ("load_p99_ms 50", "give an operator"),
        ("load_p99_ms<fast", "the bound 'fast' is not a number"),
        ("load_p99_ms<nan", "the bound 'nan' is not a number"),
        ("<50", "give NAME OP NUMBER"),
        ("flag_timeout<1", "a failure flag already fails the benchmark"),
        ("gates_broken<1", "not a gate's figure"),
    ],
)
def test_a_bad_gate_is_named_with_its_fix(text, said):
    with pytest.raises(ConfigError) as err:
        gates.parse(["runs_success_ratio>=0.99", f"load_rps>1,{text}"], "--threshold")
    assert f"--threshold {text!r}: " in str(err.value) and said in str(err.value)


def test_verdicts_held_broken_and_not_measured():
    found = gates.parse("load_p99_ms<50, load_rps>=100,api_get_run_p99_ms<=20,llm_ttft_p99_ms<9")
    assert [g.metric for g in found][-1] == "ttft_p99_ms"
    v = gates.evaluate(found, {"load_p99_ms": 73.25, "load_rps": 100, "ttft_p99_ms": 8.0})
    assert [x.state for x in v] == ["broken", "held", "not measured", "held"]
    assert gates.counts(v) == {"gates_checked": 4, "gates_broken": 2}
    assert gates.lines(v) == [
        "GATES: 2 of 4 broken",
        "  BROKEN load_p99_ms<50: load_p99_ms is 73.25, the bound < 50",
        "  BROKEN api_get_run_p99_ms<=20: api_get_run_p99_ms was not measured",
        "  held load_rps>=100: load_rps is 100, the bound >= 100",
        "  held llm_ttft_p99_ms<9: ttft_p99_ms is 8, the bound < 9",
    ]


def test_the_regression_gate_without_a_verdict_does_not_break():
    """A new history's first runs have no baseline to test: fail_on_regression lets them pass
    (the report says why); a threshold on the same figure does not."""
    (held,) = gates.evaluate([gates.REGRESSION_GATE], {})
    assert held.state == "no verdict" and not held.broken
    (v,) = gates.evaluate(gates.parse("regression<1"), {})
    assert v.broken
    (v,) = gates.evaluate([gates.REGRESSION_GATE], {"regression": 1})
    assert v.line() == "BROKEN fail_on_regression: a regression was found"


def _params(**kw) -> BenchParams:
    base = dict(run_benchmark=False, inference_url="http://127.0.0.1:9/x", results_uri="")
    return BenchParams(**{**base, **kw})


@pytest.mark.parametrize(
    "params, said",
    [
        (dict(thresholds="runs_success_ratio>=1"), "the KFP runs benchmark"),
        (dict(thresholds="ttft_p99_ms<100"), "the LLM load"),
        (dict(thresholds="load_p99_ms<10", run_load=False, sweep_rates="5"), "inference load"),
        (dict(thresholds="sweep_max_rps>10"), "the rate sweep"),
        (dict(thresholds="replicas_max<=3"), "the InferenceService's replicas"),
        (dict(thresholds="regression<1"), "the regression verdict"),
    ],
)
def test_check_params_refuses_a_gate_nothing_measures(params, said):
    with pytest.raises(ConfigError) as err:
        _params(**params).check(fetch=False)
    assert str(err.value).startswith("pipeline parameter thresholds '") and said in str(err.value)


def test_check_params_refuses_fail_on_regression_without_a_history(tmp_path):
    with pytest.raises(ConfigError, match="pipeline parameter fail_on_regression: regression is"):
        _params(fail_on_regression=True).check(fetch=False)
    with pytest.raises(ConfigError, match="pipeline parameter thresholds 'load_p99_ms<<5'"):
        _params(thresholds="load_p99_ms<<5").check(fetch=False)
    p = _params(fail_on_regression=True, results_uri=str(tmp_path), thresholds="load_rps>1")
    assert p.check(fetch=False) is p
    # each report step checks the gates on the figures it publishes
    assert [g.text for g in p.gates(publish.REPORT_KINDS)] == ["load_rps>1"]
    assert [g.text for g in p.gates({*publish.REPORT_KINDS, "regression"})][-1] == (
        "fail_on_regression"
    )


def test_check_outcome_fails_for_a_broken_gate_and_keeps_the_verdicts_as_data(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({"pipeline": {"flags": []}}))
    found = gates.parse("load_p99_ms<50,load_rps>1")
    gates.write(tmp_path, gates.evaluate(found, {"load_p99_ms": 10.0, "load_rps": 5}))
    assert outcome.check_outcome(outcome.outcome_of(str(tmp_path))) == (
        "no failure flag, no gate broken"
    )
    verdicts = gates.evaluate([*found, gates.REGRESSION_GATE], {"load_rps": 5, "regression": 1})
    gates.write(tmp_path, verdicts)
    with pytest.raises(BenchError) as err:
        outcome.check_outcome(outcome.outcome_of(str(tmp_path)))
    assert "2 gate(s) broke (BROKEN load_p99_ms<50: load_p99_ms was not measured; BROKEN " in (
        str(err.value)
    )
    doc = json.loads((tmp_path / gates.GATES_FILE).read_text())
    assert (doc["gates_checked"], doc["gates_broken"], doc["regression"]) == (3, 2, "broken")
