"""Multi-turn chat sessions (``load/multi_turn.py``, ``llm --multi-turn``) against the real local
LLM server (``kfp-bench llm-server``, its own process), checked against its truth log: each
turn's request carried exactly the session's earlier prompts and the answers the server sent
(``messages``: a role and a content hash per message), after the think time; a failed turn ended
its session. Timing is bounded from below only (the think time), never tightly from above.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from itertools import pairwise

import pytest

from kfp_bench.errors import ConfigError, ResultsError
from kfp_bench.load.llm import LlmSink, run_llm
from kfp_bench.load.multi_turn import MultiTurnAttack
from kfp_bench.load.openai import LlmOptions, parse_multi_turn, request_id
from kfp_bench.load.prompts import Dist, synthetic
from kfp_bench.load.stages import parse_stages
from kfp_bench.load.workers import run_attack
from kfp_bench.records import STREAM_COLUMNS, StreamBatch
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.sandbox.llm_server_http import token_text
from kfp_bench.stats.llm import LlmStats, metric_values
from kfp_bench.stats.turns import TurnStats
from tests.conftest import run_cli

COL = {name: i for i, name in enumerate(STREAM_COLUMNS)}
THINK_S = 0.3


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _opts(server, **kw) -> LlmOptions:
    base = dict(url=server.url + "/openai", model="m", endpoint="chat", concurrency=2)
    return LlmOptions(**{**base, "max_tokens": 3, **kw}).validate()


def _prompts(n: int = 7):
    return synthetic(n, Dist.parse("uniform:3,9"), Dist.parse("fixed:3"), seed=4)


def _sessions(sink, llm) -> dict:
    """{session: [(turn, row, truth record), ...] in turn order}, once the truth log has all."""
    rows = [
        (b.source, r, st)
        for b in sink.batches
        for r, st in zip(b.rows(), b.session_turns(), strict=True)
    ]
    ids = [request_id(src, int(r[COL["seq"]])) for src, r, _ in rows]
    truth = llm.truth(wait_for=tuple(ids), timeout=30.0).requests
    out = defaultdict(list)
    for (_, r, (session, turn)), rid in zip(rows, ids, strict=True):
        out[session].append((turn, r, truth[rid]))
    return {s: sorted(v, key=lambda x: x[0]) for s, v in out.items()}


def _answer(record: dict) -> str:
    """The text the server streamed for ``record`` (its tokens are t0, t1, ...)."""
    return "".join(token_text(i) for i in range(record["completion_tokens"]))


def test_each_turn_carries_the_history_as_sent_after_the_think_time(llm):
    prompts = _prompts()
    opts = _opts(llm, requests=3, turns=3, think_time=THINK_S)
    sink = LlmSink(LlmStats(), keep=True)
    run_attack(MultiTurnAttack(opts, prompts, sink))
    sessions = _sessions(sink, llm)
    assert sorted(sessions) == [0, 1, 2]
    for number, turns in sessions.items():
        assert [t for t, _, _ in turns] == [1, 2, 3]
        want = []  # the messages turn k must carry: turns 1..k-1's prompts and answers
        for k, row, record in turns:
            assert row[COL["outcome"]] == 0 and record["outcome"] == "ok"
            user = prompts[(number * 3 + k - 1) % len(prompts)].text
            want.append({"role": "user", "sha256": _sha(user)})
            assert record["messages"] == want  # exactly, in order: nothing more, nothing less
            assert record["prompt_tokens"] == sum(
                len(m.split()) for m in _texts(turns, k, prompts, number)
            )
            want.append({"role": "assistant", "sha256": _sha(_answer(record))})
        for (_, prev_row, prev), (_, _, nxt) in pairwise(turns):
            # the end of turn k-1: the earlier of the server's stamp (taken after its last
            # write) and the client's (the kernel's receive time)
            end = min(prev["done"], prev_row[COL["done"]])
            assert nxt["arrived"] - end >= THINK_S
            assert nxt["arrived"] - end < THINK_S + 5.0  # loose: two busy cores


def _texts(turns, k: int, prompts, number: int) -> list[str]:
    """The contents turn ``k`` carried: each earlier turn's prompt and answer, then its own."""
    out = []
    for j, _, record in turns[: k - 1]:
        out += [prompts[(number * 3 + j - 1) % len(prompts)].text, _answer(record)]
    return [*out, prompts[(number * 3 + k - 1) % len(prompts)].text]


