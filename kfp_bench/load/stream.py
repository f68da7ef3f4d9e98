"""Streamed (server-sent events) requests on the load engine's request loop: the LLM load.

``StreamAttack`` is ``engine.Attack`` with other rows: the same pacing, connections and
failures, a ``StreamBatch`` per flush, and ``X-Request-Id: <source>-<seq>`` on each request.
``StreamConn`` parses the response with httptools and its body as SSE; an event's time is the
kernel's receive time of the read that brought its blank line (``stamped.py``). A content chunk
is found by one regular expression, not ``json.loads`` (a third of the CPU on a vLLM-sized
chunk): in JSON a quote inside a string is escaped, so ``"text":"x`` comes from no other value,
and KServe's null fields (``"usage":null``, openai_chat_adapter_model.py:241 at aaac4e29) never
match. Only chunks naming ``finish_reason``, ``usage`` or ``error`` are parsed whole. When a
stream completes or fails (a row with its error, never an exception): docs/llm-metrics.md.
With a tokenizer, a stream without usage is counted from its prompt and kept chunk texts."""

from __future__ import annotations

import json
import re
from array import array

from httptools import HttpParserCallbackError, HttpParserError

from kfp_bench.load import stamped
from kfp_bench.load.connection import Connection, Sink, clock
from kfp_bench.load.engine import Attack
from kfp_bench.load.openai import SEQ_FORMAT, LlmOptions, render, request_source, sends_id
from kfp_bench.load.tokenizer import count_tokens, load_tokenizer, prompt_counts
from kfp_bench.records import (
    MARK_NO_DONE,
    MARK_OUTPUT_TOKENIZED,
    MARK_PROMPT_TOKENIZED,
    STREAM_COLUMNS,
    StreamBatch,
)

NCOLS = len(STREAM_COLUMNS)
READ_TIME_TOKENS = "read-time-tokens"  # some reads had no kernel stamp: see stamped.py
ERROR_BODY_CHARS = 200  # of an HTTP error's body, kept in its error text
# A non-empty string value; compact (vLLM, pydantic) or Python json.dumps spacing.
_CONTENT = {
    "completions": re.compile(rb'"text": ?"[^"]').search,
    "chat": re.compile(rb'"content": ?"[^"]').search,
}
#: The JSON string of a chunk's text, escapes and all (chat: by ``delta.content``).
_TEXT = {
    False: re.compile(rb'"text": ?"((?:[^"\\]|\\.)*)"').search,
    True: re.compile(rb'"content": ?"((?:[^"\\]|\\.)*)"').search,
}
_RARE = re.compile(rb'"(?:finish_reason": ?"|usage": ?\{|error": ?[{"]|object": ?"error")').search


