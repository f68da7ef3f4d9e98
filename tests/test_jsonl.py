"""JSON-lines records: a last line cut short by a crash is counted and left out by the readers,
and cut off by the next writer that appends, so the file stays readable."""

from __future__ import annotations

import pytest

from kfp_bench.errors import ResultsError
from kfp_bench.jsonl import JsonlWriter, read, read_dicts
from kfp_bench.records import ApiCall


def _calls(n: int) -> list[ApiCall]:
    return [ApiCall("list_runs", 1000.0 + i, 0.01, poll_round=i) for i in range(n)]


def _write(path, records, append=False) -> JsonlWriter:
    with JsonlWriter(path, append=append) as w:
        for r in records:
            w.write(r)
    return w


def test_a_whole_file_reads_back_with_nothing_torn(tmp_path):
    _write(tmp_path / "c.jsonl", _calls(3))
    got = read(tmp_path / "c.jsonl", ApiCall)
    assert got == _calls(3) and got.torn == 0
    assert read_dicts(tmp_path / "c.jsonl").torn == 0


def test_a_torn_last_line_is_counted_and_cut_off_before_the_next_append(tmp_path):
    path = tmp_path / "c.jsonl"
    _write(path, _calls(3))
    whole = path.read_bytes()
    path.write_bytes(whole + whole.splitlines(keepends=True)[0][:20])  # a write cut short

    got = read(path, ApiCall)
    assert got == _calls(3) and got.torn == 1
    dicts = read_dicts(path)
    assert len(dicts) == 3 and dicts.torn == 1

    w = _write(path, _calls(5)[3:], append=True)
    assert w.dropped == 20
    got = read(path, ApiCall)
    assert got == _calls(5) and got.torn == 0


def test_a_last_line_missing_only_its_newline_is_kept(tmp_path):
    path = tmp_path / "c.jsonl"
    _write(path, _calls(2))
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert read(path, ApiCall) == _calls(2)
    w = _write(path, _calls(3)[2:], append=True)
    assert w.dropped == 0 and read(path, ApiCall) == _calls(3)


def test_a_file_holding_only_half_a_line_appends_from_its_start(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"operation": "list_r')
    assert read(path, ApiCall) == [] and read(path, ApiCall).torn == 1
    _write(path, _calls(1), append=True)
    assert read(path, ApiCall) == _calls(1)


def test_a_damaged_line_before_the_last_is_named(tmp_path):
    path = tmp_path / "c.jsonl"
    _write(path, _calls(2))
    lines = path.read_text().splitlines()
    path.write_text(lines[0][:10] + "\n" + lines[1] + "\n")
    with pytest.raises(ResultsError, match=r"c\.jsonl:1: not a ApiCall record"):
        read(path, ApiCall)
