"""Stages, trace replay and shared-prefix prompts of the LLM load against the real local LLM
server (``kfp-bench llm-server``), each checked against its truth log: when each request
arrived and with which prompt (``prompt_sha256``, ``prompt_head``).

Intended send times are compared exactly (a pure function of the schedule); the server's
receive times only loosely (two busy cores), and their order where requests are 0.2 s apart.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import numpy as np
import pytest

from kfp_bench.load.llm import LlmSink, run_llm
from kfp_bench.load.openai import LlmOptions, request_id
from kfp_bench.load.prompts import Dist
from kfp_bench.load.shared_prefix import SharedPrefix, shared_prefix_prompts, system_prompts
from kfp_bench.load.stages import bounds, parse_stages, total_s
from kfp_bench.load.stream import StreamAttack
from kfp_bench.load.trace import read_trace
from kfp_bench.load.workers import run_attack
from kfp_bench.records import STREAM_COLUMNS
from kfp_bench.stats.llm import LlmStats
from tests.conftest import run_cli

COL = {name: i for i, name in enumerate(STREAM_COLUMNS)}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _opts(server, **kw) -> LlmOptions:
    base = dict(url=server.url + "/openai", model="m", concurrency=4, max_tokens=4)
    return LlmOptions(**{**base, **kw}).validate()


def _trace_file(tmp_path, offsets) -> tuple:
    path = tmp_path / "trace.jsonl"
    lines = [{"offset": t, "prompt": f"line {i} " + "word " * i, "output_tokens": 3}
             for i, t in enumerate(offsets)]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path, read_trace(path)


def test_trace_requests_arrive_in_order_at_their_offsets(llm, tmp_path):
    offsets = [0.0, 0.2, 0.4, 0.8, 1.0, 1.4]
    path, (parsed, prompts) = _trace_file(tmp_path, offsets)
    assert parsed == tuple(offsets)
    opts = _opts(llm, trace=parsed, requests=len(parsed), trace_speed=2.0)
    sink = LlmSink(LlmStats(corrected=True), keep=True)
    run_attack(StreamAttack(opts, prompts, sink))
    rows = [(b.source, b.t0, r) for b in sink.batches for r in b.rows()]
    assert len(rows) == 6 and all(r[COL["outcome"]] == 0 for _, _, r in rows)
    ids = tuple(request_id(src, int(r[COL["seq"]])) for src, _, r in rows)
    truth = llm.truth(wait_for=ids)
    t0 = rows[0][1]
    for (_, _, r), rid in zip(rows, ids, strict=True):
        seq = int(r[COL["seq"]])
        assert r[COL["intended"]] - t0 == pytest.approx(offsets[seq] / 2.0, abs=1e-9)
        got = truth.requests[rid]
        assert got["prompt_sha256"] == _sha(prompts[seq].text)  # the line's own prompt
        assert got["arrived"] >= r[COL["intended"]]
        assert got["arrived"] - r[COL["intended"]] < 0.5  # loose: two busy cores
    arrivals = sorted((truth.requests[rid]["arrived"], rid) for rid in ids)
    assert [rid for _, rid in arrivals] == sorted(ids, key=lambda i: int(i.rsplit("-", 1)[1], 16))


def test_a_trace_split_over_two_workers_keeps_each_lines_prompt(llm, tmp_path):
    since = __import__("time").perf_counter()
    offsets = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    _, (parsed, prompts) = _trace_file(tmp_path, offsets)
    stats = run_llm(_opts(llm, trace=parsed, requests=7, workers=2), prompts)
    assert stats.counts["completed"] == 7
    got = sorted((r["arrived"], r["prompt_sha256"]) for r in llm.arrived_since(since, 7))
    assert Counter(h for _, h in got) == Counter(_sha(p.text) for p in prompts)


def test_stages_arrive_per_stage_as_scheduled(llm):
    spec = "1s@6,1s@6-12,idle 0.5s,0.5s@8,idle 0.5s"
    st = parse_stages(spec)
    want = [b["requests"] for b in bounds(st)]
    assert want == [6, 9, 0, 4, 0]
    since = __import__("time").perf_counter()
    stats = run_llm(_opts(llm, stages=st, duration=total_s(st)), shared_prompts()[:5])
    rows = stats.stages.summary()
    assert [r["requests"] for r in rows] == want == [r["ok"] for r in rows]
    assert rows[0]["ttft"]["p50"] >= 20.0 and rows[2]["ttft"] is None
    assert rows[0]["tokens"] == 6 * 4
    arrived = np.array(sorted(r["arrived"] for r in llm.arrived_since(since, sum(want))))
    assert len(arrived) == sum(want)
    t = arrived - arrived[0]  # loose: the server's clock, from the first arrival
    per_stage = [np.count_nonzero((t >= r["start_s"]) & (t < r["end_s"])) for r in rows]
    assert all(abs(a - b) <= 2 for a, b in zip(per_stage, want, strict=True)), per_stage
    again = LlmStats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert again.stages.summary()[1]["requests"] == 9


SPEC = SharedPrefix(num_groups=3, num_prompts_per_group=4, system_prompt_len=40, question_len=6)


def shared_prompts():
    return shared_prefix_prompts(SPEC, Dist.parse("fixed:3"), seed=5)


def test_shared_prefix_prompts_arrive_with_their_prefix(llm):
    prompts = shared_prompts()
    prefixes = system_prompts(SPEC, seed=5)
    since = __import__("time").perf_counter()
    stats = run_llm(_opts(llm, requests=12, concurrency=3, endpoint="chat"), prompts)
    assert stats.counts["completed"] == 12
    got = llm.arrived_since(since, 12)
    assert Counter(r["prompt_sha256"] for r in got) == Counter(_sha(p.text) for p in prompts)
    # the first 64 characters are the system prompt's: one head per group, U requests each
    heads = Counter(r["prompt_head"] for r in got)
    assert sorted(heads.values()) == [4, 4, 4]
    assert sorted(heads) == sorted(p[:64] for p in prefixes)


def test_the_cli_takes_stages_trace_and_shared_prefix(llm, tmp_path):
    path, _ = _trace_file(tmp_path, [0.0, 0.1])
    base = ["llm", llm.url + "/openai", "--model", "kfp-bench-llm", "--max-tokens", "2"]
    r = run_cli(*base, "--trace", str(path), "--json-out", str(tmp_path / "t.json"))
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "t.json").read_text())
    assert doc["options"]["trace"] == 2 and doc["options"]["prompts"]["trace"] == str(path)
    r = run_cli(*base, "--stages", "0.5s@4,idle 0.2s", "--shared-prefix", "2,2,10,3")
    assert r.returncode == 0, r.stderr
    assert "Stages (by intended send time):" in r.stdout
    r = run_cli(*base, "--trace", str(path), "-z", "5s")
    assert r.returncode == 2 and "-z beside --trace" in r.stderr
    r = run_cli(*base, "--shared-prefix", "2,2,10")
    assert r.returncode == 2 and "--shared-prefix '2,2,10'" in r.stderr
