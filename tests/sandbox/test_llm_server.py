"""The local LLM server over real loopback sockets: timing, OpenAI shapes, truth log, CLI.

The shapes are checked against the OpenAI schema KServe ships (the generated pydantic models in
``kserve/protocol/rest/openai/types/openapi.py``), loaded as one file: the package's ``__init__``
imports vllm, which is not installed here.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import uvloop

from kfp_bench.cli import main as cli_main
from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.llm_server import LlmServerOptions, read_truth, start_llm_server

from .llm_client import send, send_async

#: Assertions about time: the timing tier (tests/README.md), held beside two busy loops.
pytestmark = pytest.mark.timing

COMPLETIONS, CHAT = "/v1/completions", "/v1/chat/completions"
USAGE = {"stream": True, "stream_options": {"include_usage": True}}
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "say hi now"}]


def _openapi():
    root = importlib.util.find_spec("kserve").submodule_search_locations[0]
    path = Path(root) / "protocol/rest/openai/types/openapi.py"
    spec = importlib.util.spec_from_file_location("kserve_openai_types", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic looks its generic models up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def api():
    return _openapi()


def _valid(model, doc: dict, extra=frozenset()) -> None:
    """``doc`` is a ``model`` and has no key the model lacks (pydantic would ignore it)."""
    model.model_validate(doc)
    assert set(doc) - set(model.model_fields) <= extra, set(doc) - set(model.model_fields)
    for choice, kind in zip(doc.get("choices", ()), _choice_types(model), strict=False):
        assert set(choice) <= set(kind.model_fields), set(choice) - set(kind.model_fields)


def _choice_types(model):
    import typing

    (kind,) = typing.get_args(model.model_fields["choices"].annotation)
    while True:
        yield kind


@pytest.fixture(scope="module")
def llm(tmp_path_factory):
    truth = tmp_path_factory.mktemp("llm") / "truth.jsonl"
    with start_llm_server(truth_log=truth) as server:
        # One request first: a fresh process's first answer pays its warm-up, not the tests'.
        send(server.port, COMPLETIONS, {"prompt": "x", "max_tokens": 2, "stream": True})
        yield server


#: How late a wake-up may be here. The suite runs beside other work on two cores, where a
#: process waits for a core now and then: bounds tell the configured timing from another one,
#: never how precise the server is (bench/llm_server_precision.py measures that, BENCHMARKS.md).
LATE_S = 0.050


def _lateness(record: dict, first_s: float, gap_s: float) -> list[float]:
    """Each token's logged send time less its deadline ``arrived + first + i * gap``."""
    return [t - (record["arrived"] + first_s + i * gap_s) for i, t in enumerate(record["tokens"])]


def test_completion_stream_timing_matches_the_configured_truth(llm):
    body = {"prompt": "one two three", "max_tokens": 12, **USAGE}
    reply = send(llm.port, COMPLETIONS, body, {"X-Request-Id": "timing-1"})
    assert reply.status == 200 and reply.complete
    times = reply.content_times(chat=False)
    assert len(times) == 12
    # Never early (the request was written before the server's clock started), and the first
    # token is the configured 200 ms one, not a gap's or a header's.
    assert 0.200 <= times[0] - reply.sent < 0.200 + LATE_S, times[0] - reply.sent
    late = _lateness(llm.truth(wait_for=("timing-1",)).requests["timing-1"], 0.200, 0.020)
    assert min(late) >= 0 and max(late) < LATE_S, late  # every token on its own deadline
    # The head came at once, long before the first token: a client must not take it for one.
    assert reply.head_at - reply.sent < 0.100


