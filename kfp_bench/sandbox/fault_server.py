"""A loopback HTTP/1.1 server with fault modes, and the ground truth of what it did.

This module owns the test server behind the load engine's tests and the latency benchmarks: it
answers any path, holding or breaking each response as its fault modes say, and it measures what it
really did. Run it as::

    python -m kfp_bench.sandbox.fault_server --port 8000 --delay-ms 10 --stall-every 5 \
        --stall-for 0.5

Server-wide modes (``FaultModes``) come from flags. A request may override them with query
parameters on any path: ``delay_ms=``, ``status=``, ``reset=1`` (abort the connection with a TCP
reset instead of answering), ``hang=1`` (never answer), ``drop=1`` (answer as if keeping the
connection alive, then close it: a server dropping a kept-alive connection unannounced),
``extra=1`` (follow the response with a second copy that nobody asked for), ``slow_body_ms=``
(send the headers, then trickle the body over that long) and ``bytes=`` (body size). Unknown
parameters are ignored.

Timing. A response is due ``delay_ms`` after its request's last byte was parsed; if that moment
falls inside a stall window ``[k*stall_every, k*stall_every + stall_for)`` seconds after the server
started, it is held to the window's end. Deadlines are kept on CLOCK_MONOTONIC
(``time.perf_counter``) and fired by one Linux timerfd (``deadlines.Deadlines``, on the load
engine's ``pacer.Timer``), which the kernel wakes with microsecond resolution; uvloop's own timers
(``loop.call_at``, ``--timer call_at``, the fallback off Linux) count whole milliseconds and fire up
to 1 ms early, so they are re-armed until due. How far past the hold the two timers answer, and
the rates the server reaches: BENCHMARKS.md, "Figures out of the code" and load engine (b).

Ground truth. For every response sent the server records its hold time: from the request's last
byte parsed to the response's last byte handed to the kernel. ``GET /__stats`` returns the counts,
hold-time percentiles and the server's start time and modes, from which a benchmark can compute the
true latency of a schedule; ``GET /__health`` answers "ok". Neither is delayed, faulted or counted.
Hold times are kept in an ``array('d')``: 8 bytes per response, fine for tests and benchmarks.

HTTP: keep-alive per HTTP/1.1 (``Connection: close`` and HTTP/1.0 honoured), one request at a time
per connection (pipelined requests wait their turn), ``Content-Length`` bodies only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import socket
import struct
import sys
import time
import urllib.request
from array import array
from collections import Counter, deque
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from http import HTTPStatus
from urllib.parse import parse_qsl

import httptools

from kfp_bench._doc import field_help
from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.deadlines import TIMERS, Deadlines
from kfp_bench.sandbox.process import (
    ServerHandle,
    ServerSpec,
    listen_until_stopped,
    start_server,
    watch_parent,
)

# Imports inside functions: its starter runs in the caller's process and the server in a process of
# its own: what only the server uses loads there.

MAX_BODY_BYTES = 64 * 1024 * 1024
_TRICKLE_STEP = 0.010  # a slow body is sent in pieces about this far apart (s)
_now = time.perf_counter  # CLOCK_MONOTONIC on Linux, the clock a timerfd counts in


@dataclass(frozen=True, slots=True)
class FaultModes:
    """Server-wide fault modes of the fault server; a request can override some by query.

    Attributes:
        delay_ms: hold each response this long after its request arrived (ms).
        stall_every: open a stall window every this many seconds after the server started; 0: none.
        stall_for: length of each stall window (s); a response due inside one waits for its end.
        error_rate: fraction of responses sent with error_status instead of 200.
        error_status: the status of those error responses.
        reset_rate: fraction of requests answered by a TCP reset instead of a response.
        slow_body_ms: send the headers when due, then trickle the body over this long (ms).
        body_bytes: size of each response body (bytes).
        seed: seed of the random draws behind error_rate and reset_rate; unset: unseeded.
    """

    delay_ms: float = 0.0
    stall_every: float = 0.0
    stall_for: float = 0.0
    error_rate: float = 0.0
    error_status: int = 503
    reset_rate: float = 0.0
    slow_body_ms: float = 0.0
    body_bytes: int = 2
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("delay_ms", "stall_every", "stall_for", "slow_body_ms"):
            _check(name, getattr(self, name), "a number >= 0", _non_negative)
        for name in ("error_rate", "reset_rate"):
            _check(name, getattr(self, name), "a fraction in [0, 1]", _fraction)
        _check("error_status", self.error_status, "a status in 200..599", _STATUS_OK, int)
        _check("body_bytes", self.body_bytes, f"in 0..{MAX_BODY_BYTES}", _SIZE_OK, int)
        if self.stall_for and self.stall_for >= self.stall_every:
            raise ConfigError(
                f"fault server: stall_for={self.stall_for} must be shorter than "
                f"stall_every={self.stall_every}, or the server never answers"
            )

    def argv(self) -> tuple[str, ...]:
        """The command-line flags that reproduce these modes (defaults left out)."""
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                out += [f"--{f.name.replace('_', '-')}", str(value)]
        return tuple(out)


class FaultServerHandle(ServerHandle):
    """A running fault server; ``stats()`` fetches what it has done so far."""

    @property
    def stats_url(self) -> str:
        return f"{self.url}/__stats"

    def stats(self, timeout: float = 5.0) -> dict:
        """The server's ``/__stats`` document (see ``_Stats.snapshot``)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.stats_url, timeout=timeout) as resp:
            return json.load(resp)


