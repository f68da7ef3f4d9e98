"""The published JSON Schemas (kfp_bench/schemas) against the files the commands write: each
command run in-process against the local servers (LLM, model, KFP API), its files validated
(--json-out, a runs results directory and its JSON lines, the pipeline's aggregate, a merge, a
report's metrics.json); a file with a key missing or of another format fails."""

from __future__ import annotations

import json
import shutil

import jsonschema
import pytest

from kfp_bench import schemas
from kfp_bench.cli import main
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.steps import publish
from kfp_bench.steps.params import BenchParams
from tests.paths import PIPELINES


@pytest.fixture(scope="module")
def llm():
    with start_llm_server(first_token_ms=20, token_gap_ms=5, max_tokens=4) as server:
        yield server


def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schemas.schema(name), registry=schemas.registry())


def _written(tmp_path, *argv: str) -> dict:
    out = tmp_path / "out.json"
    assert main([*argv, "--json-out", str(out)]) == 0
    return json.loads(out.read_text())


CASES = {
    "load, hey's flags": ("load-result", ["load", "-z", "1s", "-c", "2"], "/"),
    "load, open loop": ("load-result", ["load", "-z", "1s", "--rate", "20"], "/"),
    "rate sweep": ("rate-sweep", ["sweep", "--rates", "10,20", "-z", "1s"], "/"),
    "llm": ("llm-result", ["llm", "-z", "1s", "-c", "2"], "llm"),
    "llm, two turns": (
        "llm-result",
        ["llm", "-z", "1s", "-c", "2", "--endpoint", "chat", "--multi-turn", "2"],
        "llm",
    ),
    "llm sweep": ("llm-sweep", ["llm", "-z", "1s", "--sweep-concurrency", "1,2"], "llm"),
    "llm search": (
        "llm-sweep",
        ["llm", "-z", "1s", "--find-max", "concurrency", "--slo", "ttft=2s", "--find-limit", "2"],
        "llm",
    ),
    "llm repeats": ("llm-sweep", ["llm", "-z", "1s", "-c", "1", "--repeat", "2"], "llm"),
}


@pytest.mark.parametrize("case", CASES)
def test_every_file_a_command_writes_is_valid_against_its_schema(case, fault_server, llm, tmp_path):
    name, argv, target = CASES[case]
    url = llm.url + "/openai" if target == "llm" else fault_server.url + target
    doc = _written(tmp_path, *argv, url)
    errors = [
        f"{'/'.join(map(str, e.path))}: {e.message}" for e in _validator(name).iter_errors(doc)
    ]
    assert errors == []


def test_a_file_with_a_key_missing_or_another_format_is_refused(llm, tmp_path):
    doc = _written(tmp_path, "llm", "-z", "1s", "--sweep-concurrency", "1,2", llm.url + "/openai")
    v = _validator("llm-sweep")
    assert v.is_valid(doc)
    assert not v.is_valid({k: x for k, x in doc.items() if k != "rows"})
    assert not v.is_valid({**doc, "format": "kfp-bench/llm"})
    doc["steps"][0].pop("counts")  # a step is checked against the LLM result's own schema
    assert not v.is_valid(doc)
    assert not _validator("load-result").is_valid(doc["steps"][1])


def test_every_schema_is_a_valid_draft_2020_12_schema():
    for name in schemas.NAMES:
        jsonschema.Draft202012Validator.check_schema(schemas.schema(name))


# -- a results directory (kfp-bench runs, the pipeline's aggregate) and a report's metrics ------
@pytest.fixture(scope="module")
def kfp():
    with start_kfp_server(simulate="all:fixed(0.2)") as server:
        yield server


