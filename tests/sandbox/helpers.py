"""Small clients and process checks shared by the sandbox tests (real loopback servers, no mocks).

The ``fault_server`` and ``model_server`` fixtures come from ``tests/conftest.py``.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import time

import psutil


def get(port: int, path: str = "/", timeout: float = 5.0, conn=None):
    """GET ``path``; return (status, headers, body, seconds to the last body byte)."""
    own = conn is None
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        start = time.perf_counter()
        conn.request("GET", path)
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, dict(resp.getheaders()), body, time.perf_counter() - start
    finally:
        if own:
            conn.close()


def children_running(module: str) -> set[int]:
    """Pids of our live (not zombie) descendant processes whose command line runs ``module``."""
    found = set()
    for proc in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE and module in " ".join(proc.cmdline()):
                found.add(proc.pid)
        except psutil.NoSuchProcess:
            pass
    return found


def gone(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` has exited (or is a zombie) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


async def _paced(port: int, path: str, rate: float, count: int, conns: int) -> list[int]:
    """Send ``count`` GETs open-loop at ``rate``/s over up to ``conns`` keep-alive connections."""
    idle: asyncio.Queue = asyncio.Queue()
    for _ in range(conns):
        idle.put_nowait(await asyncio.open_connection("127.0.0.1", port))
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()

    async def one() -> int:
        reader, writer = await idle.get()
        writer.write(request)
        status_line = await reader.readline()
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await reader.readexactly(length)
        idle.put_nowait((reader, writer))
        return int(status_line.split()[1])

    loop = asyncio.get_running_loop()
    start, tasks = loop.time(), []
    for i in range(count):
        # Pace from elapsed time, not with a sleep per request, so lateness does not accumulate.
        await asyncio.sleep(max(0.0, start + i / rate - loop.time()))
        tasks.append(asyncio.ensure_future(one()))
    statuses = await asyncio.gather(*tasks)
    while not idle.empty():
        _, writer = idle.get_nowait()
        writer.close()
    return statuses


def paced_load(port: int, path: str = "/", *, rate: float, count: int, conns: int = 16):
    """Statuses of ``count`` requests sent at ``rate`` per second (an open-loop schedule)."""
    return asyncio.run(_paced(port, path, rate, count, conns))