def test_open_loop_starts_sessions_at_the_rate_and_times_later_turns_from_their_due(llm):
    """--rate: sessions start on the schedule (0.25 s apart); a later turn is due its think
    time after the previous turn's end, and with one connection (--max-inflight 1) it may wait
    for it: its intended send time is the due time, never the later send."""
    prompts = _prompts()
    opts = _opts(llm, rate=4.0, requests=4, turns=2, think_time=0.1, max_inflight=1,
                 concurrency=1)  # fmt: skip
    sink = LlmSink(LlmStats(corrected=True), keep=True)
    run_attack(MultiTurnAttack(opts, prompts, sink))
    t0 = sink.batches[0].t0
    sessions = _sessions(sink, llm)
    assert sorted(sessions) == [0, 1, 2, 3]
    for number, ((_, first, r1), (_, second, r2)) in sessions.items():
        assert first[COL["intended"]] - t0 == pytest.approx(number * 0.25, abs=1e-9)
        assert second[COL["intended"]] == first[COL["done"]] + 0.1  # due: the end + think
        assert second[COL["sent"]] >= second[COL["intended"]]
        assert r2["arrived"] - min(r1["done"], first[COL["done"]]) >= 0.1
        assert r2["messages"][:2] == [
            {"role": "user", "sha256": _sha(prompts[number * 2].text)},
            {"role": "assistant", "sha256": _sha(_answer(r1))},
        ]
    s = sink.stats.summary()
    assert s.completed == 8 and s.latency_ms["lag"]["count"] == 8


def test_a_failed_turn_ends_its_session_and_the_lane_starts_the_next(tmp_path):
    truth = tmp_path / "truth.jsonl"
    with start_llm_server(
        truth_log=truth, first_token_ms=5.0, token_gap_ms=2.0, max_tokens=4,
        fault="error:after=1", fault_rate=0.3, seed=11,
    ) as server:  # fmt: skip
        opts = _opts(server, requests=12, concurrency=3, turns=4)
        sink = LlmSink(LlmStats(), keep=True)
        sink.stats.turns = TurnStats(4)
        run_attack(MultiTurnAttack(opts, _prompts(), sink))
        sessions = _sessions(sink, server)
    assert sorted(sessions) == list(range(12))  # -n counts sessions
    failed = ended_early = 0
    for turns in sessions.values():
        assert [t for t, _, _ in turns] == list(range(1, len(turns) + 1))
        outcomes = [row[COL["outcome"]] for _, row, _ in turns]
        assert all(o == 0 for o in outcomes[:-1])  # only a session's last turn may fail
        if outcomes[-1]:
            failed += 1
            assert turns[-1][2]["outcome"] == "error-event"
            ended_early += len(turns) < 4
        else:
            assert len(turns) == 4
    assert failed and ended_early  # the seed's draws: some sessions failed before their end
    by_turn = sink.stats.summary().turns
    assert sum(r["failed"] for r in by_turn) == failed == sink.stats.summary().failed
    assert by_turn[0]["requests"] == 12


def test_workers_split_the_sessions_and_their_figures_merge_exactly(llm):
    opts = _opts(llm, requests=6, concurrency=4, turns=3, think_time=0.05, workers=2)
    stats = run_llm(opts, _prompts())
    rows = stats.summary().turns
    assert [r["requests"] for r in rows] == [6, 6, 6] == [r["completed"] for r in rows]
    means = [r["input_tokens_mean"] for r in rows]
    assert means[0] < means[1] < means[2]  # the history grows
    m = metric_values(stats.summary())
    assert m["ttft_turn3_p50_ms"] == rows[2]["ttft"]["p50"] and m["input_tokens_turn1_mean"]
    again = LlmStats.from_dict(json.loads(json.dumps(stats.to_dict())))
    assert again.summary().turns == rows


