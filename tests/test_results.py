"""The results directory: written, read back, and refused by name when it cannot be used."""

import pytest

from kfp_bench.errors import ResultsError
from kfp_bench.jsonl import JsonlWriter
from kfp_bench.records import ApiCall, Result, RunRecord, TaskRecord
from kfp_bench.results import read_results, write_results
from kfp_bench.stats.load import LoadStats


def _load_stats():
    s = LoadStats(started_at=1_700_000_000.0)
    for i in range(50):
        s.add(
            Result(
                seq=i,
                intended=i * 0.01,
                sent=i * 0.01,
                latency=0.003,
                status=200,
                bytes_in=5,
                bytes_out=40,
            )
        )
    return s.close(0.6)


def test_roundtrip(tmp_path):
    with JsonlWriter(tmp_path / "runs.jsonl") as w:
        w.write(
            RunRecord(
                "r1",
                "kfp-bench-x-0",
                "SUCCEEDED",
                1.0,
                1.5,
                3.0,
                0.5,
                1.5,
                2.0,
                (TaskRecord("add", "SUCCEEDED", 1.2),),
            )
        )
    with JsonlWriter(tmp_path / "api_calls.jsonl") as w:
        w.write(ApiCall("create_run", 1.0, 0.02))
    write_results(
        tmp_path,
        runs_summary={"format": "kfp-bench/runs", "runs": {"requested": 1}},
        load=_load_stats(),
        extra={"note": "x"},
    )
    res = read_results(tmp_path)
    assert res.summary["runs"] == {"requested": 1}
    assert res.summary["load"]["requests"] == 50
    assert res.summary["note"] == "x"
    assert res.load.requests == 50
    assert res.runs[0].tasks[0].name == "add"
    assert res.api_calls[0].operation == "create_run"


@pytest.mark.parametrize(
    "files, match",
    [
        (None, "no such results directory"),
        ({}, "empty"),
        ({"x.txt": ""}, "has no summary.json"),
        ({"summary.json": "{"}, "not readable JSON"),
        ({"summary.json": '{"format": "other"}'}, "not a kfp-bench"),
        ({"summary.json": '{"format": "kfp-bench/results", "format_version": 7}'}, "version 7"),
    ],
)
def test_unusable_directories_are_named(tmp_path, files, match):
    path = tmp_path / "missing" if files is None else tmp_path
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    with pytest.raises(ResultsError, match=match):
        read_results(path)
