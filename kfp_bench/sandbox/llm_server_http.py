"""The HTTP side of the local LLM server: routes, OpenAI chunk shapes, paced streams, truth log.

This module owns one connection's life (``Connection``, an asyncio Protocol over httptools: one
request at a time, keep-alive, chunked responses) and one request's stream (``Stream``): its tokens
are due at ``arrived + first + i * gap`` (absolute deadlines on one timerfd,
``deadlines.Deadlines``, so nothing drifts), each written as one SSE event in one HTTP chunk, and
its send time taken after ``transport.write`` returned (``write_max_ms`` in the truth record bounds
how much earlier the bytes may have reached the client). uvloop's write hands the bytes to the
kernel at once when nothing is queued; a write that left bytes queued is counted in the truth record
(``queued_writes``), so the log never claims a send it did not make.

Chunk shapes follow OpenAI's and KServe's fixtures (``python/kserve/test/fixtures/openai/
completion_chunk_stream.txt``, ``chat_completion_chunk_stream.txt``, kserve/kserve@aaac4e29). With
``stream_options.include_usage`` every chunk carries ``"usage": null`` and a last chunk with
``choices: []`` carries the usage: KServe's Hugging Face server dumps each chunk whole
(``model_dump_json()``, ``python/huggingfaceserver/huggingfaceserver/generative_model.py`` line
659), and its vLLM tests (``python/huggingfaceserver/tests/test_vllm_generative.py``, lines 386-409)
expect ``usage`` None on every chunk before that final one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import time
from functools import lru_cache
from http import HTTPStatus

import httptools

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.llm_server_faults import Plan

_now = time.perf_counter  # CLOCK_MONOTONIC on Linux: comparable across processes
MAX_BODY_BYTES = 16 * 1024 * 1024
#: The prompt's first characters kept in the truth log, beside a hash of the whole of it.
PROMPT_HEAD_CHARS = 64
DONE = b"data: [DONE]\n\n"


def _chunk(data: bytes) -> bytes:
    """``data`` as one HTTP/1.1 chunk."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def _head(status: int, content_type: bytes, extra: list[bytes], length: int | None) -> bytes:
    lines = [b"HTTP/1.1 %d %s" % (status, HTTPStatus(status).phrase.encode())]
    lines.append(b"Content-Type: " + content_type)
    lines += extra
    lines.append(
        b"Transfer-Encoding: chunked" if length is None else b"Content-Length: %d" % length
    )
    return b"\r\n".join(lines) + b"\r\n\r\n"


def error_body(status: int, message: str, kind: str, code=None) -> bytes:
    """An OpenAI error document."""
    error = {"message": message, "type": kind, "param": None, "code": code or status}
    return json.dumps({"error": error}).encode()


def prompt_text(body: dict, chat: bool) -> str:
    """The prompt as the truth log hashes it: the completion's prompt (a list's items joined by
    newlines), or the chat messages' contents joined by newlines."""
    if not chat:
        prompt = body.get("prompt", "")
        return "\n".join(map(str, prompt)) if isinstance(prompt, list) else str(prompt)
    parts = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(str(content or ""))
    return "\n".join(parts)


def message_digests(body: dict) -> list[dict]:
    """Each chat message's role and the SHA-256 of its content's UTF-8 (content parts joined by
    spaces), in order: what the truth log keeps of a chat request's history."""
    out = []
    for message in body.get("messages") or ():
        m = message if isinstance(message, dict) else {}
        content = m.get("content")
        if isinstance(content, list):
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        digest = hashlib.sha256(str(content or "").encode()).hexdigest()
        out.append({"role": str(m.get("role", "")), "sha256": digest})
    return out


def word_count(body: dict, chat: bool) -> int:
    """prompt_tokens: the whitespace words of the prompt, or of the chat messages' contents."""
    return len(prompt_words(body, chat))


def prompt_words(body: dict, chat: bool) -> list[str]:
    """The prompt's tokens as the server counts them: the whitespace words of the prompt (a
    list's items in turn), or of the chat messages' contents in turn."""
    if not chat:
        prompt = body.get("prompt", "")
        return [
            w for p in (prompt if isinstance(prompt, list) else [prompt]) for w in str(p).split()
        ]
    words: list[str] = []
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        words += str(content or "").split()
    return words


def token_text(i: int) -> str:
    return f" t{i}" if i else "t0"