def _halves(b: StreamBatch) -> tuple[StreamBatch, StreamBatch]:
    """``b``'s rows cut in two batches (its first half, the rest), each with its own chunk
    times, errors, request sizes and turns."""
    w, n = len(STREAM_COLUMNS), len(b)
    m = n // 2
    rows = list(b.rows())
    chunks = sum(int(r[COL["content_chunks"]]) for r in rows[:m])
    errs = sum(int(r[COL["outcome"]]) for r in rows[:m])

    def part(lo, hi, t, e):
        return StreamBatch(
            b.t0, b.data[lo * w : hi * w], b.times[t[0] : t[1]], b.errors[e[0] : e[1]], [],
            b.request_bytes[lo:hi], b.source, b.turns[2 * lo : 2 * hi],
        )  # fmt: skip

    end = (len(b.times), len(b.errors))
    return part(0, m, (0, chunks), (0, errs)), part(m, n, (chunks, end[0]), (errs, end[1]))


def test_merging_the_halves_of_a_run_gives_the_whole(llm):
    sink = LlmSink(LlmStats(), keep=True)
    sink.stats.turns = TurnStats(2)
    run_attack(MultiTurnAttack(_opts(llm, requests=4, turns=2), _prompts(), sink))
    halves = [LlmStats(turns=TurnStats(2)), LlmStats(turns=TurnStats(2))]
    for batch in sink.batches:
        for half, part in zip(halves, _halves(batch), strict=True):
            half.add_batch(part)
    assert halves[0].counts["requests"] and halves[1].counts["requests"]
    halves[0].merge(halves[1])
    assert halves[0].turns.to_dict() == sink.stats.turns.to_dict()
    assert sum(r["requests"] for r in sink.stats.summary().turns) == 8
    with pytest.raises(ResultsError, match="multi-turn LLM result with one of single requests"):
        LlmStats().merge(halves[0])


def test_a_result_without_turns_reads_and_reports_as_before():
    doc = LlmStats().to_dict()
    assert "turns" not in doc
    s = LlmStats.from_dict(json.loads(json.dumps(doc))).summary()
    assert s.turns == [] and not any("turn" in k for k in metric_values(s))


@pytest.mark.parametrize(
    "kw, said",
    [
        (dict(endpoint="completions"), "add --endpoint chat"),
        (dict(stages=parse_stages("1s@5"), duration=1.0), "beside --stages"),
        (dict(qps=2.0), "beside -q"),
        (dict(turns=101), "give 1 to 100 turns"),
        (dict(think_time=-1.0), "think time of 0 to"),
    ],
)
def test_options_that_cannot_run_sessions_are_refused(llm, kw, said):
    with pytest.raises(ConfigError, match=said):
        _opts(llm, requests=2, **{"turns": 3, **kw})


@pytest.mark.parametrize("text", ["", "x", "0", "3,-1", "3,x", "3,inf", "2.5"])
def test_a_bad_multi_turn_spec_is_refused(text):
    with pytest.raises(ConfigError, match=r"--multi-turn .*TURNS\[,THINK_S\]"):
        parse_multi_turn(text)


def test_the_command_prints_and_saves_the_per_turn_figures(llm, tmp_path):
    out = tmp_path / "r.json"
    argv = ["llm", llm.url + "/openai", "--endpoint", "chat", "-c", "2", "-n",
            "2", "--multi-turn", "3,0.05", "--max-tokens", "2", "--json-out", str(out)]  # fmt: skip
    done = run_cli(*argv)
    assert done.returncode == 0, done.stderr
    assert "Per turn (2 sessions of 3 turns, 2 whole" in done.stdout
    again = run_cli("report", str(out), "--out", str(tmp_path / "rep"))
    assert again.returncode == 0, again.stderr
    assert "Per turn (2 sessions of 3 turns" in again.stdout
    md = (tmp_path / "rep" / "summary.md").read_text()
    assert "## Per turn" in md
    metrics = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    assert {"ttft_turn1_p50_ms", "ttft_turn3_p99_ms", "input_tokens_turn2_mean"} <= set(metrics)
