"""The LLM server's fault modes, per request (``X-Llm-Fault``) and server-wide (``--fault``),
each seen from a plain socket client and in the truth log."""

from __future__ import annotations

import json
import socket

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.llm_server import read_truth, start_llm_server
from kfp_bench.sandbox.llm_server_faults import parse_fault

from .llm_client import request_bytes, send

COMPLETIONS, CHAT = "/v1/completions", "/v1/chat/completions"
BODY = {
    "prompt": "a b c",
    "max_tokens": 6,
    "stream": True,
    "stream_options": {"include_usage": True},
}
CHAT_BODY = {**BODY, "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    truth = tmp_path_factory.mktemp("llm") / "truth.jsonl"
    with start_llm_server(truth_log=truth, first_token_ms=10, token_gap_ms=5) as server:
        yield server


def _faulted(llm, fault: str, rid: str, path=COMPLETIONS, body=BODY, **kw):
    reply = send(llm.port, path, body, {"X-Llm-Fault": fault, "X-Request-Id": rid}, **kw)
    return reply, llm.truth(wait_for=(rid,)).requests[rid]


def test_stall_for_a_while_shifts_the_rest(llm):
    reply, record = _faulted(llm, "stall:after=2,for=0.3", "stall-1")
    times = reply.content_times(chat=False)
    assert len(times) == 6 and reply.complete
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert 0.3 <= gaps[1] < 0.32  # the stall: after the 2nd token, 0.3 s more than the gap
    assert max(gaps[:1] + gaps[2:]) < 0.015
    assert record["fault"] == "stall:after=2,for=0.3" and record["outcome"] == "ok"


def test_stall_forever_until_the_client_goes(llm):
    headers = {"X-Llm-Fault": "stall:after=3", "X-Request-Id": "s2"}
    reply = send(llm.port, COMPLETIONS, BODY, headers, timeout=0.4)
    assert len(reply.content_times(chat=False)) == 3 and not reply.complete and not reply.closed
    record = llm.truth(wait_for=("s2",)).requests["s2"]  # the client's close ended it
    assert record["outcome"] == "stalled" and record["completion_tokens"] == 3
    assert record["done"] - record["tokens"][-1] >= 0.35


def test_drop_closes_mid_stream(llm):
    reply, record = _faulted(llm, "drop:after=4", "drop-1")
    assert reply.closed and not reply.complete
    assert len(reply.content_times(chat=False)) == 4
    assert all(d != "[DONE]" for _, d in reply.events)
    assert record["outcome"] == "dropped" and record["completion_tokens"] == 4


def test_429_with_retry_after_and_an_openai_error(llm):
    reply, record = _faulted(llm, "429:retry_after=3", "r-429")
    assert reply.status == 429 and reply.headers["retry-after"] == "3"
    error = json.loads(reply.body)["error"]
    assert error["code"] == "rate_limit_exceeded" and error["type"] == "requests"
    assert record["outcome"] == "rejected" and record["tokens"] == [] and record["head"] is None


def test_sse_error_event_mid_stream(llm):
    reply, record = _faulted(llm, "error:after=2", "err-1", CHAT, CHAT_BODY)
    assert reply.complete and reply.events[-1][1] == "[DONE]"
    assert len(reply.content_times(chat=True)) == 2
    error = json.loads(reply.events[-2][1])["error"]
    assert error["code"] == 500 and "after 2 tokens" in error["message"]
    assert record["outcome"] == "error-event" and record["completion_tokens"] == 2


def test_usage_missing(llm):
    reply, record = _faulted(llm, "no-usage", "nu-1")
    assert reply.complete and all(c["choices"] for c in reply.chunks())
    assert len(reply.content_times(chat=False)) == 6
    assert record["completion_tokens"] == 6


@pytest.mark.parametrize("by", [3, -2])
def test_usage_wrong(llm, by):
    reply, record = _faulted(llm, f"wrong-usage:by={by}", f"wu{by}")
    usage = reply.chunks()[-1]["usage"]
    assert usage["completion_tokens"] == 6 + by and usage["total_tokens"] == 3 + 6 + by
    assert len(reply.content_times(chat=False)) == 6
    assert record["completion_tokens"] == 6 and record["usage"]["completion_tokens"] == 6 + by


@pytest.mark.parametrize(("path", "body"), [(COMPLETIONS, BODY), (CHAT, CHAT_BODY)])
def test_empty_chunks_interleaved(llm, path, body):
    reply, record = _faulted(llm, "empty:every=2", f"empty{len(path)}", path, body)
    chat = path == CHAT
    texts = [
        c["choices"][0]["delta"].get("content") if chat else c["choices"][0]["text"]
        for c in reply.chunks()
        if c["choices"] and "role" not in c["choices"][0].get("delta", {})
    ]
    assert texts == ["", "t0", " t1", "", " t2", " t3", "", " t4", " t5"]
    assert len(reply.content_times(chat)) == 6 and record["completion_tokens"] == 6


def test_server_wide_fault_at_a_seeded_rate(tmp_path):
    truth = tmp_path / "t.jsonl"
    options = dict(first_token_ms=1, token_gap_ms=1, fault="drop:after=1", fault_rate=0.5, seed=7)
    drawn = []
    for _ in range(2):
        with start_llm_server(truth_log=truth, **options) as server:
            drawn.append([send(server.port, COMPLETIONS, BODY).closed for _ in range(20)])
            exempt = send(server.port, COMPLETIONS, BODY, {"X-Llm-Fault": "none"})
            assert exempt.complete
    assert drawn[0] == drawn[1]  # the same seed draws the same requests
    assert 4 <= sum(drawn[0]) <= 16


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("stall", "stall needs after=N"),
        ("stall:after=2,for=-1", "for=-1 is out of range"),
        ("drop:after=1.5", "must be an integer"),
        ("drop:k=1", "drop takes after=, not 'k=1'"),
        ("empty:every=0", "every=0 is out of range"),
        ("melt", "unknown fault 'melt'"),
    ],
)
def test_bad_fault_specs_name_the_fix(spec, says):
    with pytest.raises(ConfigError, match="--fault") as info:
        parse_fault(spec)
    assert says in str(info.value)


def test_streams_open_at_stop_are_logged(tmp_path):
    truth = tmp_path / "t.jsonl"
    with start_llm_server(truth_log=truth, first_token_ms=1, token_gap_ms=1) as server:
        headers = {"X-Llm-Fault": "stall:after=2", "X-Request-Id": "held"}
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(request_bytes(COMPLETIONS, BODY, headers))
        seen = b""
        while b'"t1"' not in seen and b'" t1"' not in seen:  # both tokens are out: it stalls
            seen += sock.recv(65536)
    sock.close()
    record = read_truth(truth).requests["held"]
    assert record["outcome"] == "server-stopped" and record["completion_tokens"] == 2
    assert record["fault"] == "stall:after=2"
