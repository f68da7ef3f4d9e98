"""The floor of a Python HTTP client: uvloop + httptools with no bookkeeping at all.

``bench/run.py`` runs this beside hey, wrk and kfp-bench in case (a), so that kfp-bench's own
per-request work can be told apart from what Python, the event loop and the parser cost. It keeps
CONNECTIONS keep-alive connections busy for SECONDS against HOST:PORT (GET /), checks each status,
and prints one JSON line: {"rps": ..., "requests": ..., "errors": ...}. Its requests go out as
kfp-bench's closed loop sends them: those of the connections answered in one pass of the event
loop together, right after it (before 2026-11-30 17:10 each went out as its answer was parsed).

Usage: ``python bench/floor.py HOST PORT CONNECTIONS SECONDS``
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import uvloop
from httptools import HttpResponseParser


class _Conn(asyncio.Protocol):
    def __init__(self, request: bytes, counts: list[int], pending: list):
        self.request, self.counts, self.pending = request, counts, pending
        self.parser = HttpResponseParser(self)
        self.transport = None

    def connection_made(self, transport):
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data):
        self.parser.feed_data(data)

    def on_message_complete(self):
        self.counts[0] += 1
        if self.parser.get_status_code() != 200:
            self.counts[1] += 1
        self.pending.append(self.transport.write)
        if len(self.pending) == 1:
            asyncio.get_running_loop().call_soon(_send_pending, self.pending, self.request)


def _send_pending(pending: list, request: bytes) -> None:
    for write in pending:
        write(request)
    pending.clear()


async def _main(host: str, port: int, connections: int, seconds: float) -> dict:
    loop = asyncio.get_running_loop()
    request = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUser-Agent: floor\r\n\r\n".encode()
    counts, pending = [0, 0], []
    conns = [
        (await loop.create_connection(lambda: _Conn(request, counts, pending), host, port))[0]
        for _ in range(connections)
    ]
    start, first = time.perf_counter(), counts[0]
    await asyncio.sleep(seconds)
    n, elapsed = counts[0] - first, time.perf_counter() - start
    for t in conns:
        t.abort()
    return {"rps": n / elapsed, "requests": n, "errors": counts[1]}


if __name__ == "__main__":
    host, port, conns, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    print(json.dumps(uvloop.run(_main(host, port, conns, secs))))
