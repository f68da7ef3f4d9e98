"""The request loop of one process: HTTP/1.1 keep-alive connections on uvloop, closed or open loop.

Closed loop (hey's model): ``concurrency`` connections each send the next request when the last
is answered (no faster than ``qps``); the connections answered in one pass of the loop send
together (``send_batch``), so the server wakes once per burst (BENCHMARKS.md, load engine (a)).
Open loop (``rate``): a schedule says when each request is due; it goes out on an idle or new
connection (up to ``max_inflight``) or waits, timed from its due time (as in wrk2).
Rows of ``records.BATCH_COLUMNS`` go in batches to a ``Sink``; ``run()`` returns an
``AttackRecord`` with the process's CPU and cgroup throttling. A failed request is a row with
status 0 and an error, never an exception; an exception in the engine's own callbacks is an
engine bug: logged, and the attack ends flagged ``engine-error`` with what it measured."""

from __future__ import annotations

import asyncio
import math
import resource
import socket
import ssl
import time
from array import array
from collections import deque

from kfp_bench.load import cgroup
from kfp_bench.load.connection import (
    NCOLS,
    Connection,
    HeadConnection,
    RequestConnection,
    Sink,
    clock,
)
from kfp_bench.load.cpu import client_cpu
from kfp_bench.load.failure import describe
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.pacer import Timer, schedule_for
from kfp_bench.records import ENGINE_ERROR, INTERRUPTED, AttackRecord, ResultBatch

FLUSH_EVERY_S = 0.2
INTERRUPT_DRAIN_S = 1.0
_FIRST_ROWS = 4096  # the buffer's first size; it doubles when a flush interval needs more