def test_per_request_headers_override_the_timing(llm):
    headers = {"X-Llm-First-Token-Ms": "30", "X-Llm-Token-Gap-Ms": "5", "X-Request-Id": "hdr-1"}
    reply = send(llm.port, COMPLETIONS, {"prompt": "x", "max_tokens": 6, "stream": True}, headers)
    times = reply.content_times(chat=False)
    assert len(times) == 6
    # 30 ms + 5 gaps of 5 ms = 55 ms, where the default timing would take 300 ms
    assert 0.030 <= times[0] - reply.sent and times[-1] - reply.sent < 0.055 + LATE_S
    late = _lateness(llm.truth(wait_for=("hdr-1",)).requests["hdr-1"], 0.030, 0.005)
    assert min(late) >= 0, late


def test_chat_stream_role_chunk_content_usage_done(llm, api):
    body = {"model": "m1", "messages": MESSAGES, "max_tokens": 4, **USAGE}
    api.CreateChatCompletionRequest.model_validate(body)
    reply = send(llm.port, "/openai" + CHAT, body, {"X-Llm-First-Token-Ms": "10"})
    assert reply.headers["content-type"] == "text/event-stream"
    assert reply.events[-1][1] == "[DONE]"
    chunks = reply.chunks()
    for c in chunks[:-1]:  # this schema's stream chunk has no usage: vLLM's null is extra
        _valid(api.CreateChatCompletionStreamResponse, c, extra={"usage"})
    role, *content, usage = chunks
    assert role["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert [c["choices"][0]["delta"]["content"] for c in content] == ["t0", " t1", " t2", " t3"]
    assert [c["choices"][0]["finish_reason"] for c in content] == [None, None, None, "length"]
    assert all("usage" in c and c["usage"] is None for c in chunks[:-1])  # as vLLM sends them
    assert usage["choices"] == [] and usage["model"] == "m1"
    api.CompletionUsage.model_validate(usage["usage"])
    assert usage["usage"] == {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}
    assert len({c["id"] for c in chunks}) == 1 and chunks[0]["id"].startswith("chatcmpl-")


def test_completion_stream_shapes_against_the_openai_schema(api):
    body = {"model": "m", "prompt": ["a b", "c"], "max_tokens": 3, "stream": True}
    api.CreateCompletionRequest.model_validate(body)
    with start_llm_server(first_token_ms=5, token_gap_ms=1) as server:
        plain = send(server.port, COMPLETIONS, body)
        with_usage = send(server.port, COMPLETIONS, {**body, **USAGE})
    chunks = plain.chunks()
    assert plain.events[-1][1] == "[DONE]" and len(chunks) == 3
    for c in chunks:
        _valid(api.CreateCompletionResponse, c)  # a completion chunk has this shape
        assert c["object"] == "text_completion" and "usage" not in c
        assert c["choices"][0]["logprobs"] is None
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    last = with_usage.chunks()[-1]
    assert last["choices"] == [] and last["usage"]["prompt_tokens"] == 3


def test_non_streaming_answers_and_models(llm, api):
    quick = {"X-Llm-First-Token-Ms": "5", "X-Llm-Token-Gap-Ms": "1"}
    reply = send(llm.port, COMPLETIONS, {"prompt": "a b", "max_tokens": 3}, quick)
    doc = json.loads(reply.body)
    _valid(api.CreateCompletionResponse, doc)
    assert doc["choices"][0]["text"] == "t0 t1 t2"
    assert doc["usage"] == {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}
    reply = send(llm.port, "/openai" + CHAT, {"messages": MESSAGES}, quick)
    doc = json.loads(reply.body)
    _valid(api.CreateChatCompletionResponse, doc)
    assert doc["choices"][0]["finish_reason"] == "stop"  # no max_tokens asked: the default 64
    assert doc["usage"]["completion_tokens"] == 64
    for prefix in ("", "/openai"):
        models = api.ListModelsResponse.model_validate(json.loads(_get(llm.port, prefix)))
        assert [m.id for m in models.data] == ["kfp-bench-llm"]


def test_keep_alive_serves_requests_in_turn_and_logs_a_client_gone(llm):
    conn = http.client.HTTPConnection("127.0.0.1", llm.port, timeout=5)
    quick = {"X-Llm-First-Token-Ms": "2", "X-Llm-Token-Gap-Ms": "1", "Content-Type": "x"}
    for n in (2, 3):
        body = json.dumps({"prompt": "p", "max_tokens": n, "stream": True})
        conn.request("POST", COMPLETIONS, body, quick)
        text = conn.getresponse().read().decode()  # http.client undoes the chunking
        assert text.count("data: ") == n + 1 and text.endswith("data: [DONE]\n\n")
    conn.close()
    headers = {"X-Request-Id": "gone-1", "X-Llm-Token-Gap-Ms": "50", "X-Llm-First-Token-Ms": "5"}
    body = {"prompt": "p", "max_tokens": 50, "stream": True}
    send(llm.port, COMPLETIONS, body, headers, stop_after=2)
    record = llm.truth(wait_for=("gone-1",)).requests["gone-1"]
    assert record["outcome"] == "client-gone" and record["completion_tokens"] == 2


def _get(port: int, prefix: str) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", prefix + "/v1/models")
    return conn.getresponse().read()


@pytest.mark.parametrize(
    ("path", "body", "headers", "status", "says"),
    [
        ("/v2/whatever", {"prompt": "x"}, {}, 404, "no route"),
        (COMPLETIONS, {"messages": []}, {}, 400, "needs 'prompt'"),
        (CHAT, {"prompt": "x"}, {}, 400, "needs 'messages'"),
        (COMPLETIONS, {"prompt": "x", "max_tokens": 0}, {}, 400, "max_tokens=0"),
        (COMPLETIONS, {"prompt": "x", "stream_options": {}}, {}, 422, "when stream is true"),
        (COMPLETIONS, {"prompt": "x"}, {"X-Llm-Token-Gap-Ms": "soon"}, 400, "X-Llm-Token-Gap-Ms"),
        (COMPLETIONS, {"prompt": "x"}, {"X-Llm-Fault": "meltdown"}, 400, "unknown fault"),
    ],
)
def test_bad_requests_get_an_openai_error(llm, path, body, headers, status, says):
    reply = send(llm.port, path, body, headers)
    assert reply.status == status
    assert says in json.loads(reply.body)["error"]["message"]


def test_truth_log_records_each_request(llm):
    quick = {"X-Llm-First-Token-Ms": "20", "X-Llm-Token-Gap-Ms": "4", "X-Request-Id": "w-7"}
    reply = send(llm.port, CHAT, {"messages": MESSAGES, "max_tokens": 5, **USAGE}, quick)
    truth = llm.truth(wait_for=("w-7",))
    record = truth.requests["w-7"]
    assert record["endpoint"] == CHAT and record["outcome"] == "ok" and record["fault"] is None
    assert (record["prompt_tokens"], record["completion_tokens"]) == (5, 5)
    assert reply.sent <= record["arrived"] < record["head"] < record["tokens"][0]
    assert record["tokens"][-1] <= record["done"]
    # The server's send times are what the client saw, less the loopback's transit; the client
    # may run before write() returns in the server, by at most the longest write.
    slack = record["write_max_ms"] / 1e3
    for seen, sent in zip(reply.content_times(chat=True), record["tokens"], strict=True):
        assert -slack <= seen - sent < LATE_S
    late = _lateness(record, 0.020, 0.004)
    assert min(late) >= 0 and max(late) < LATE_S, late
    assert abs(truth.epoch(record["arrived"]) - time.time()) < 5
    assert truth.header["options"]["first_token_ms"] == 200.0


def test_200_streams_at_once_are_each_served_whole_and_never_early(tmp_path):
    """Concurrency, not precision: 200 streams from one client all end, every token once and
    none before its deadline (how late they are at this load: bench/llm_server_precision.py)."""
    truth = tmp_path / "truth.jsonl"
    body = {"prompt": "x", "max_tokens": 10, "stream": True}

    async def many(port):
        return await asyncio.gather(*(send_async(port, COMPLETIONS, body) for _ in range(200)))

    with start_llm_server(truth_log=truth, first_token_ms=100, token_gap_ms=20) as server:
        replies = uvloop.run(many(server.port))
    assert all(r.complete and len(r.content_times(chat=False)) == 10 for r in replies)
    records = read_truth(truth).requests.values()
    assert len(records) == 200 and all(r["outcome"] == "ok" for r in records)
    assert min(min(_lateness(r, 0.100, 0.020)) for r in records) >= 0


def test_deadlines_are_absolute_so_a_stalled_server_catches_up(llm):
    """The server stopped for 150 ms mid-stream (SIGSTOP, a real pause of its process): the
    tokens due meanwhile go out late, at once, and the later ones on their own deadlines again.
    A sleep per token would carry the 150 ms to the end (and its overshoots, drift: the bench's
    ``drift`` figure)."""
    headers = {"X-Request-Id": "paused-1", "X-Llm-First-Token-Ms": "50"}
    body = {"prompt": "x", "max_tokens": 30, "stream": True}  # the last due at 50 + 29 * 20 ms
    with ThreadPoolExecutor(1) as pool:
        reply = pool.submit(send, llm.port, COMPLETIONS, body, headers)
        time.sleep(0.100)
        os.kill(llm.pid, signal.SIGSTOP)
        try:
            time.sleep(0.150)
        finally:
            os.kill(llm.pid, signal.SIGCONT)
        assert reply.result().complete
    late = _lateness(llm.truth(wait_for=("paused-1",)).requests["paused-1"], 0.050, 0.020)
    assert min(late) >= 0 and max(late) > 0.100, late  # the pause held some tokens back
    assert late[-1] < LATE_S, late  # and the last is on its deadline


def test_bad_options_are_one_clear_error_before_starting():
    with pytest.raises(ConfigError, match="--token-gap-ms -1"):
        LlmServerOptions(token_gap_ms=-1)
    with pytest.raises(ConfigError, match="stall needs after=N"):
        start_llm_server(fault="stall")
    with pytest.raises(ConfigError, match="unknown options"):
        start_llm_server(gap=3)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--token-gap-ms", "-1"], "--token-gap-ms -1.0 must be ms"),
        (["--max-tokens", "0"], "--max-tokens 0 must be an integer >= 1"),
        (["--fault", "drop:after=x"], "after='x' must be an integer"),
        (["--fault-rate", "2"], "--fault-rate 2.0 must be in [0, 1]"),
        (["--max-tokens", "10", "--max-tokens-cap", "5"], "exceeds --max-tokens-cap"),
    ],
)
def test_cli_bad_flags_exit_2_with_one_line(argv, says, capsys):
    assert cli_main(["llm-server", "--port", "0", *argv]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1, err


def test_cli_serves_until_terminated(tmp_path):
    truth = tmp_path / "t.jsonl"
    cmd = [sys.executable, "-m", "kfp_bench.cli", "llm-server", "--port", "0"]
    cmd += ["--first-token-ms", "10", "--token-gap-ms", "2", "--truth-log", str(truth)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert "llm server listening on http://127.0.0.1:" in line, line
        port = int(line.rsplit(":", 1)[1])
        reply = send(port, COMPLETIONS, {"prompt": "p", "max_tokens": 3, "stream": True})
        assert len(reply.content_times(chat=False)) == 3
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
    assert len(read_truth(truth).requests) == 1


def test_the_module_run_directly_refuses_a_bad_fault_with_exit_2():
    cmd = [sys.executable, "-m", "kfp_bench.sandbox.llm_server", "--fault", "melt"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "kfp-bench: llm server: --fault='melt': unknown fault 'melt'; use one of stall, drop, "
        "429, error, no-usage, wrong-usage, empty (NAME[:key=value,...]), or none"
    ]
