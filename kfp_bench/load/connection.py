"""The engine's connections and its sink: ``Connection`` (one keep-alive HTTP/1.1 connection of
an ``engine.Attack``, its response parsed by httptools), ``RequestConnection`` (the plain request,
a row per response) and ``HeadConnection``, and the ``Sink`` an attack hands its batches to. The
SSE connection (``stream.StreamConn``) extends ``Connection`` too."""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from httptools import HttpParserCallbackError, HttpParserError, HttpResponseParser

from kfp_bench.load.failure import describe
from kfp_bench.records import BATCH_COLUMNS

clock = time.perf_counter
NCOLS = len(BATCH_COLUMNS)


class Sink(Protocol):
    """Where an attack hands what it measured, every ``FLUSH_EVERY_S`` and once at the end."""

    def begin(self, started_at: float) -> None:
        """The attack's clock starts: request 0 is due now (``started_at`` in epoch seconds)."""

    def add_batch(self, batch) -> None:
        """The requests finished since the last flush (a ``ResultBatch`` or ``StreamBatch``),
        possibly none."""

    def note_inflight(self, now_sec: int, inflight: int) -> None:
        """Right after each ``add_batch``: the requests in flight at the epoch second
        ``now_sec``; seconds before ``now_sec - 1`` will get no more rows but late ones."""


class Connection(asyncio.Protocol):
    """The base of the engine's connections: one keep-alive HTTP/1.1 connection of an ``Attack``
    (``a``), carrying one request at a time, its response parsed by httptools.

    It owns the transport, the parser (whose callbacks are the subclass's methods), the times
    and numbers of the request in flight, and what happens when the parser refuses a response
    or the connection goes. A subclass says what a request is and what its answer makes:
    ``send(seq, intended)`` writes request ``seq`` (``intended``: its due time, None in closed
    loop), its way in for bytes (``data_received``, or ``data_received_at`` on ``stamped.py``'s
    transport) calls ``feed`` and hands what it raises to ``feed_failed``, and its parser
    callbacks (``on_body``, ``on_message_complete``, ...) end in a row of the attack and
    ``Attack.after``. ``RequestConnection`` is the plain one, ``stream.StreamConn`` the SSE one.

    Attributes a subclass reads and sets (seconds on ``clock``; 0 when not yet):
        seq, intended, sent, written: the request's number, due, send and end-of-write times.
        first, last: its first and latest response byte.
        nbody: response body bytes.
        connect, dns: the connect and DNS time charged to the request (0 on a reused connection).
        busy: a request is out on it; dead: it is closed (``Attack.lost`` was told once).
    """

    def __init__(self, attack: Attack):  # noqa: F821 (engine.Attack, which imports this module)
        self.a = attack
        self.new_parser()
        self.transport = self.write = None
        self.busy = self.dead = False
        self.seq = 0
        self.intended = self.sent = self.written = self.first = self.last = 0.0
        self.nbody = 0
        self.connect = self.dns = 0.0
        self.qps_due = 0.0

    def new_parser(self) -> None:
        """A fresh parser, for the next response (HEAD's bodiless responses need one each)."""
        self.parser = parser = HttpResponseParser(self)
        # bound once: a method lookup per request is not free
        self.feed = parser.feed_data
        self.status_code = parser.get_status_code
        self.keeps_alive = parser.should_keep_alive

    def connection_made(self, transport):
        self.transport = transport
        self.write = transport.write

    def feed_failed(self, exc: Exception) -> None:
        """``feed`` raised ``exc``: a callback of this class failed (a bug of the engine, which
        ends the attack), or the response is malformed (a failed request, and the connection
        goes)."""
        if isinstance(exc, HttpParserCallbackError):
            # the parser chains what the callback raised
            self.a.engine_error(exc.__context__ or exc, "a response callback failed")
        elif isinstance(exc, HttpParserError):
            self.a.fail(self, f"http: malformed response ({exc})")
            self.abort()
            self.a.after(None)
        else:
            raise exc

    def connection_lost(self, exc):
        was_dead, self.dead = self.dead, True
        if not was_dead:
            self.a.lost(self)
        if self.busy:
            self.a.fail(self, describe(exc, "read"))
            self.a.after(None)

    def abort(self, graceful: bool = False) -> None:
        if not self.dead:
            self.dead = True
            self.a.lost(self)
        if self.transport is not None:
            self.transport.close() if graceful else self.transport.abort()


class RequestConnection(Connection):
    """A connection for plain requests: the attack's one request, a row per response."""

    def send(self, seq: int, intended: float | None) -> None:
        self.busy = True
        self.seq = seq
        self.first = 0.0
        self.nbody = 0
        self.sent = t = clock()
        self.intended = t if intended is None else intended
        self.write(self.a.request)
        self.written = clock()

    def data_received(self, data):
        # The response ends when its last bytes arrived, not after our parsing of them: one
        # reading serves as the first byte's time and as the end of the response it completes.
        self.last = now = clock()
        if not self.first:
            self.first = now
        try:
            self.feed(data)
        except (HttpParserCallbackError, HttpParserError) as exc:
            self.feed_failed(exc)

    def on_body(self, body):
        self.nbody += len(body)

    def on_message_complete(self):
        if not self.busy or not self.written:
            # no request out on this connection (idle, or its next one still queued in
            # send_batch): a response nobody asked for, not one to count
            return
        a = self.a
        i = a.off
        if i == a.cap:
            a.grow()
        rows = a.rows
        rows[i] = self.seq
        rows[i + 1] = self.intended
        rows[i + 2] = self.sent
        rows[i + 3] = self.written
        rows[i + 4] = self.first
        rows[i + 5] = self.last
        rows[i + 6] = self.status_code()
        rows[i + 7] = self.nbody
        a.off = i + NCOLS
        if self.connect:
            a.connects.append((self.seq, self.connect, self.dns))
            self.connect = self.dns = 0.0
        if a.fast and a.remaining > 0 and self.keeps_alive():
            # Closed loop without -q, the hot path: the next request on this connection, which
            # stays busy. It goes out with those of the other connections answered in this same
            # pass of the event loop (``Attack.send_batch``, next in the loop's queue), as one
            # burst: the server then wakes once for the lot rather than once per request.
            a.remaining -= 1
            self.seq = a.seq
            a.seq += 1
            self.sent = self.intended = self.last  # until it is sent (a timeout sweep may look)
            self.written = 0.0
            batch = a.batch
            batch.append(self)
            if len(batch) == 1:
                a.call_soon(a.batch_cb)
            return
        self.busy = False
        a.inflight -= 1
        if a.keepalive and self.keeps_alive():
            a.after(self)
        else:
            self.abort(graceful=True)
            a.after(None)


class HeadConnection(RequestConnection):
    """A connection for HEAD requests, whose responses have no body whatever Content-Length says."""

    def on_headers_complete(self):
        self.on_message_complete()
        self.new_parser()
