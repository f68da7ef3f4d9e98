"""How the streaming client ends and counts the streams of real OpenAI-compatible servers: the
fixture server (tests/load/sse_server.py, ``raw:NAME``) answers with whole responses shaped as
each server's are (issue 29's runs; the recorded bytes of the real servers join these as
fixtures later), and the rows are read as test_stream.py reads them."""

from __future__ import annotations

import json
import uuid

import pytest
import tokenizers
from tokenizers.models import WordLevel
from tokenizers.pre_tokenizers import Whitespace

from kfp_bench.errors import ConfigError
from kfp_bench.load.openai import LlmOptions, request_source
from kfp_bench.load.prompts import VOCAB
from kfp_bench.load.stream import chunk_text
from kfp_bench.records import MARK_NO_DONE, MARK_OUTPUT_TOKENIZED, MARK_PROMPT_TOKENIZED
from tests.load.test_stream import _run, sse  # noqa: F401 (sse: the module's server fixture)

WORDS = [" river?", " stone", " green", " water."]  # 4 chunks, 6 words and marks


def _head(chunked=True):
    framing = b"Transfer-Encoding: chunked\r\n" if chunked else b"Connection: close\r\n"
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n" + framing + b"\r\n"


def _chunked(events: list[bytes], end=True) -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(e), e) for e in events)
    return body + (b"0\r\n\r\n" if end else b"")


def _sse(doc) -> bytes:
    return b"data: " + json.dumps(doc, separators=(",", ":")).encode() + b"\n\n"


def _completion(text, finish=None, usage=None) -> bytes:
    """A chunk as KServe's pydantic models write it: nulls kept, compact."""
    choice = {"finish_reason": finish, "index": 0, "logprobs": None, "text": text}
    doc = {"id": "cmpl-1", "choices": [choice], "model": "m", "object": "text_completion"}
    return _sse({**doc, "system_fingerprint": None, "usage": usage})


def _chat(text, finish=None, usage=None) -> bytes:
    delta = {"content": text, "role": "assistant"} if text is not None else {}
    choice = {"delta": delta, "index": 0, "finish_reason": finish}
    doc = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [choice]}
    return _sse({**doc, **({"usage": usage} if usage else {})})


USAGE = {"prompt_tokens": 3, "completion_tokens": 6, "total_tokens": 9}
#: KServe huggingfaceserver (transformers backend, CPU): one chunk a word, no usage even with
#: include_usage, a finish_reason chunk, then [DONE].
KSERVE_WORDS = _head() + _chunked(
    [_completion(w) for w in WORDS] + [_completion("", "length"), b"data: [DONE]\n\n"]
)
#: transformers serve 5.x: a finish_reason and the whole usage, then the chunked body's end,
#: no [DONE].
TRANSFORMERS_SERVE = _head() + _chunked(
    [_chat(None), *(_chat(w) for w in WORDS), _chat(None, "stop", USAGE)]
)
#: The same stream whose body is close-delimited: the close after a whole event ends it.
CLOSE_AFTER_FINISH = _head(chunked=False) + b"".join(
    [*(_chat(w) for w in WORDS), _chat(None, "stop", USAGE)]
)
#: ... closed inside an event: cut, not ended.
CLOSE_INSIDE_EVENT = CLOSE_AFTER_FINISH[:-5]
#: A stream whose body ends cleanly before any finish_reason: cut short, a failure.
NO_FINISH = _head() + _chunked([_chat(w) for w in WORDS])
#: llama-cpp-python's server refusing a request id that is no UUID: a bare 400.
EMPTY_400 = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n"


def _word_tokenizer(tmp_path) -> str:
    """A word-level tokenizer.json that splits off punctuation ("river?" is 2 tokens)."""
    vocab = {w: i for i, w in enumerate(["[UNK]", "?", ".", *VOCAB])}
    tok = tokenizers.Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    path = tmp_path / "tokenizer.json"
    tok.save(str(path))
    return str(path)


def _raw(sse, name, body, **kw):  # noqa: F811 (sse: the fixture's value)
    sse.raw[name] = body
    rows, _ = _run(sse.url, sse_log=sse, prompts=[f"raw:{name}"], **kw)
    ((row, times, error, source),) = rows
    return row, times, error


def test_a_stream_without_done_after_a_finish_reason_completes_marked(sse):  # noqa: F811
    """transformers serve 5.x's chat streams: finish_reason and usage, no [DONE]."""
    row, times, error = _raw(sse, "tserve", TRANSFORMERS_SERVE, endpoint="chat")
    assert (row["outcome"], error, len(times)) == (0, "", 4)
    assert row["marks"] == MARK_NO_DONE
    assert (row["prompt_tokens"], row["completion_tokens"]) == (3, 6)


def test_a_close_delimited_stream_ends_at_a_close_after_a_whole_event(sse):  # noqa: F811
    """A server that frames its SSE body by closing the connection (HTTP/1.0 style)."""
    row, _, error = _raw(sse, "close", CLOSE_AFTER_FINISH, endpoint="chat")
    assert (row["outcome"], error, row["marks"]) == (0, "", MARK_NO_DONE)
    row, _, error = _raw(sse, "cut", CLOSE_INSIDE_EVENT, endpoint="chat")
    assert row["outcome"] == 1 and error == "stream: connection closed before [DONE]"