class Attack:
    """One process's share of a load attack (``opts``, validated), its batches handed to
    ``sink``. ``start_at``: the ``perf_counter`` time at which request 0 is due (aligns worker
    processes); when the attack starts after it, it starts at once and ``late_s`` says how late.
    ``phase``: this process's offset within a constant-rate schedule."""

    ncols = NCOLS  # doubles per row (a subclass writes other rows: stream.py)

    def __init__(
        self,
        opts: LoadOptions,
        sink: Sink,
        *,
        start_at: float | None = None,
        phase: float = 0.0,
    ):
        self.opts = opts
        self.sink = sink
        self.flags: set[str] = set()
        self.not_sent = 0
        self.target = opts.target()
        self.ssl = opts.ssl_context()
        self.request = self.target.request
        self.request_len = len(self.request)
        self.keepalive = not opts.disable_keepalive
        self.conn_class = HeadConnection if opts.method.upper() == "HEAD" else RequestConnection
        # The closed-loop hot path applies while this is true (RequestConnection's
        # on_message_complete).
        self.fast = self.keepalive and not opts.open_loop and not opts.qps
        self.start_at = start_at
        self.late_s = 0.0
        self.phase = phase
        self.buf = bytearray(_FIRST_ROWS * self.ncols * 8)
        self.rows = memoryview(self.buf).cast("d")
        self.cap = len(self.rows)  # in doubles, as ``off``
        self.off = 0
        self.errors: list = []
        self.connects: list = []
        self.batch: list[Connection] = []  # connections whose next request goes out in send_batch
        self.batch_cb = self.send_batch  # bound once, and call_soon once it runs (``run``)
        self.call_soon = None
        self.seq = 0
        self.inflight = 0
        self.nconns = 0
        self.conns: set[Connection] = set()
        self.idle: list[Connection] = []
        self.backlog: deque[float] = deque()
        self.remaining = math.inf if opts.duration else opts.requests
        self.stopping = False
        self.interrupted = False
        self._addr = None
        self._tasks: set[asyncio.Task] = set()

    # -- the run -----------------------------------------------------------------------------
    async def run(self) -> AttackRecord:
        loop = self.loop = asyncio.get_running_loop()
        self.done = loop.create_future()
        self._outer_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._on_loop_error)
        try:
            return await self._run()
        finally:
            loop.set_exception_handler(self._outer_handler)

    async def _run(self) -> AttackRecord:
        loop = self.loop
        self.call_soon = loop.call_soon
        self._addr = await self._resolve()
        if self.opts.open_loop:
            await self._warm_up()
        now = clock()
        self.t0 = self.start_at if self.start_at and self.start_at > now else now
        # Past the common start, this process's schedule runs from its own start: say by how
        # much (load.workers flags it late-start), never silently.
        self.late_s = now - self.start_at if self.start_at and now > self.start_at else 0.0
        if self.t0 > now:
            await asyncio.sleep(self.t0 - now)
        self.started_at = time.time() - (clock() - self.t0)
        self.sink.begin(self.started_at)
        self._cpu0 = resource.getrusage(resource.RUSAGE_SELF)  # this process's, from here on
        self._cgroup0 = cgroup.usage()  # and its cgroup's limit and throttling (pods)
        self.deadline = self.t0 + self.opts.duration if self.opts.duration else math.inf
        self._flush_handle = loop.call_later(FLUSH_EVERY_S, self._flush_tick)
        self._sweep_handle = loop.call_later(self._sweep_every(), self._sweep)
        if self.opts.duration:
            self._stop_handle = loop.call_at(
                loop.time() + self.opts.duration - (clock() - self.t0), self.stop
            )
        self.timer = None
        if self.opts.open_loop:
            self.schedule = schedule_for(self.opts, self.t0, self.phase)
            self.timer = Timer(loop, self._tick)
            self._tick()
        else:
            for _ in range(self.opts.concurrency):
                self.after(None)
        try:
            await self.done
        finally:
            record = self._finish()
        return record

    def _finish(self) -> AttackRecord:
        end = clock()
        for h in (self._flush_handle, self._sweep_handle, getattr(self, "_stop_handle", None)):
            if h:
                h.cancel()
        if self.timer:
            self.timer.close()
        for conn in list(self.conns):
            if conn.busy:
                self.fail(conn, "abandoned: no response before the attack ended")
            conn.abort()
        for t in self._tasks:
            t.cancel()
        self.not_sent += len(self.backlog)
        self.backlog.clear()
        self._flush()
        r, r0 = resource.getrusage(resource.RUSAGE_SELF), self._cpu0
        user, system = r.ru_utime - r0.ru_utime, r.ru_stime - r0.ru_stime
        cpu = client_cpu(user, system, clock() - self.t0, self._cgroup0, cgroup.usage())
        flags = tuple(sorted(self.flags))
        return AttackRecord(self.started_at, end - self.t0, self.not_sent, cpu, self.late_s, flags)

    async def _warm_up(self) -> None:
        """Open loop: open ``concurrency`` connections before request 0 is due, as wrk2 does, so
        that the first requests do not all pay for a connect."""
        n = min(self.opts.concurrency, self.opts.max_inflight)
        results = await asyncio.gather(*(self._open() for _ in range(n)), return_exceptions=True)
        for r in results:
            if not isinstance(r, BaseException):
                conn = r[1]
                self.nconns += 1
                self.conns.add(conn)
                self.idle.append(conn)
        self._dns_s = 0.0

    def _open(self):
        """A coroutine that opens one connection of this attack to the resolved address."""
        return self.loop.create_connection(
            lambda: self.conn_class(self),
            *self._addr[:2],
            ssl=self.ssl,
            server_hostname=self.target.server_hostname if self.ssl else None,
        )

    async def _resolve(self):
        t = self.target
        start = clock()
        infos = await asyncio.get_running_loop().getaddrinfo(
            t.host, t.port, type=socket.SOCK_STREAM
        )
        self._dns_s = clock() - start
        return infos[0][4]

    # -- scheduling --------------------------------------------------------------------------
    def after(self, conn: Connection | None) -> None:
        """A connection became free (or a slot lost its connection): give it the next request."""
        if self.opts.open_loop:
            if self.backlog and not self.stopping:
                intended = self.backlog.popleft()
                self._issue(conn, intended)
            elif conn is not None:
                self.idle.append(conn)
            self._check_done()
            return
        if self.stopping or self.remaining <= 0:
            if conn is not None:
                conn.abort(graceful=True)
            self._check_done()
            return
        self.remaining -= 1
        qps = self.opts.qps
        if qps and conn is not None:
            now = clock()
            due = max(conn.qps_due, now)
            conn.qps_due = due + 1.0 / qps
            if due > now:
                self.inflight += 1  # reserved: the request is committed to this slot
                self.loop.call_later(due - now, self._send_later, conn)
                return
        self._issue(conn, None)

    def send_batch(self) -> None:
        """Send the next request on every connection of the closed-loop hot path that was
        answered in the last pass of the loop (``RequestConnection.on_message_complete``). Its
        time counts from here, when it is written (``send`` inlined: a Python call is a share of
        this path's cost worth saving, ``bench/instructions.py`` counts it). One reading of the
        clock ends a write and starts the next."""
        request = self.request
        now = clock()
        for conn in self.batch:
            if conn.busy and not conn.dead:
                conn.first = 0.0
                conn.nbody = 0
                conn.sent = conn.intended = now
                conn.write(request)
                conn.written = now = clock()
        self.batch.clear()

    def _send_later(self, conn: Connection) -> None:
        self.inflight -= 1
        if self.stopping:
            self.remaining += 1
            conn.abort(graceful=True)
            self._check_done()
        else:
            self._issue(conn if not conn.dead else None, None)

    def _issue(self, conn: Connection | None, intended: float | None) -> None:
        seq = self.seq
        self.seq += 1
        self.inflight += 1
        if conn is not None and not conn.dead:
            conn.send(seq, intended)
        else:
            self.nconns += 1
            task = self.loop.create_task(self._connect_and_send(seq, intended))
            self._tasks.add(task)
            task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            self.engine_error(exc, "a connection task failed")

    def _tick(self) -> None:
        """Open loop: send everything that is due, then arm the timer for the next one."""
        now = clock()
        sched = self.schedule
        while not self.stopping and self.remaining > 0 and sched.peek() <= now < self.deadline:
            intended = sched.pop()
            self.remaining -= 1
            if self.idle:
                self._issue(self.idle.pop(), intended)
            elif self.nconns < self.opts.max_inflight:
                self._issue(None, intended)
            else:
                self.backlog.append(intended)
        if self.stopping:
            return
        if self.remaining > 0 and sched.peek() < self.deadline:
            self.timer.arm(sched.peek())
        else:
            self._check_done()

    async def _connect_and_send(self, seq: int, intended: float | None) -> None:
        start = clock()
        try:
            _, conn = await asyncio.wait_for(self._open(), self.opts.timeout or None)
        except (TimeoutError, OSError, ssl.SSLError) as exc:
            now = clock()
            self.nconns -= 1
            self.inflight -= 1
            due = intended if intended is not None else start
            self._row_error(seq, due, start, 0.0, now, describe(exc, "connect"), now - start)
            self.after(None)
            return
        conn.connect = clock() - start
        conn.dns = self._dns_s
        self._dns_s = 0.0  # resolved once per process: charged to the first connection only
        self.conns.add(conn)
        conn.send(seq, intended)

    def grow(self) -> None:
        """Double the row buffer: more rows came in one flush interval than it holds."""
        buf = bytearray(2 * len(self.buf))
        buf[: len(self.buf)] = self.buf
        self.buf, self.rows = buf, memoryview(buf).cast("d")
        self.cap = len(self.rows)

    def _row_error(self, seq, intended, sent, written, done, error, connect=0.0) -> None:
        i = self.off
        if i == self.cap:
            self.grow()
        # the row of ``RequestConnection.on_message_complete``, written in place as there (a
        # refused connection per request under overload: no array built per row)
        rows = self.rows
        rows[i] = seq
        rows[i + 1] = intended
        rows[i + 2] = sent
        rows[i + 3] = written
        rows[i + 4] = 0.0  # first byte: none
        rows[i + 5] = done
        rows[i + 6] = 0  # status 0: failed
        rows[i + 7] = 0
        self.off = i + NCOLS
        self.errors.append(error)
        if connect:
            self.connects.append((seq, connect, 0.0))

    def fail(self, conn: Connection, error: str) -> None:
        """The request on ``conn`` failed: record it and free the slot."""
        if not conn.busy:
            return
        conn.busy = False
        self.inflight -= 1
        self._row_error(
            conn.seq, conn.intended, conn.sent, conn.written, clock(), error, conn.connect
        )
        conn.connect = conn.dns = 0.0

    def lost(self, conn: Connection) -> None:
        """Bookkeeping for a connection that is gone (whoever closed it)."""
        self.conns.discard(conn)
        self.nconns -= 1
        if conn in self.idle:
            self.idle.remove(conn)

    # -- stopping ----------------------------------------------------------------------------
    def stop(self, drain_s: float | None = None) -> None:
        """Stop sending; in-flight requests get ``drain_s`` (default: the request timeout)."""
        if self.stopping:
            return
        self.stopping = True
        self.fast = False
        if self.timer:
            self.timer.close()
            self.timer = None
        drain = drain_s if drain_s is not None else (self.opts.timeout or 30.0)
        self.loop.call_later(drain, self._give_up)
        for conn in list(self.idle):
            conn.abort(graceful=True)
        self._check_done()

    def interrupt(self) -> None:
        """Ctrl-C: the first stops cleanly after a short drain, the second at once."""
        if self.interrupted:
            self._give_up()
        self.interrupted = True
        self.flags.add(INTERRUPTED)
        self.stop(INTERRUPT_DRAIN_S)

    def engine_error(self, exc: BaseException, what: str) -> None:
        """A bug of this engine surfaced in a callback or task: hand it to the loop's exception
        handler (``_on_loop_error``), as asyncio does with what escapes a callback."""
        self.loop.call_exception_handler(
            {"message": f"kfp-bench load engine: {what}", "exception": exc}
        )

    def _on_loop_error(self, loop, context: dict) -> None:
        """The loop's exception handler while the attack runs. It logs as the handler before it
        did (asyncio's default: the message and the traceback); an exception that escaped this
        engine's code then ends the attack at once, flagged ``engine-error``. Without this, a
        request whose callback died keeps its slot busy forever, and an ``-n`` run never ends.
        OS errors (a transport's resets and refusals) are the server's faults: rows, not bugs."""
        if self._outer_handler is not None:
            self._outer_handler(loop, context)
        else:
            loop.default_exception_handler(context)
        exc = context.get("exception")
        if isinstance(exc, Exception) and not isinstance(exc, OSError):
            self.flags.add(ENGINE_ERROR)
            self.stop(0.0)
            self._give_up()

    def _give_up(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    def _check_done(self) -> None:
        if self.inflight > 0 or self.done.done():
            return
        finished = self.stopping or (self.remaining <= 0 and not self.backlog)
        if finished:
            self.done.set_result(None)

    # -- timers ------------------------------------------------------------------------------
    def _sweep_every(self) -> float:
        return min(0.1, self.opts.timeout / 10) if self.opts.timeout else 0.1

    def _sweep(self) -> None:
        """Fail requests older than the timeout and close their connections."""
        if self.opts.timeout:
            limit = clock() - self.opts.timeout
            for conn in list(self.conns):
                if conn.busy and conn.sent < limit:
                    self.fail(conn, f"read: timeout, no response within {self.opts.timeout:g}s")
                    conn.abort()
                    self.after(None)
        self._sweep_handle = self.loop.call_later(self._sweep_every(), self._sweep)

    def _flush_tick(self) -> None:
        self._flush()
        self._flush_handle = self.loop.call_later(FLUSH_EVERY_S, self._flush_tick)

    def _flush(self) -> None:
        self.sink.add_batch(self._take_batch())
        self.sink.note_inflight(int(time.time()), self.inflight)

    def _take_batch(self):
        """The rows since the last flush as a batch; the buffer starts over."""
        data = array("d")
        data.frombytes(memoryview(self.buf)[: self.off * 8])
        self.off = 0
        batch = ResultBatch(self.t0, data, self.errors, self.connects, self.request_len)
        self.errors, self.connects = [], []
        return batch
