"""A plain socket client for the LLM server's tests: sends one request, times each SSE event.

No HTTP library: the bytes are read as they come, the chunked body and the server-sent events
parsed here, and every event stamped with ``time.perf_counter()`` when the read that completed it
returned, so the tests measure what a client sees, independently of the server's own account.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from dataclasses import dataclass, field


@dataclass
class Reply:
    status: int = 0
    headers: dict = field(default_factory=dict)
    sent: float = 0.0  # perf_counter just before the request was written
    head_at: float = 0.0
    events: list = field(default_factory=list)  # (perf_counter, data text) per SSE event
    body: bytes = b""  # a non-chunked body
    complete: bool = False  # the chunked body ended with its last-chunk (0\r\n\r\n)
    closed: bool = False  # the server closed the connection

    def chunks(self) -> list[dict]:
        """The JSON events, in order ([DONE] left out)."""
        return [json.loads(d) for _, d in self.events if d != "[DONE]"]

    def content_times(self, chat: bool) -> list[float]:
        """Arrival times of the events that carry content text (not role-only, not empty)."""
        out = []
        for t, d in self.events:
            if d == "[DONE]":
                continue
            for c in json.loads(d).get("choices", []):
                text = c["delta"].get("content") if chat else c.get("text")
                if text:
                    out.append(t)
        return out


def request_bytes(path: str, body: dict, headers: dict | None = None) -> bytes:
    data = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


class _Parser:
    """Feeds bytes in; fills a Reply: the head, then a chunked or Content-Length body."""

    def __init__(self, reply: Reply) -> None:
        self.reply, self.buf, self.sse, self.state = reply, b"", b"", "head"
        self.length = -1

    def feed(self, data: bytes, now: float) -> bool:
        """True once the response is whole."""
        self.buf += data
        r = self.reply
        if self.state == "head":
            head, sep, rest = self.buf.partition(b"\r\n\r\n")
            if not sep:
                return False
            lines = head.decode("latin-1").split("\r\n")
            r.status, r.head_at = int(lines[0].split()[1]), now
            r.headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
            self.buf = rest
            chunked = r.headers.get("transfer-encoding") == "chunked"
            self.state = "chunks" if chunked else "body"
            self.length = int(r.headers.get("content-length", -1))
        if self.state == "body":
            r.body = self.buf
            return len(self.buf) >= self.length >= 0
        while True:
            size_line, sep, rest = self.buf.partition(b"\r\n")
            if not sep:
                return False
            size = int(size_line, 16)
            if len(rest) < size + 2:
                return False
            self.buf = rest[size + 2 :]
            if size == 0:
                r.complete = True
                return True
            self.sse += rest[:size]
            while b"\n\n" in self.sse:
                event, _, self.sse = self.sse.partition(b"\n\n")
                for line in event.decode().split("\n"):
                    if line.startswith("data: "):
                        r.events.append((now, line[6:]))


def send(port: int, path: str, body: dict, headers=None, timeout: float = 10.0, stop_after=None):
    """One request on a new connection; the reply as it was read. ``stop_after``: close once
    that many events have come (a client going away)."""
    reply, sock = Reply(), socket.create_connection(("127.0.0.1", port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    parser = _Parser(reply)
    try:
        data = request_bytes(path, body, headers)
        reply.sent = time.perf_counter()
        sock.sendall(data)
        while True:
            try:
                data = sock.recv(65536)
            except TimeoutError:
                return reply
            now = time.perf_counter()
            if not data:
                reply.closed = True
                return reply
            if parser.feed(data, now):
                return reply
            if stop_after is not None and len(reply.events) >= stop_after:
                return reply
    finally:
        sock.close()


async def send_async(port: int, path: str, body: dict, headers=None) -> Reply:
    """``send`` on asyncio streams, for many concurrent streams from one process."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    reply = Reply()
    parser = _Parser(reply)
    data = request_bytes(path, body, headers)
    reply.sent = time.perf_counter()
    writer.write(data)
    await writer.drain()
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                reply.closed = True
                return reply
            if parser.feed(data, time.perf_counter()):
                return reply
    finally:
        writer.close()