def test_a_stream_that_ends_before_a_finish_reason_fails(sse):  # noqa: F811
    row, _, error = _raw(sse, "nofinish", NO_FINISH, endpoint="chat")
    assert (row["outcome"], error) == (1, "stream: ended before [DONE]")


def test_an_empty_error_body_is_said_to_be_empty(sse):  # noqa: F811
    """llama-cpp-python's server (0.3.x) answers a bad X-Request-Id so."""
    row, _, error = _raw(sse, "e400", EMPTY_400)
    assert (row["outcome"], row["status"], error) == (1, 400, "http 400 (empty body)")


def test_without_usage_or_tokenizer_the_tokens_are_unknown(sse):  # noqa: F811
    """KServe huggingfaceserver's completions: word chunks, no usage."""
    row, times, error = _raw(sse, "kserve", KSERVE_WORDS)
    assert (row["outcome"], error, len(times), row["marks"]) == (0, "", 4, 0)
    assert (row["prompt_tokens"], row["completion_tokens"]) == (-1, -1)


def test_with_a_tokenizer_the_prompt_and_the_streamed_text_are_counted(sse, tmp_path):  # noqa: F811
    """KServe huggingfaceserver's completions again, with --tokenizer: the prompt's count and
    the streamed text re-tokenised (6 tokens in 4 chunks)."""
    tok = _word_tokenizer(tmp_path)
    row, times, _ = _raw(sse, "kserve", KSERVE_WORDS, tokenizer=tok)
    assert row["outcome"] == 0 and len(times) == 4
    assert row["marks"] == MARK_PROMPT_TOKENIZED | MARK_OUTPUT_TOKENIZED
    assert (row["prompt_tokens"], row["completion_tokens"]) == (3, 6)  # raw : kserve
    # usage, where it comes, is the server's: the tokenizer counts nothing then
    row, _, _ = _raw(sse, "tserve", TRANSFORMERS_SERVE, endpoint="chat", tokenizer=tok)
    assert row["marks"] == MARK_NO_DONE and row["completion_tokens"] == 6


def test_a_missing_tokenizer_is_refused_naming_the_flag(tmp_path):
    opts = LlmOptions(url="http://h/openai", model="m", tokenizer=str(tmp_path / "no.json"))
    with pytest.raises(ConfigError, match="--tokenizer .*no.json: not found"):
        opts.validate()


def test_request_ids_are_uuids_that_h_replaces_or_the_switch_drops(sse):  # noqa: F811
    """llama-cpp-python's server takes only an X-Request-Id that uuid.UUID parses."""
    source = request_source()
    assert uuid.UUID(source + "-000000000000").version == 4
    _run(sse.url, sse_log=sse, prompts=["ok:1"], requests=2)
    ids = [r["id"] for r in sse.requests]
    assert [uuid.UUID(i).version for i in ids] == [4, 4] and ids[0][:23] == ids[1][:23]
    assert [int(i[24:], 16) for i in ids] == [0, 1]  # the sequence, in the last group
    mine = "0f9e8d7c-6b5a-4321-8fed-cba987654321"
    _run(sse.url, sse_log=sse, prompts=["ok:1"], headers=(f"x-request-id: {mine}",))
    assert [h.lower().count("x-request-id") for h in sse.heads[-1:]] == [1]
    assert sse.requests[-1]["id"] == "" and mine in sse.heads[-1]  # sent in the user's case
    _run(sse.url, sse_log=sse, prompts=["ok:1"], request_id=False)
    assert "x-request-id" not in sse.heads[-1].lower()


@pytest.mark.parametrize("text", [" river", ' say "hi"\n\\now', " é中 😀", ""])
@pytest.mark.parametrize("ascii_only", [True, False])
def test_a_chunks_text_is_its_json_strings(text, ascii_only):
    """The text kept for the tokenizer is what json.loads reads, escapes and all, from the
    compact (pydantic, vLLM) and the spaced (json.dumps) forms of both endpoints."""
    for chat, doc in (
        (False, {"choices": [{"finish_reason": None, "index": 0, "text": text}], "usage": None}),
        (True, {"choices": [{"delta": {"role": "assistant", "content": text}, "index": 0}]}),
    ):
        for seps in ((",", ":"), (", ", ": ")):
            data = json.dumps(doc, ensure_ascii=ascii_only, separators=seps).encode()
            assert chunk_text(data, chat) == text


@pytest.mark.parametrize(
    ("details", "cached"),
    [
        ({"prompt_tokens_details": {"cached_tokens": 2}}, 2),  # vLLM with the flag, a hit
        ({}, -1),  # vLLM's streamed usage when none hit, or without the flag: left out
        ({"prompt_tokens_details": None}, -1),  # vLLM's whole answer then: null
        ({"prompt_tokens_details": {"cached_tokens": None}}, -1),
        ({"prompt_tokens_details": {"audio_tokens": 0}}, -1),  # OpenAI's other detail only
    ],
)
def test_the_usage_cached_tokens_are_read_where_they_come(sse, details, cached):  # noqa: F811
    usage = {**USAGE, **details}
    body = _head() + _chunked([*(_chat(w) for w in WORDS), _chat(None, "stop", usage),
                               b"data: [DONE]\n\n"])  # fmt: skip
    row, _, error = _raw(sse, f"cached{cached}", body, endpoint="chat")
    assert (row["outcome"], error, row["prompt_tokens"]) == (0, "", 3)
    assert row["cached_tokens"] == cached
