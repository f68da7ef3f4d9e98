"""``kfp-bench llm --export llm-d FILE``: the report validates against llm-d's own definition of
the Benchmark Report v0.2.x, its pydantic models and its JSON Schema, as the PyPI package
llmd-benchmark-report (published by llm-d-benchmark, pinned in requirements.txt) ships them; it
holds the figures of kfp-bench's own result; a report llm-d would refuse is refused here too.
Real parts: the local LLM server and the CLI."""

from __future__ import annotations

import copy
import json
from importlib import resources

import jsonschema
import pydantic
import pytest
from llmd_benchmark_report import BenchmarkReportV02, load_benchmark_report

from kfp_bench.cli import main
from kfp_bench.sandbox.llm_server import start_llm_server

QUICK = {"first_token_ms": 5, "token_gap_ms": 1}


def _llm_d_schema() -> jsonschema.Draft202012Validator:
    text = resources.files("llmd_benchmark_report").joinpath("br_v0_2_json_schema.json")
    return jsonschema.Draft202012Validator(json.loads(text.read_text()))


def _llm_d_errors(doc: dict) -> list[str]:
    """What llm-d's schema and its pydantic models (which also check units) find wrong."""
    errors = [e.message for e in _llm_d_schema().iter_errors(doc)]
    try:
        load_benchmark_report(copy.deepcopy(doc))
    except pydantic.ValidationError as exc:
        errors += [e["msg"] for e in exc.errors()]
    return errors


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Two loads' reports and results: closed loop, and open loop with two turns a session."""
    tmp = tmp_path_factory.mktemp("llm-d")
    runs = {
        "closed": ["-n", "12", "-c", "3", "--output-tokens", "uniform:2,6"],
        "open": ["--rate", "20", "-z", "1s", "--endpoint", "chat", "--multi-turn", "2"],
    }
    out = {}
    with start_llm_server(**QUICK) as llm:
        for name, argv in runs.items():
            report, result = tmp / f"{name}.br.json", tmp / f"{name}.json"
            more = ["--json-out", str(result), "--export", "llm-d", str(report)]
            assert main(["llm", *argv, *more, llm.url + "/openai"]) == 0
            out[name] = (json.loads(report.read_text()), json.loads(result.read_text()))
    return out


@pytest.mark.parametrize("name", ["closed", "open"])
def test_the_export_is_valid_against_llm_ds_schema_and_models(exported, name):
    doc, _ = exported[name]
    assert _llm_d_errors(doc) == []
    assert isinstance(load_benchmark_report(doc), BenchmarkReportV02)
    assert doc["version"] == "0.2.1"


def test_the_export_holds_the_results_figures(exported):
    doc, result = exported["closed"]
    s = result["summary"]
    agg = doc["results"]["request_performance"]["aggregate"]
    assert agg["requests"] == {
        "total": s["requests"],
        "failures": s["failed"],
        "input_length": {"units": "count", "mean": s["input_tokens"] / s["completed"]},
        "output_length": {"units": "count", "mean": s["output_tokens"] / s["completed"]},
    }
    for ours, theirs in (("ttft", "time_to_first_token"), ("e2e", "request_latency")):
        got, want = agg["latency"][theirs], s["latency_ms"][ours]
        assert got["units"] == "ms"
        assert (got["p50"], got["p99"], got["p99p9"]) == (want["p50"], want["p99"], want["p99_9"])
        assert (got["min"], got["max"], got["mean"]) == (want["min"], want["max"], want["mean"])
    assert agg["latency"]["inter_token_latency"]["units"] == "ms/token"
    rates = agg["throughput"]
    assert rates["output_token_rate"] == {"units": "tokens/s", "mean": s["output_tokens_per_s"]}
    assert rates["request_rate"] == {"units": "queries/s", "mean": s["rps"]}
    load = doc["scenario"]["load"]["standardized"]
    assert load["concurrency"] == 3 and "rate_qps" not in load
    assert load["output_seq_len"] == {"distribution": "uniform", "value": 4, "min": 2, "max": 6}
    assert load["tool"] == "kfp-bench" and load["source"] == "random"
    model = doc["scenario"]["stack"][0]["standardized"]["model"]["name"]
    assert model == result["options"]["model"]
    assert doc["run"]["time"]["duration"] == f"PT{result['duration_s']:.6f}S"


def test_an_open_loop_multi_turn_export_says_its_rate_and_turns(exported):
    doc, _ = exported["open"]
    load = doc["scenario"]["load"]["standardized"]
    assert load["rate_qps"] == 20 and "concurrency" not in load
    assert load["multi_turn"] == {
        "enabled": True,
        "max_turns": {"distribution": "fixed", "value": 2},
    }


@pytest.mark.parametrize(
    "break_it",
    [
        lambda d: d["run"].pop("uid"),  # run.uid is required
        lambda d: d["results"].update(surprise=1),  # a key llm-d does not name
        lambda d: d["results"]["request_performance"]["aggregate"]["latency"][
            "inter_token_latency"
        ].update(units="ms"),  # ITL is per token: llm-d's models check the units
        lambda d: d["scenario"]["load"]["standardized"].update(concurrency=0),
    ],
    ids=["no-uid", "unknown-key", "itl-in-ms", "concurrency-0"],
)
def test_a_report_llm_d_would_refuse_is_refused(exported, break_it):
    doc = copy.deepcopy(exported["closed"][0])
    break_it(doc)
    assert _llm_d_errors(doc) != []
