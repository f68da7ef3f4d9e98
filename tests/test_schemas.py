"""The published JSON Schemas (kfp_bench/schemas) against the files the commands write: each
command run in-process with --json-out against the local servers, its file validated; a file
with a key missing or of another format fails."""

from __future__ import annotations

import json

import jsonschema
import pytest

from kfp_bench import schemas
from kfp_bench.cli import main
from kfp_bench.sandbox.llm_server import start_llm_server


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
