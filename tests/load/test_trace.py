"""Trace files (``load/trace.py``): what a line may hold, and every bad line refused before the
load with the file, the line and the fix."""

from __future__ import annotations

import json

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.load.pacer import TraceSchedule
from kfp_bench.load.trace import read_trace


def _write(tmp_path, *lines: str):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_lines_make_offsets_and_prompts(tmp_path):
    path = _write(
        tmp_path,
        json.dumps({"offset": 0, "prompt": "hello there", "max_tokens": 7, "model": "x"}),
        "",
        json.dumps({"offset": 1.5, "input_tokens": 12}),
    )
    offsets, prompts = read_trace(path, seed=1)
    assert offsets == (0.0, 1.5)
    assert (prompts[0].text, prompts[0].output_tokens) == ("hello there", 7)
    assert prompts[1].input_tokens == 12 == len(prompts[1].text.split())
    assert prompts[1].output_tokens == 256  # the JSONL prompts' default
    assert read_trace(path, seed=1)[1] == prompts  # seeded words
    assert read_trace(path, output_tokens=3)[1][0].output_tokens == 3
    assert read_trace(_write(tmp_path, '{"offset": 2}'), prompts=False) == ((2.0,), [])


@pytest.mark.parametrize(
    "lines, says",
    [
        (['{"offset": 0, "prompt": "a"}', "not json"], "line 2: not JSON"),
        (["[1, 2]"], "line 1: not a JSON object"),
        (['{"prompt": "a"}'], "line 1: offset=None"),
        (['{"offset": -1, "prompt": "a"}'], "line 1: offset=-1"),
        (['{"offset": true, "prompt": "a"}'], "line 1: offset=True"),
        (['{"offset": 2, "prompt": "a"}', '{"offset": 1, "prompt": "b"}'], "sort the file"),
        (['{"offset": 0}'], "give prompt (text) or input_tokens"),
        (['{"offset": 0, "prompt": "a", "input_tokens": 3}'], "one of them"),
        (['{"offset": 0, "prompt": " "}'], "give it text"),
        (['{"offset": 0, "input_tokens": 0}'], "input_tokens=0"),
        (['{"offset": 0, "prompt": "a", "output_tokens": 1.5}'], "output_tokens=1.5"),
        ([""], "no requests in it"),
    ],
)
def test_a_bad_line_is_refused_with_its_file_line_and_fix(tmp_path, lines, says):
    path = _write(tmp_path, *lines)
    with pytest.raises(ConfigError, match=f"trace file {path}") as e:
        read_trace(path)
    assert says in str(e.value)


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        read_trace(tmp_path / "nope.jsonl")


def test_the_schedule_is_start_plus_offset_over_speed():
    s = TraceSchedule(10.0, (0.0, 1.0, 3.0), speed=2.0)
    assert [s.pop(), s.pop(), s.pop()] == [10.0, 10.5, 11.5]
    assert s.peek() == float("inf")