@lru_cache(maxsize=8192)
def _quoted(text: str) -> bytes:
    """``text`` as a JSON string; cached, as the same token texts recur in every stream."""
    return json.dumps(text).encode()


class Stream:
    """One request being answered: its plan, what it has sent so far and when."""

    def __init__(self, conn: Connection, rid: str, endpoint: str, body: dict, plan: Plan) -> None:
        self.conn, self.rid, self.endpoint, self.plan = conn, rid, endpoint, plan
        server = conn.server
        self.chat = endpoint.endswith("chat/completions")
        self.stream = bool(body.get("stream"))
        opts = body.get("stream_options") or {}
        self.include_usage = self.stream and bool(opts.get("include_usage"))
        self.words = prompt_words(body, self.chat)
        self.prompt_tokens = len(self.words)
        self.admitted = False  # answered, not refused: its prompt went through the prefix cache
        self.blocks: list[bytes] = []  # its prompt's full blocks' hashes (the prefix cache's)
        self.cached_tokens: int | None = None  # its prompt tokens the prefix cache served
        prompt = prompt_text(body, self.chat)
        self.prompt_head = prompt[:PROMPT_HEAD_CHARS]
        self.prompt_sha256 = hashlib.sha256(prompt.encode()).hexdigest()
        self.messages = message_digests(body) if self.chat else None
        self.arrived = conn.arrived
        self.begun = self.arrived  # when its slot was given (``start``): its timing's origin
        self.head = 0.0
        self.times: list[float] = []
        # The send times as JSON text, made one at a time as tokens go out: encoding a long
        # stream's record at its end (float repr dominates) would hold up other streams' tokens
        # when many end together.
        self.times_json: list[str] = []
        self.queued = 0  # writes that left bytes queued in user space
        # The longest token write: a send time is when write() returned, and the bytes may have
        # reached the client up to this much earlier (the kernel can run the woken reader first).
        self.write_max = 0.0
        self.outcome = "ok"
        self.delay = 0.0  # a stall's shift of every later deadline
        self.ended = False
        kind = "chatcmpl" if self.chat else "cmpl"
        self.id = f"{kind}-{rid}"
        created = int(time.time())
        model = json.dumps(str(body.get("model") or server.options.model))
        obj = "chat.completion.chunk" if self.chat else "text_completion"
        self._pre = (
            f'{{"id":{json.dumps(self.id)},"object":"{obj}","created":{created},'
            f'"model":{model},"choices":['
        ).encode()
        self._post = b'],"usage":null}' if self.include_usage else b"]}"
        self.model, self.created = json.loads(model), created

    # --- sending ------------------------------------------------------------------------------

    def start(self, queued: bool = False) -> None:
        """Answer it: its timing counts from now when it waited for a slot (``queued``)."""
        self.begun = _now() if queued else self.arrived
        self.admitted = True
        self.cached_tokens, self.blocks = self.conn.server.metrics.admitted(self.words)
        rid = b"X-Request-Id: " + self.rid.encode()
        if not self.stream:
            due = self.begun + self.plan.first + max(0, self.plan.tokens - 1) * self.plan.gap
            self.conn.server.deadlines.at(due, self._whole)
            return
        extra = [b"Cache-Control: no-cache", rid]
        self._write(_head(200, b"text/event-stream", extra, None))
        self.head = _now()
        if self.chat:  # the role chunk, at once: a client must not take it for the first token
            self._event(b'{"index":0,"delta":{"role":"assistant","content":""},'
                        b'"logprobs":null,"finish_reason":null}')  # fmt: skip
        self._schedule(0)

    def _due(self, i: int) -> float:
        return self.begun + self.plan.first + i * self.plan.gap + self.delay

    def _schedule(self, i: int) -> None:
        stall = self.plan.stall()
        if stall and i == stall[0] and not self.delay:
            if stall[1] == float("inf"):
                self.outcome = "stalled"
                return  # the stream never goes on; it ends when the client closes
            self.delay = stall[1]
        self.conn.server.deadlines.at(self._due(i), self._token, i)

    def _token(self, i: int) -> None:
        if self.ended or self.conn.transport is None:
            return
        plan = self.plan
        if plan.cut_after("drop") == i:
            self.outcome = "dropped"
            self.conn.abort()
            return
        if plan.cut_after("error") == i:
            self.outcome = "error-event"
            err = error_body(500, f"injected error after {i} tokens", "InternalServerError")
            self._write(_chunk(b"data: " + err + b"\n\n") + _chunk(DONE) + b"0\r\n\r\n")
            self.finish()
            return
        fault = plan.fault
        if fault and fault.name == "empty" and i % int(fault.get("every")) == 0:
            self._event(self._choice("", None))
        last = i == plan.tokens - 1
        before = _now()
        self._event(self._choice(token_text(i), plan.finish if last else None))
        after = _now()
        self.times.append(after)
        self.times_json.append(repr(after))
        self.conn.server.metrics.token(self, after)
        self.write_max = max(self.write_max, after - before)
        if not last:
            self._schedule(i + 1)
            return
        tail = b""
        if self.include_usage and not (fault and fault.name == "no-usage"):
            tail = _chunk(b"data: " + self._usage_chunk() + b"\n\n")
        self._write(tail + _chunk(DONE) + b"0\r\n\r\n")
        self.finish()

    def _choice(self, text: str, finish: str | None) -> bytes:
        reason = b"null" if finish is None else b'"%s"' % finish.encode()
        if self.chat:
            return (b'{"index":0,"delta":{"content":%s},"logprobs":null,"finish_reason":%s}'
                    % (_quoted(text), reason))  # fmt: skip
        return (b'{"index":0,"text":%s,"logprobs":null,"finish_reason":%s}'
                % (_quoted(text), reason))  # fmt: skip

    def _event(self, choice: bytes) -> None:
        self._write(_chunk(b"data: " + self._pre + choice + self._post + b"\n\n"))

    def _sent(self) -> int:
        """Content tokens really sent (a whole answer: all of them, once its head is written)."""
        if self.stream:
            return len(self.times)
        return self.plan.tokens if self.head else 0

    def usage(self) -> dict:
        """The usage the server reports: the true counts unless ``wrong-usage`` says otherwise.

        ``prompt_tokens_details.cached_tokens`` as vLLM 0.11.0 fills it: the prompt tokens its
        scheduler found computed when it first scheduled the request (its prefix-cache hit,
        vllm/v1/core/sched/scheduler.py lines 527-529), put in the usage only with
        ``--enable-prompt-tokens-details`` and only when not 0: ``if
        self.enable_prompt_tokens_details and num_cached_tokens`` in
        vllm/entrypoints/openai/serving_chat.py lines 1101-1103 (the streamed usage chunk) and
        1409-1411 (the whole answer), serving_completion.py lines 471-473 and 587-590. (vLLM's
        whole answer then carries ``"prompt_tokens_details": null``, pydantic's dump of the
        unset field; this server leaves it out, as the streamed chunk does.)
        """
        completion = len(self.times) if self.stream else self.plan.tokens
        f = self.plan.fault
        if f and f.name == "wrong-usage":
            completion += int(f.get("by"))
        usage = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": self.prompt_tokens + completion,
        }
        if self.cached_tokens and self.conn.server.options.enable_prompt_tokens_details:
            usage["prompt_tokens_details"] = {"cached_tokens": self.cached_tokens}
        return usage

    def _usage_chunk(self) -> bytes:
        return (
            self._pre
            + b'],"usage":'
            + json.dumps(self.usage(), separators=(",", ":")).encode()
            + b"}"
        )

    def _whole(self) -> None:
        """The non-streaming answer: one JSON body once every token is generated."""
        if self.ended or self.conn.transport is None:
            return
        text = "".join(token_text(i) for i in range(self.plan.tokens))
        if self.chat:
            choice = {"index": 0, "message": {"role": "assistant", "content": text}}
            choice["logprobs"] = None
            obj = "chat.completion"
        else:
            choice, obj = {"index": 0, "text": text, "logprobs": None}, "text_completion"
        choice["finish_reason"] = self.plan.finish
        doc = {"id": self.id, "object": obj, "created": self.created, "model": self.model}
        doc.update(choices=[choice], usage=self.usage())
        body = json.dumps(doc).encode()
        extra = [b"X-Request-Id: " + self.rid.encode()]
        self._write(_head(200, b"application/json", extra, len(body)) + body)
        self.head = _now()
        self.finish()

    def _write(self, data: bytes) -> None:
        transport = self.conn.transport
        if transport is not None:
            transport.write(data)
            if transport.get_write_buffer_size():
                self.queued += 1

    # --- ending -------------------------------------------------------------------------------

    def finish(self) -> None:
        """The request is over (answered, cut, or its client gone): log it once."""
        if self.ended:
            return
        self.ended = True
        done = _now()
        self.conn.server.truth.write(
            self.times_json,
            {
                "id": self.rid,
                "endpoint": self.endpoint,
                "stream": self.stream,
                "arrived": self.arrived,
                "admitted": self.begun,
                "head": self.head or None,
                "tokens": None,  # filled by TruthLog.write from times_json
                "done": done,
                "prompt_tokens": self.prompt_tokens,
                "cached_tokens": self.cached_tokens,
                "prompt_head": self.prompt_head,
                "prompt_sha256": self.prompt_sha256,
                "messages": self.messages,
                "completion_tokens": self._sent(),
                "usage": self.usage() if self.include_usage or not self.stream else None,
                "fault": self.plan.fault.spec if self.plan.fault else None,
                "outcome": self.outcome,
                "first_token_ms": self.plan.first * 1e3,
                "token_gap_ms": self.plan.gap * 1e3,
                "queued_writes": self.queued,
                "write_max_ms": self.write_max * 1e3,
            },
        )
        self.conn.server.metrics.finished(self, done, self._sent(), self.outcome == "ok")
        if self.admitted and self.conn.server.options.slots:
            self.conn.server.release()
        if self.admitted:
            answer = [token_text(i).strip() for i in range(self._sent())]
            self.conn.server.metrics.computed(self.blocks, self.words, answer)
        self.conn.request_done(self)