def _errors(name: str, doc) -> list[str]:
    return [f"{'/'.join(map(str, e.path))}: {e.message}" for e in _validator(name).iter_errors(doc)]


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def runs_dir(kfp, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "results"
    hello = str(PIPELINES / "hello_world.yaml")
    argv = ["runs", "--host", kfp.url, "--pipeline", hello, "--num-runs", "2"]
    assert main([*argv, "--poll-interval", "0.2", "--out", str(out)]) == 0
    return out


def test_the_files_of_a_runs_results_directory_are_valid_against_their_schemas(runs_dir):
    assert _errors("results-summary", json.loads((runs_dir / "summary.json").read_text())) == []
    runs, calls = _lines(runs_dir / "runs.jsonl"), _lines(runs_dir / "api_calls.jsonl")
    assert len(runs) == 2 and len(calls) > 2
    assert [e for r in runs for e in _errors("run-record", r)] == []
    assert [e for c in calls for e in _errors("api-call", c)] == []
    assert main(["report", str(runs_dir)]) == 0
    metrics = json.loads((runs_dir / "report" / "metrics.json").read_text())
    assert "api_calls_total" in metrics and _errors("report-metrics", metrics) == []


def test_a_runs_file_with_a_key_missing_or_of_another_type_is_refused(runs_dir):
    summary = json.loads((runs_dir / "summary.json").read_text())
    assert not _validator("results-summary").is_valid({**summary, "format": "kfp-bench/load"})
    summary["runs"].pop("duration_s")
    assert not _validator("results-summary").is_valid(summary)
    run = _lines(runs_dir / "runs.jsonl")[0]
    assert not _validator("run-record").is_valid({k: v for k, v in run.items() if k != "state"})
    assert not _validator("run-record").is_valid({**run, "surprise": 1})  # a renamed key
    call = _lines(runs_dir / "api_calls.jsonl")[0]
    assert not _validator("api-call").is_valid({**call, "outcome": "maybe"})
    assert not _validator("report-metrics").is_valid({"api_calls_total": "12"})


def test_the_pipelines_aggregate_summary_is_valid_against_its_schema(
    runs_dir, fault_server, tmp_path
):
    steps = tmp_path / "runs"
    steps.mkdir()
    shutil.copyfile(runs_dir / "summary.json", steps / "runs_summary.json")
    loads = [tmp_path / f"w{i}.json" for i in range(2)]
    for path in loads:
        assert main(["load", "-n", "5", "-c", "1", "--json-out", str(path), fault_server.url]) == 0
    skipped = tmp_path / "skipped.json"
    skipped.write_text(json.dumps({"skipped": True}))
    p = BenchParams(run_benchmark=True, run_load=True, load_workers=3, duration_sec=1.0)
    out = tmp_path / "results"
    publish.aggregate(p, str(steps), list(map(str, loads)), str(skipped), str(skipped), str(out))
    doc = json.loads((out / "summary.json").read_text())
    assert doc["pipeline"]["workers_lost"] == [2]  # a third worker that never reported
    assert "runs" in doc and doc["load"]["requests"] == 10
    assert _errors("results-summary", doc) == []
    assert _errors("load-result", json.loads((out / "load.json").read_text())) == []


def test_merged_results_are_valid_against_the_results_schemas(fault_server, llm, tmp_path):
    for kind, argv, url in (
        ("load-result", ["load", "-n", "4", "-c", "1"], fault_server.url + "/"),
        ("llm-result", ["llm", "-n", "2", "-c", "1"], llm.url + "/openai"),
    ):
        parts = []
        for i in range(2):
            parts.append(str(tmp_path / f"{kind}-{i}.json"))
            assert main([*argv, "--json-out", parts[-1], url]) == 0
        merged = tmp_path / f"{kind}-merged.json"
        assert main(["merge", *parts, "-o", str(merged)]) == 0
        assert _errors(kind, json.loads(merged.read_text())) == []
    assert main(["report", str(tmp_path / "llm-result-merged.json")]) == 0
    metrics = json.loads((tmp_path / "llm-result-merged-report" / "metrics.json").read_text())
    assert _errors("report-metrics", metrics) == []