class StreamConn(Connection):
    """One keep-alive connection carrying one streamed request at a time (``connection.Connection``:
    its bytes come in with the kernel's receive time, ``data_received_at``)."""

    def __init__(self, attack: StreamAttack):
        super().__init__(attack)
        self.nout = 0
        self.closed_by_peer = False  # its end came with the close: never reused
        self._reset()

    def _reset(self) -> None:
        self.first = self.headers = self.done_at = 0.0
        self.status = self.chunks = self.nbody = 0
        self.prompt_tokens = self.completion_tokens = self.cached_tokens = -1
        self.times = array("d")
        self.pending = b""
        self.error = ""
        self.err_body = None
        self.finished = self.done_seen = self.framed = False
        self.texts = [] if self.a.keep_texts else None

    def send(self, seq: int, intended: float | None) -> None:
        self.busy = True
        self.seq = seq
        self._reset()
        head, tail = self.a.parts_of(seq)
        data = head + SEQ_FORMAT % seq + tail if self.a.ids else head + tail
        self.nout = len(data)
        self.sent = self.last = t = clock()
        self.intended = t if intended is None else intended
        self.write(data)
        self.written = clock()

    def data_received_at(self, data, t: float):
        """``data`` was received at ``t`` (``stamped.StampedTransport``: the kernel's time)."""
        self.last = t  # the time of every event whose blank line is in ``data``
        try:
            self.feed(data)
        except (HttpParserCallbackError, HttpParserError) as exc:
            self.feed_failed(exc)

    def on_headers_complete(self):
        self.headers = self.last
        self.status = self.status_code()
        if self.status >= 400:
            self.err_body = bytearray()

    def on_header(self, name: bytes, value: bytes) -> None:
        # a body with neither a length nor the chunked encoding ends when the server closes
        # (RFC 9112 section 6.3): such a close is the stream's clean end
        if name.lower() in (b"content-length", b"transfer-encoding"):
            self.framed = True

    def on_body(self, body):
        self.nbody += len(body)
        if not self.busy:
            return
        if self.err_body is not None:
            self.err_body += body[: ERROR_BODY_CHARS - len(self.err_body)]
            return
        buf = self.pending + body if self.pending else body
        if b"\r" in buf:  # SSE allows CRLF line ends; a lone last \r waits for its \n
            buf = buf.replace(b"\r\n", b"\n")
        start = 0
        while (nl := buf.find(b"\n", start)) >= 0:
            if buf[nl + 1 : nl + 2] == b"\n" and buf.startswith(b"data: {", start):
                # the usual event, one data line, inline: one search of a byte, a call less
                data = buf[start + 6 : nl]
                start = nl + 2
                self.chunks += 1
                if _RARE(data):
                    self._rare(data)
                elif self.a.content(data):
                    self._content(data)
                continue
            end = buf.find(b"\n\n", nl)
            if end < 0:
                break
            self._event(buf[start:end])
            start = end + 2
        self.pending = buf[start:]

    def _event(self, ev: bytes) -> None:
        if ev.startswith(b"data:") and b"\n" not in ev:  # the usual event: one data line
            data, name = ev[6:] if ev[5:6] == b" " else ev[5:], b""
        else:
            data, name = _fields(ev)
            if data is None:  # a comment or a keep-alive: no data field
                return
        if data == b"[DONE]":
            self.done_seen = True
            self.done_at = self.done_at or self.last
            return
        self.chunks += 1
        if name == b"error":
            self._error_event(data)
        elif _RARE(data):
            self._rare(data)
        elif self.a.content(data):
            self._content(data)

    def _content(self, data: bytes) -> None:
        self.times.append(self.last)
        if not self.first:
            self.first = self.last
        if self.texts is not None:  # a reference only: decoded if no usage comes
            self.texts.append(data)

    def _rare(self, data: bytes) -> None:
        """A chunk with a finish_reason, the usage or an error: read it whole."""
        try:
            doc = json.loads(data)
        except ValueError:
            return
        if not isinstance(doc, dict):
            return
        if "error" in doc or doc.get("object") == "error":
            self._error_event(data, doc)
            return
        choices = doc.get("choices") or [{}]
        c = choices[0] if isinstance(choices[0], dict) else {}
        text = (c.get("delta") or {}).get("content") if self.a.chat else c.get("text")
        if isinstance(text, str) and text:
            self._content(data)
        if c.get("finish_reason"):
            self.finished = True
        usage = doc.get("usage")
        if isinstance(usage, dict):
            self.prompt_tokens = _int(usage.get("prompt_tokens"))
            self.completion_tokens = _int(usage.get("completion_tokens"))
            details = usage.get("prompt_tokens_details")  # vLLM: absent, or null, when 0
            if isinstance(details, dict):
                self.cached_tokens = _int(details.get("cached_tokens"))

    def _error_event(self, data: bytes, doc=None) -> None:
        if doc is None:
            try:
                doc = json.loads(data)
            except ValueError:
                doc = data.decode("utf-8", "replace")
        err = doc.get("error", doc) if isinstance(doc, dict) else doc
        msg = err.get("message", err) if isinstance(err, dict) else err
        if not self.error:
            self.error = f"stream: error event: {str(msg)[:ERROR_BODY_CHARS]}"
            self.done_at = self.done_at or self.last

    def on_message_complete(self):
        if not self.busy or not self.written:
            return
        if self.err_body is not None:
            text = bytes(self.err_body).decode("utf-8", "replace").strip()
            error = f"http {self.status}: {text}" if text else f"http {self.status} (empty body)"
        elif self.error:
            error = self.error
        elif not self.finished:
            error = (
                "stream: [DONE] without a finish_reason"
                if self.done_seen
                else "stream: ended before [DONE]"
            )
        else:  # a finish_reason, then [DONE] or the body's clean end
            error = ""
        a = self.a
        self.busy = False
        a.inflight -= 1
        a.row(self, self.done_at or self.last, error)
        if a.keepalive and self.keeps_alive() and not self.closed_by_peer:
            a.after(self)
        else:
            self.abort(graceful=True)
            a.after(None)

    def connection_lost(self, exc):
        if (
            self.busy
            and exc is None
            and self.finished
            and not self.error
            and not self.pending  # closed after a whole event, not inside one
            and (self.done_seen or (self.headers and not self.framed))
        ):
            # a close-delimited body, or one cut after its finish_reason and [DONE] (llama.cpp):
            # its end is the close, and the next request goes on a new connection
            self.closed_by_peer = True
            self.on_message_complete()
        super().connection_lost(exc)


