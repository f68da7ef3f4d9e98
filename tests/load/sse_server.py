"""A small OpenAI-style SSE server for the streaming client's tests, with exact control of what
it sends and when (the real ``kfp-bench llm-server`` is another part's). The request's prompt
names the scenario; the server logs, per ``X-Request-Id``, the ``perf_counter`` times just before
and just after the write of each content chunk's last byte (the same clock as the client's, on
one machine): the kernel receives those bytes between the two.

Every stream that reaches its end sends the usage chunk and [DONE] in one chunk of the encoding
(two events in one read). Scenarios (the prompt text, ``name`` or ``name:arg``):
    ok:N        a role chunk (chat) or an empty chunk, N content chunks GAP apart, a
                finish_reason chunk, the usage chunk, [DONE]
    split:N     as ok, but each event goes out in two chunked-encoding chunks, the second a
                SPLIT_S later in its own TCP write
    crlf:N      as ok with CRLF line ends
    mismatch:N  as ok, usage says N + 1 completion tokens
    error       one content chunk, then an error event, then [DONE]
    early       two content chunks, then the connection closes
    reset       two content chunks, then the connection is reset (RST)
    429         HTTP 429 with a JSON error body
    stall       one content chunk, then nothing for STALL_S
    raw:NAME    the bytes ``server.raw[NAME]`` (a whole response, head and body, shaped as a real
                server's), then the connection closes
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
import time
from collections import defaultdict

GAP_S = 0.02
SPLIT_S = 0.03
STALL_S = 3.0


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(doc) -> bytes:
    return b"data: " + (doc if isinstance(doc, bytes) else json.dumps(doc).encode()) + b"\n\n"


class SseServer:
    """``ssl``: a server-side ``ssl.SSLContext`` to serve HTTPS with; None for HTTP."""

    def __init__(self, ssl=None):
        self.ssl = ssl
        self.sent: dict[str, list[float]] = defaultdict(list)  # request id -> content times
        self.before: dict[str, list[float]] = defaultdict(list)  # ... and just before each write
        #: request id -> (before, after, content index or None) of every write of an event
        self.writes: dict[str, list[tuple]] = defaultdict(list)
        self.requests: list[dict] = []  # (id, body) of every request
        self.heads: list[str] = []  # the head of every request, as it came
        self.raw: dict[str, bytes] = {}  # the responses of raw:NAME
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.ssl else 'http'}://127.0.0.1:{self.port}"

    def __enter__(self):
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc):
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    async def _close(self):
        self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _serve(self):
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(
            asyncio.start_server(self._conn, "127.0.0.1", 0, ssl=self.ssl)
        )
        self._server = server
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    async def _conn(self, reader, writer):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.heads.append(head.decode("latin-1"))
                lines = head.decode("latin-1").split("\r\n")
                headers = dict(h.split(": ", 1) for h in lines[1:] if ": " in h)
                body = json.loads(await reader.readexactly(int(headers["Content-Length"])))
                rid = headers.get("X-Request-Id", "")
                self.requests.append({"id": rid, "path": lines[0].split()[1], "body": body})
                if not await self._answer(writer, rid, body):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass  # OSError: also a TLS handshake the client refused
        writer.close()

    async def _answer(self, writer, rid: str, body: dict) -> bool:
        """Answer one request; False when the connection is to close."""
        chat = "messages" in body
        prompt = body["messages"][0]["content"] if chat else body["prompt"]
        name, _, arg = prompt.partition(":")
        if name == "raw":  # a whole response as given, then the close
            writer.write(self.raw[arg])
            await writer.drain()
            return False
        if name == "429":
            err = json.dumps({"error": {"message": "rate limited", "code": 429}}).encode()
            writer.write(
                b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(err), err)
            )
            await writer.drain()
            return True
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        n = int(arg or 1)

        def piece(text, finish=None):
            choice = {"index": 0, "finish_reason": finish}
            if chat:
                choice["delta"] = {"content": text} if text is not None else {}
            else:
                choice["text"] = text or ""
            return {"id": rid, "object": "chunk", "choices": [choice]}

        eol = b"\r\n" if name == "crlf" else b"\n"

        async def send(doc, content=False):
            data = _event(doc).replace(b"\n", eol)
            if name == "split":
                # logged too: a late read that takes an event's end with the next one's first
                # half carries the first half's stamp (load/stamped.py)
                half = len(data) // 2
                before = time.perf_counter()
                writer.write(_chunk(data[:half]))
                await writer.drain()
                self.writes[rid].append((before, time.perf_counter(), None))
                await asyncio.sleep(SPLIT_S)
                data = data[half:]
            before = time.perf_counter()
            writer.write(_chunk(data))
            await writer.drain()
            after = time.perf_counter()
            self.writes[rid].append((before, after, len(self.sent[rid]) if content else None))
            if content:
                self.before[rid].append(before)
                self.sent[rid].append(after)

        role = {"id": rid, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        await send(role if chat else piece(""))
        await asyncio.sleep(GAP_S)
        for i in range(2 if name in ("early", "reset") else 1 if name in ("error", "stall") else n):
            await send(piece(f" tok{i}"), content=True)
            await asyncio.sleep(GAP_S)
        if name in ("early", "reset"):
            if name == "reset":  # linger 0: the close sends a RST
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        if name == "stall":
            await asyncio.sleep(STALL_S)
            return False
        if name == "error":
            await send({"error": {"message": "model overloaded", "type": "server_error"}})
        else:
            await send(piece("", "length"))
            tokens = n + 1 if name == "mismatch" else n
            usage = {"prompt_tokens": 7, "completion_tokens": tokens, "total_tokens": 7 + tokens}
            # the usage chunk and [DONE] share one chunk of the encoding
            tail = _event({"id": rid, "choices": [], "usage": usage}) + _event(b"[DONE]")
            writer.write(_chunk(tail.replace(b"\n", eol)) + b"0\r\n\r\n")
            await writer.drain()
            return True
        await send(b"[DONE]")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True