class Connection:
    """One client connection: parses requests (httptools) and answers them one at a time."""

    def __init__(self, server) -> None:
        self.server = server
        self.transport = None
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""
        self.headers: dict[bytes, bytes] = {}
        self.body = bytearray()
        self.arrived = 0.0
        self.current: Stream | None = None
        self.keep_alive = True

    def connection_made(self, transport) -> None:
        self.transport = transport
        with contextlib.suppress(OSError, AttributeError):
            sock = transport.get_extra_info("socket")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections.add(self)

    def connection_lost(self, exc) -> None:
        self.transport = None
        self.server.connections.discard(self)
        if self.current is not None:
            if self.current.outcome == "ok":
                self.current.outcome = "client-gone"
            self.current.finish()

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self.refuse("upgrade not supported")
        except httptools.HttpParserError as e:
            self.refuse(f"bad request: {e}")

    def refuse(self, message: str) -> None:
        """A 400 and close; mid-stream only the close: a reply there would corrupt the stream."""
        if self.current is None:
            self.reply(400, error_body(400, message, "BadRequestError"), False)
        elif self.transport is not None:
            self.transport.close()

    def eof_received(self):
        return False

    # httptools callbacks, from feed_data
    def on_message_begin(self) -> None:
        self.url, self.headers, self.body = b"", {}, bytearray()

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers[name.lower()] = value

    def on_body(self, body: bytes) -> None:
        if len(self.body) + len(body) > MAX_BODY_BYTES:
            raise httptools.HttpParserError("request body too large")
        self.body += body

    def on_message_complete(self) -> None:
        self.arrived = _now()
        self.keep_alive = self.parser.should_keep_alive()
        if self.current is not None:  # pipelining: not something an SSE client does
            self.refuse("one request at a time")
            return
        method = self.parser.get_method()
        try:
            self.server.route(self, method, self.url.split(b"?")[0].decode("latin-1"))
        except ConfigError as e:
            self.reply(400, error_body(400, str(e), "BadRequestError"))

    # --- replies ------------------------------------------------------------------------------

    def reply(
        self, status: int, body: bytes, keep=True, extra=(), content_type=b"application/json"
    ) -> None:
        """A whole reply (JSON unless said), now."""
        if self.transport is None:
            return
        keep = keep and self.keep_alive
        lines = [*extra, *(() if keep else (b"Connection: close",))]
        self.transport.write(_head(status, content_type, lines, len(body)) + body)
        if not keep:
            self.transport.close()

    def request_done(self, stream: Stream) -> None:
        if self.current is stream:
            self.current = None
        if self.transport is not None and not self.keep_alive:
            self.transport.close()

    def abort(self) -> None:
        """Close without ending the chunked body: the client sees the stream cut short."""
        transport, self.transport = self.transport, None
        if transport is not None:
            transport.close()
        if self.current is not None:
            self.current.finish()