def _fields(ev: bytes):
    """(data, event name) of an SSE event of several lines; data None when it has none."""
    data, name = None, b""
    for line in ev.split(b"\n"):
        field, _, value = line.partition(b":")
        value = value[1:] if value[:1] == b" " else value
        if field == b"data":
            data = value if data is None else data + b"\n" + value
        elif field == b"event":
            name = value
    return data, name


def chunk_text(data: bytes, chat: bool) -> str:
    """The text of a content chunk (its data field): the JSON string the content expression
    found, decoded alone (a third of ``json.loads``' CPU on a whole chunk), else the chunk read
    whole."""
    m = _TEXT[chat](data)
    if m is not None:
        raw = m.group(1)
        if b"\\" not in raw:
            return raw.decode("utf-8", "replace")
        try:
            return json.loads(b'"' + raw + b'"')
        except ValueError:
            pass
    try:
        c = json.loads(data)["choices"][0]
        text = (c.get("delta") or {}).get("content") if chat else c.get("text")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""
    return text if isinstance(text, str) else ""


def _int(v) -> int:
    return v if isinstance(v, int) and v >= 0 else -1


class StreamAttack(Attack):
    """One process's share of a streaming LLM load: ``Attack``'s, its requests cycling through
    ``prompts`` (objects with ``.text`` and ``.output_tokens``), their ids prefixed by
    ``source`` (``openai.request_source()`` when not given)."""

    ncols = NCOLS

    def __init__(
        self,
        opts: LlmOptions,
        prompts,
        sink: Sink,
        *,
        start_at: float | None = None,
        phase: float = 0.0,
        source: str | None = None,
    ):
        super().__init__(opts, sink, start_at=start_at, phase=phase)
        self.source = source or request_source()
        self.parts = render(opts, prompts, self.source)  # before the attack: no encoding later
        self.ids = sends_id(opts)
        self.tokenizer = load_tokenizer(opts.tokenizer) if opts.tokenizer else None
        self.chat = opts.endpoint == "chat"
        # each prompt's tokens as the server counts them, for rows without usage
        tok = self.tokenizer
        self.prompt_tokens = prompt_counts(tok, opts.tokenizer, self.chat, prompts) if tok else []
        self.content = _CONTENT[opts.endpoint]
        self.conn_class = StreamConn
        self.keep_texts = self.tokenizer is not None  # a stream's texts, counted if no usage
        self.fast = False  # the burst path of send_batch writes one shared request
        self.times = array("d")
        self.request_bytes = array("q")
        self._rx_buf = stamped.reader_buffer()
        self.rx_counts = [0, 0]  # reads with and without the kernel's receive time

    def _open(self):
        """A coroutine that opens one connection whose reads carry the kernel's receive time."""
        return stamped.open_stamped(
            self.loop,
            lambda: self.conn_class(self),
            self._addr,
            self._rx_buf,
            self.rx_counts,
            ssl_context=self.ssl,
            server_hostname=self.target.server_hostname if self.ssl else None,
        )

    def parts_of(self, seq: int) -> tuple[bytes, bytes]:
        """Request ``seq`` as ``render`` gives it: its prompt's (head, tail)."""
        return self.parts[seq % len(self.parts)]

    def _finish(self):
        if self.rx_counts[1]:
            self.flags.add(READ_TIME_TOKENS)
        return super()._finish()

    def row(self, c: StreamConn, done: float, error: str) -> None:
        """Write the row of the request on ``c``, which ended at ``done`` (failed: ``error``)."""
        i = self.off
        if i == self.cap:
            self.grow()
        r = self.rows
        r[i] = c.seq
        r[i + 1] = c.intended
        r[i + 2] = c.sent
        r[i + 3] = c.written
        r[i + 4] = c.headers
        r[i + 5] = c.first
        r[i + 6] = done
        r[i + 7] = c.status
        r[i + 8] = 1 if error else 0
        r[i + 9] = c.chunks
        r[i + 10] = len(c.times)
        r[i + 11] = c.prompt_tokens
        r[i + 12] = c.completion_tokens
        r[i + 13] = c.nbody
        marks = 0
        if not error and not c.done_seen:
            marks = MARK_NO_DONE  # flagged by the stats (no-done-marker), with their count
        if self.tokenizer is not None and (c.times or not error):  # the prompt was read
            marks |= self._tokenized(c, r, i)
        r[i + 14] = marks
        r[i + 15] = c.cached_tokens
        self.off = i + NCOLS
        self.times.extend(c.times)
        self.request_bytes.append(c.nout if c.written else 0)
        if error:
            self.errors.append(error)
        if c.connect:
            self.connects.append((c.seq, c.connect, c.dns))
            c.connect = c.dns = 0.0

    def _tokenized(self, c: StreamConn, r, i: int) -> int:
        """Put the tokenizer's counts in row ``i`` where no usage came; their ``marks``."""
        marks = 0
        if c.prompt_tokens < 0:
            r[i + 11] = self.prompt_tokens[c.seq % len(self.prompt_tokens)]
            marks |= MARK_PROMPT_TOKENIZED
        if c.completion_tokens < 0:
            text = "".join(chunk_text(data, self.chat) for data in c.texts)
            r[i + 12] = count_tokens(self.tokenizer, text, False) if text else 0
            marks |= MARK_OUTPUT_TOKENIZED
        return marks

    def fail(self, conn: StreamConn, error: str) -> None:
        if not conn.busy:
            return
        conn.busy = False
        self.inflight -= 1
        if conn.headers and error.startswith("read: "):
            # mid-stream: say so, e.g. "stream: connection reset by peer before [DONE]"
            closed = error.startswith("read: server closed")
            if conn.done_seen:  # llama.cpp cuts a stream short so ([DONE], then the close)
                error = "stream: [DONE] without a finish_reason, then the close"
            else:
                error = f"stream: {'connection closed' if closed else error[6:]} before [DONE]"
        self.row(conn, clock(), conn.error or error)

    def _row_error(self, seq, intended, sent, written, done, error, connect=0.0) -> None:
        c = self.conn_class(self)  # an empty request: nothing came back
        c.seq, c.intended, c.sent, c.written, c.connect = seq, intended, sent, written, connect
        self.row(c, done, error)

    def _sweep(self) -> None:
        """Fail requests past the whole-request timeout, or stalled past the stall timeout."""
        now = clock()
        timeout, stall = self.opts.timeout, self.opts.stall_timeout
        for conn in list(self.conns):
            if not conn.busy:
                continue
            if timeout and conn.sent < now - timeout:
                error = f"read: timeout, the stream did not end within {timeout:g}s"
            elif stall and conn.last < now - stall:
                error = f"stall: no byte for {stall:g}s"
            else:
                continue
            self.fail(conn, error)
            conn.abort()
            self.after(None)
        self._sweep_handle = self.loop.call_later(self._sweep_every(), self._sweep)

    def _sweep_every(self) -> float:
        limits = [t for t in (self.opts.timeout, self.opts.stall_timeout) if t]
        return min(0.1, min(limits) / 10) if limits else 0.1

    def _take_batch(self) -> StreamBatch:
        data = array("d")
        data.frombytes(memoryview(self.buf)[: self.off * 8])
        self.off = 0
        batch = StreamBatch(
            self.t0, data, self.times, self.errors, self.connects, self.request_bytes, self.source
        )
        self.times, self.request_bytes = array("d"), array("q")
        self.errors, self.connects = [], []
        return batch