def start_fault_server(
    port: int = 0, *, timer: str = "auto", start_timeout: float = 15.0, **modes
) -> FaultServerHandle:
    """Run the fault server in a child process on 127.0.0.1 and return once it answers.

    Args:
        port: TCP port; 0 picks a free one.
        timer: "auto", "timerfd" or "call_at" (see the module docstring).
        start_timeout: seconds to wait for ``/__health``.
        **modes: fields of ``FaultModes``, e.g. ``delay_ms=10``.

    Raises:
        ConfigError: an unknown or invalid mode; nothing was started.
        ServerError: the server exited or did not answer in time.
    """
    known = {f.name for f in fields(FaultModes)}
    unknown = sorted(set(modes) - known)
    if unknown:
        raise ConfigError(f"fault server: unknown modes {unknown}; known: {sorted(known)}")
    if timer not in TIMERS:
        raise ConfigError(f"fault server: timer={timer!r} must be one of {TIMERS}")
    spec = ServerSpec(
        name="fault server",
        module="kfp_bench.sandbox.fault_server",
        port_flag="--port",
        health_path="/__health",
        args=(*FaultModes(**modes).argv(), "--timer", timer),
        start_timeout=start_timeout,
        stop_timeout=3.0,
    )
    return start_server(spec, port, FaultServerHandle)


_STATUS_OK = range(200, 600).__contains__
_SIZE_OK = range(MAX_BODY_BYTES + 1).__contains__


def _non_negative(value: float) -> bool:
    return math.isfinite(value) and value >= 0


def _fraction(value: float) -> bool:
    return 0 <= value <= 1


