"""What crossed the socket between ``kfp-bench llm`` and a real LLM server, for
``llm_real_servers.py``: a recording TCP proxy whose log is the truth of each response's chunk
times (the time each SSE event's last byte reached the proxy, ``perf_counter``) and of which
responses ended (a response the server's close cut off is kept, marked incomplete), and a raw
recorder that keeps one response's bytes exactly as received (head, chunked encoding and all)
for the fixtures under ``tests/data/llm_streams/``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from dataclasses import dataclass, field

import httptools


@dataclass
class Exchange:
    """One request and its response on a proxied connection."""

    request_id: str = ""
    body: dict = field(default_factory=dict)
    sent: float = 0.0  # the request's first byte at the proxy
    status: int = 0
    events: list = field(default_factory=list)  # (time, data bytes) of every SSE data event
    done: float = 0.0
    complete: bool = True  # False: the connection closed inside the response (its last read)

    def content(self, chat: bool) -> list[tuple[float, str]]:
        """(time, text) of every chunk that carries generated text."""
        out = []
        for t, data in self.events:
            try:
                doc = json.loads(data)
            except ValueError:
                continue
            for c in (doc.get("choices") or []) if isinstance(doc, dict) else []:
                text = (c.get("delta") or {}).get("content") if chat else c.get("text")
                if isinstance(text, str) and text:
                    out.append((t, text))
        return out

    def whole(self) -> bool:
        """Whether the answer ended: its message did, or a finish_reason and ``[DONE]`` came
        before the close (llama.cpp interrupts a stream after its last chunk too)."""
        if self.complete:
            return True
        finished = done = False
        for _, data in self.events:
            done = done or data == b"[DONE]"
            try:
                doc = json.loads(data)
            except ValueError:
                continue
            for c in (doc.get("choices") or []) if isinstance(doc, dict) else []:
                finished = finished or bool(isinstance(c, dict) and c.get("finish_reason"))
        return finished and done

    def usage(self) -> dict | None:
        for _, data in reversed(self.events):
            try:
                doc = json.loads(data)
            except ValueError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("usage"), dict):
                return doc["usage"]
        return None


class _Side:
    """httptools callbacks of one direction of one connection."""

    def __init__(self, on_complete):
        self.headers: dict[str, str] = {}
        self.body = bytearray()
        self.on_complete = on_complete
        self.now = 0.0

    def on_message_begin(self):
        self.headers, self.body = {}, bytearray()

    def on_header(self, name, value):
        self.headers[name.decode("latin-1").lower()] = value.decode("latin-1")

    def on_body(self, body):
        self.body += body

    def on_message_complete(self):
        self.on_complete(self)


class RecordingProxy:
    """A TCP proxy on 127.0.0.1 in a thread of its own; ``exchanges`` holds every request."""

    def __init__(self, upstream_port: int):
        self.upstream = upstream_port
        self.exchanges: list[Exchange] = []
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self):
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    def _serve(self):
        asyncio.set_event_loop(self.loop)
        srv = self.loop.run_until_complete(asyncio.start_server(self._conn, "127.0.0.1", 0))
        self.port = srv.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    async def _conn(self, creader, cwriter):
        sreader, swriter = await asyncio.open_connection("127.0.0.1", self.upstream)
        queue: list[Exchange] = []

        def request_done(side):
            ex = queue[-1]
            ex.request_id = side.headers.get("x-request-id", "")
            try:
                ex.body = json.loads(bytes(side.body) or b"{}")
            except ValueError:
                ex.body = {}

        req = _Side(request_done)

        def request_begins():
            req.headers, req.body = {}, bytearray()
            queue.append(Exchange(sent=req.now))

        req.on_message_begin = request_begins
        req_parser = httptools.HttpRequestParser(req)
        pending = bytearray()
        current: list[Exchange] = []

        def body_part(data):
            nonlocal pending
            pending += data
            while (end := pending.find(b"\n\n")) >= 0:
                ev, pending = bytes(pending[:end]), pending[end + 2 :]
                for line in ev.split(b"\n"):
                    if line.startswith(b"data:"):
                        current[0].events.append((resp.now, line[5:].strip()))

        def response_done(side):
            ex = current.pop(0)
            ex.done = side.now
            self.exchanges.append(ex)

        resp = _Side(response_done)
        resp.on_body = lambda b: body_part(bytes(b).replace(b"\r\n", b"\n"))
        resp.on_headers_complete = lambda: setattr(current[0], "status", parser.get_status_code())
        resp.on_message_begin = lambda: current.append(queue.pop(0)) if not current else None
        parser = httptools.HttpResponseParser(resp)

        async def upstream():
            while data := await creader.read(65536):
                req.now = time.perf_counter()
                req_parser.feed_data(data)
                swriter.write(data)
            swriter.close()

        async def downstream():
            while data := await sreader.read(65536):
                resp.now = time.perf_counter()
                cwriter.write(data)
                parser.feed_data(data)
            cwriter.close()

        try:
            await asyncio.gather(upstream(), downstream())
        except (ConnectionError, httptools.HttpParserError):
            cwriter.close()
            swriter.close()
        finally:  # a response cut off by the close (llama.cpp's interrupted streams), or none
            for ex in current + queue:
                ex.complete, ex.done = False, resp.now
                self.exchanges.append(ex)


def record_raw(port: int, request: bytes, timeout: float = 120.0) -> bytes:
    """The bytes of one response as received, read until its message ends (or the close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        return read_response(s)


def record_interrupted(port: int, first: bytes, second: bytes, delay: float = 0.0,
                       timeout: float = 120.0) -> bytes:  # fmt: skip
    """The bytes of ``first``'s response as received when ``second`` is sent on another
    connection ``delay`` seconds after ``first``'s first bytes have come (llama.cpp: the first
    stream is cut short once another request waits); ``second``'s answer is read and dropped."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as a:
        a.sendall(first)
        start = a.recv(65536)
        time.sleep(delay)
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as b:
            b.sendall(second)
            out = read_response(a, start)
            read_response(b)
    return out


def read_response(s: socket.socket, start: bytes = b"") -> bytes:
    """What ``s`` receives (after ``start``, already read) until a whole response has come, or
    the close."""
    done = threading.Event()

    class _Cb:
        def on_message_complete(self):
            done.set()

    parser = httptools.HttpResponseParser(_Cb())
    out = bytearray(start)
    if start:
        parser.feed_data(start)
    while not done.is_set():
        data = s.recv(65536)
        if not data:
            break
        out += data
        parser.feed_data(data)
    return bytes(out)


def http_post(path: str, body: dict, headers: dict | None = None) -> bytes:
    """A request as kfp-bench writes it: HTTP/1.1, keep-alive, a JSON body."""
    data = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", "Content-Type: application/json"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    lines.append(f"Content-Length: {len(data)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data