def _check(name: str, value, what: str, ok, kind: type | tuple = (int, float)):
    """``value``, if it is a ``kind`` that passes ``ok``; else a ConfigError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, kind) or not ok(value):
        raise ConfigError(f"fault server: {name}={value!r} must be {what}")
    return value


# --- what the server did ---------------------------------------------------------------------


class _Stats:
    """Counts and hold times of one server; requests to ``/__*`` paths are not counted."""

    def __init__(self, modes: FaultModes, started_at: float, started_monotonic: float) -> None:
        self.modes = modes
        self.started_at = started_at
        self.started_monotonic = started_monotonic
        self.requests = 0  # requests parsed, /__* paths left out
        self.served = 0  # responses written in full
        self.status: Counter[int] = Counter()
        self.resets = 0
        self.hangs = 0
        self.abandoned = 0  # the client went away before its response was written
        self.parse_errors = 0
        self.connections = 0
        self.open_connections = 0
        self.holds = array("d")  # s, one per response served

    def served_one(self, status: int, hold: float) -> None:
        self.served += 1
        self.status[status] += 1
        self.holds.append(hold)

    def snapshot(self, clock_kind: str) -> dict:
        """The ``/__stats`` document; hold times in ms, percentiles nearest-rank."""
        counts = ("requests", "served", "resets", "hangs", "abandoned", "parse_errors")
        ordered, n = sorted(self.holds), len(self.holds)

        def ms(p: float) -> float | None:
            return ordered[max(0, math.ceil(p / 100 * n) - 1)] * 1e3 if n else None

        hold = dict(count=n, min=ms(0), p50=ms(50), p90=ms(90), p99=ms(99), max=ms(100))
        hold["mean"] = sum(ordered) / n * 1e3 if n else None
        return {
            "started_at": self.started_at,
            "started_monotonic": self.started_monotonic,
            "uptime_s": _now() - self.started_monotonic,
            **{name: getattr(self, name) for name in counts},
            "status": {str(k): v for k, v in sorted(self.status.items())},
            "connections": self.connections,
            "open_connections": self.open_connections,
            "hold_ms": hold,
            "stall": {"every_s": self.modes.stall_every, "for_s": self.modes.stall_for},
            "modes": asdict(self.modes),
            "timer": clock_kind,
        }


# --- HTTP ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Request:
    arrived: float  # _now() when its last byte was parsed
    url: bytes
    keep_alive: bool
    http10: bool


@dataclass(frozen=True, slots=True)
class _Plan:
    """What to do with one request, decided when it arrives."""

    action: str  # "respond", "reset" or "hang"
    status: int = 200
    body: bytes = b""
    delay: float = 0.0  # s
    slow_body: float = 0.0  # s
    drop: bool = False  # close the connection once answered, without a Connection: close
    extra: bool = False  # send the response twice: the second copy unasked for


@lru_cache(maxsize=64)
def _body(size: int) -> bytes:
    return b"x" * size


@lru_cache(maxsize=256)
def _head(status: int, length: int, connection: bytes, content_type: bytes) -> bytes:
    try:
        reason = HTTPStatus(status).phrase.encode()
    except ValueError:
        reason = b"Status"
    lines = [b"HTTP/1.1 %d %s" % (status, reason), b"Content-Type: " + content_type]
    if status not in (204, 304):
        lines.append(b"Content-Length: %d" % length)
    if connection:
        lines.append(b"Connection: " + connection)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _pieces(size: int, duration: float) -> int:
    return min(size, max(1, round(duration / _TRICKLE_STEP)))


class _Connection(asyncio.Protocol):
    """One client connection: parses requests and answers them one at a time, in order."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpRequestParser(self)
        self.url = b""
        self.pending: deque[_Request] = deque()
        self.busy = False  # a response is under way; later requests wait in ``pending``
        self.draining = False
        self.drop = False  # close once the response under way is written (``drop=1``)
        self.extra = False  # write the response under way twice (``extra=1``)

    def connection_made(self, transport) -> None:
        self.transport = transport
        with contextlib.suppress(OSError, AttributeError):
            sock = transport.get_extra_info("socket")
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.connections.add(self)
        self.server.stats.connections += 1
        self.server.stats.open_connections += 1

    def connection_lost(self, exc) -> None:
        self.transport = None
        self.server.connections.discard(self)
        self.server.stats.open_connections -= 1
        self.pending.clear()

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as e:
            self.server.stats.parse_errors += 1
            if self.transport is not None:
                if not self.busy:
                    msg = f"bad request: {e}\n".encode()
                    self.transport.write(_head(400, len(msg), b"close", b"text/plain") + msg)
                self.transport.close()

    def on_message_begin(self) -> None:  # httptools callbacks, from feed_data
        self.url = b""

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_message_complete(self) -> None:
        arrived, parser = _now(), self.parser
        http10 = parser.get_http_version() == "1.0"
        self.pending.append(_Request(arrived, self.url, parser.should_keep_alive(), http10))
        self._next()

    def _next(self) -> None:
        # A loop, not recursion through done(): a burst of pipelined requests answered at once
        # would otherwise nest calls one level per request.
        if self.draining:
            return
        self.draining = True
        try:
            while self.pending and not self.busy and self.transport is not None:
                self.busy = True
                self.server.handle(self, self.pending.popleft())
        finally:
            self.draining = False

    def send(self, request: _Request, plan: _Plan) -> None:
        """Carry out ``plan`` now: answer, reset or start trickling."""
        self.drop, self.extra = plan.drop, plan.extra
        if self.transport is None:
            self.server.stats.abandoned += 1
        elif plan.action == "reset":
            sock = self.transport.get_extra_info("socket")
            # Linger 0: closing discards the connection with a RST instead of a FIN.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.transport.abort()
            self.server.stats.resets += 1
        elif plan.slow_body and plan.body and plan.status not in (204, 304):
            self.transport.write(self.head(request, plan.status, len(plan.body)))
            start = _now()
            first = start + plan.slow_body / _pieces(len(plan.body), plan.slow_body)
            self.server.clock.at(first, self._trickle, request, plan, start, 1)
        else:
            self.answer(request, plan.status, plan.body)

    def _trickle(self, request: _Request, plan: _Plan, start: float, i: int) -> None:
        """Write piece ``i`` of ``n``, due ``slow_body * i / n`` after the headers went out."""
        if self.transport is None:
            self.server.stats.abandoned += 1
            return
        body = plan.body
        n = _pieces(len(body), plan.slow_body)
        self.transport.write(body[len(body) * (i - 1) // n : len(body) * i // n])
        if i == n:
            self.done(request, plan.status)
        else:
            due = start + plan.slow_body * (i + 1) / n
            self.server.clock.at(due, self._trickle, request, plan, start, i + 1)

    def head(self, request: _Request, status: int, length: int, kind=b"text/plain") -> bytes:
        if not request.keep_alive:
            connection = b"close"
        else:  # HTTP/1.1 keeps the connection by default; HTTP/1.0 must be told
            connection = b"keep-alive" if request.http10 else b""
        return _head(status, length, connection, kind)

    def answer(self, request, status, body, kind=b"text/plain", counted=True) -> None:
        """Write a whole response now."""
        if status in (204, 304):
            body = b""
        response = self.head(request, status, len(body), kind) + body
        self.transport.write(response + response if self.extra else response)
        self.done(request, status, counted)

    def done(self, request: _Request, status: int, counted: bool = True) -> None:
        """The response to ``request`` was written: record it, then close or take the next one."""
        if counted:
            self.server.stats.served_one(status, _now() - request.arrived)
        if self.transport is None:
            return
        if not request.keep_alive or self.drop:
            self.transport.close()
            return
        self.busy = self.extra = False
        self._next()


class _Server:
    """Shared state of one fault server: modes, clock, random draws and stats."""

    def __init__(self, modes: FaultModes, clock: Deadlines) -> None:
        self.modes = modes
        self.clock = clock
        self.rng = random.Random(modes.seed)
        self.connections: set[_Connection] = set()
        self.started = _now()
        self.stats = _Stats(modes, time.time(), self.started)

    def handle(self, conn: _Connection, request: _Request) -> None:
        path, _, query = request.url.partition(b"?")
        if path == b"/__health":
            conn.answer(request, 200, b"ok\n", counted=False)
            return
        if path == b"/__stats":
            body = json.dumps(self.stats.snapshot(self.clock.kind)).encode()
            conn.answer(request, 200, body, b"application/json", counted=False)
            return
        self.stats.requests += 1
        try:
            plan = self.plan(query)
        except ConfigError as e:
            conn.answer(request, 400, f"{e}\n".encode())
            return
        if plan.action == "hang":
            self.stats.hangs += 1  # the connection stays busy until the client gives up
            return
        release = self.release(request.arrived + plan.delay)
        if release <= request.arrived:
            conn.send(request, plan)  # no delay and no stall: answer from this callback
        else:
            self.clock.at(release, conn.send, request, plan)

    def plan(self, query: bytes) -> _Plan:
        """Decide what to do with a request, from the modes and its query parameters."""
        modes, rng = self.modes, self.rng
        params = dict(parse_qsl(query.decode("latin-1"))) if query else {}
        delay_ms = _param(params, "delay_ms", float, modes.delay_ms, "a number >= 0")
        if _param(params, "hang", int, 0, "0 or 1"):
            return _Plan("hang")
        reset = _param(params, "reset", int, None, "0 or 1")
        if reset is None:
            reset = modes.reset_rate > 0 and rng.random() < modes.reset_rate
        if reset:
            return _Plan("reset", delay=delay_ms / 1e3)
        status = _param(params, "status", int, None, "a status in 200..599", _STATUS_OK)
        if status is None:
            error = modes.error_rate > 0 and rng.random() < modes.error_rate
            status = modes.error_status if error else 200
        size = _param(params, "bytes", int, modes.body_bytes, f"in 0..{MAX_BODY_BYTES}", _SIZE_OK)
        slow_ms = _param(params, "slow_body_ms", float, modes.slow_body_ms, "a number >= 0")
        drop = bool(_param(params, "drop", int, 0, "0 or 1"))
        extra = bool(_param(params, "extra", int, 0, "0 or 1"))
        return _Plan("respond", status, _body(size), delay_ms / 1e3, slow_ms / 1e3, drop, extra)

    def release(self, due: float) -> float:
        """When a response due at ``due`` may go: then, or at the end of its stall window."""
        every, length = self.modes.stall_every, self.modes.stall_for
        if every <= 0 or length <= 0:
            return due
        into = (due - self.started) % every
        return due - into + length if into < length else due

    def close(self) -> None:
        for conn in list(self.connections):
            if conn.transport is not None:
                conn.transport.abort()
        self.clock.close()


def _param(params: dict[str, str], name: str, kind: type, default, what: str, ok=None):
    """Query parameter ``name`` as a ``kind``; a ConfigError (a 400) when it is not ``what``."""
    if name not in params:
        return default
    try:
        value = kind(params[name])
    except ValueError:
        value = params[name]
    return _check(name, value, what, ok or _non_negative, kind)


async def serve(host: str, port: int, modes: FaultModes, timer: str = "auto") -> None:
    """Serve on ``host:port`` until SIGTERM or SIGINT; ``timer`` as for ``Deadlines``."""
    server = _Server(modes, Deadlines(asyncio.get_running_loop(), timer))
    await listen_until_stopped(
        "fault server", server, lambda: _Connection(server), host, port,
        f" (timer: {server.clock.kind})",
    )  # fmt: skip


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m kfp_bench.sandbox.fault_server",
        description="Loopback HTTP/1.1 server with fault modes (delays, stalls, errors, resets).",
    )
    parser.add_argument("--port", type=int, default=0, help="TCP port; 0 picks a free one")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--timer",
        choices=TIMERS,
        default="auto",
        help="how deadlines fire: a Linux timerfd (precise), or uvloop's 1 ms timers",
    )
    for f in fields(FaultModes):
        parser.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=float if isinstance(f.default, float) else int,
            default=f.default,
            help=field_help(FaultModes, f.name),
        )
    return parser


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        modes = FaultModes(**{f.name: getattr(args, f.name) for f in fields(FaultModes)})
        watch_parent()
        import uvloop

        uvloop.run(serve(args.host, args.port, modes, args.timer))
    except ConfigError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
