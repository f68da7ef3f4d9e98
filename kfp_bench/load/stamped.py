"""A socket transport for the streaming client whose reads carry the kernel's receive time.

A token timed when the loop gets to its socket carries the loop's delay (most of the ITL error at
200 streams: BENCHMARKS.md, LLM load). Linux stamps each packet on receipt (``SO_TIMESTAMPNS``)
and a TCP ``recvmsg`` returns the stamp of the last packet read (``tcp_recv_timestamp``,
net/ipv4/tcp.c; coalesced packets keep the newer stamp). The CLOCK_REALTIME stamp becomes a
``perf_counter`` time by its age when read, so a wall-clock step moves it by that age at most;
a read without a stamp takes the clock's time and is counted (``stream.py`` flags
``read-time-tokens``). The transport has the part of asyncio's the connections use, but data
arrives as ``data_received_at(data, t)``; TLS runs over memory BIOs on the same socket, and
reads share one buffer of the attack's."""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import sys
import time

clock = time.perf_counter
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35 if sys.platform.startswith("linux") else 0)
_TIMESPEC = struct.Struct("@qq")  # struct timespec: seconds, nanoseconds
_ANC = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
READ_SIZE = 256 * 1024
MAX_AGE_NS = 60 * 10**9  # an older stamp is a step of the wall clock, not a late read
#: Two engine-clock readings this close around a wall-clock reading make them one instant.
_PAIR_S = 20e-6


def clock_pair() -> tuple[float, int]:
    """The engine's clock and the wall clock (ns) read as one instant, for a stamp's age. Read
    apart, a preemption between the two readings moves the stamp by its length (a token timed
    milliseconds early on a busy machine); bracketed by two engine readings, the pair of the
    tightest bracket of up to three tries is off by at most half its width."""
    best = (float("inf"), 0.0, 0)
    for _ in range(3):
        before = clock()
        wall = time.time_ns()
        after = clock()
        if after - before < best[0]:
            best = (after - before, (before + after) / 2, wall)
        if after - before < _PAIR_S:
            break
    return best[1], best[2]


def reader_buffer() -> memoryview:
    """The buffer one process's stamped reads go into (one per attack)."""
    return memoryview(bytearray(READ_SIZE))


async def open_stamped(
    loop: asyncio.AbstractEventLoop,
    protocol_factory,
    addr: tuple,
    buf: memoryview,
    counts: list,
    *,
    ssl_context: ssl.SSLContext | None = None,
    server_hostname: str | None = None,
):
    """Connect to ``addr`` (a ``getaddrinfo`` socket address) and return ``(transport,
    protocol)`` as ``loop.create_connection`` does. ``counts`` is ``[stamped, unstamped]``,
    the attack's count of reads with and without a kernel stamp.

    Raises:
        OSError: the connect failed (ssl.SSLError: the TLS handshake did).
    """
    family = socket.AF_INET6 if len(addr) == 4 else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if SO_TIMESTAMPNS and _ANC:
            try:
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
            except OSError:
                pass  # no stamps here: every read counts as unstamped
        await loop.sock_connect(sock, addr)
        tls = None
        if ssl_context is not None:
            tls = await _handshake(loop, sock, ssl_context, server_hostname)
        protocol = protocol_factory()
        transport = StampedTransport(loop, sock, protocol, buf, counts, tls)
    except BaseException:
        sock.close()
        raise
    protocol.connection_made(transport)
    transport.start()
    return transport, protocol


class _Tls:
    """A TLS session over memory BIOs: ``obj`` reads ``incoming`` and writes ``outgoing``."""

    def __init__(self, context: ssl.SSLContext, server_hostname: str | None):
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.obj = context.wrap_bio(self.incoming, self.outgoing, server_hostname=server_hostname)


async def _handshake(loop, sock, context, server_hostname) -> _Tls:
    tls = _Tls(context, server_hostname)
    while True:
        try:
            tls.obj.do_handshake()
            done = True
        except ssl.SSLWantReadError:
            done = False
        if tls.outgoing.pending:
            await loop.sock_sendall(sock, tls.outgoing.read())
        if done:
            return tls
        data = await loop.sock_recv(sock, READ_SIZE)
        if not data:
            raise ConnectionResetError("the server closed the connection in the TLS handshake")
        tls.incoming.write(data)


class StampedTransport:
    """One connected socket, read as soon as it is readable; each read with its receive time."""

    def __init__(self, loop, sock: socket.socket, protocol, buf: memoryview, counts: list, tls):
        self._loop = loop
        self._sock = sock
        self._fd = sock.fileno()
        self._protocol = protocol
        self._buf = buf
        self._bufs = [buf]  # recvmsg_into's argument, built once
        self._counts = counts
        self._tls = tls
        self._unsent = bytearray()
        self._closing = self._closed = False

    def start(self) -> None:
        self._loop.add_reader(self._fd, self._readable)

    # -- reading -----------------------------------------------------------------------------
    def _readable(self) -> None:
        try:
            n, anc, _, _ = self._sock.recvmsg_into(self._bufs, _ANC)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fail(exc)
            return
        counts = self._counts
        if anc and len(anc[0][2]) >= _TIMESPEC.size:
            t, wall = clock_pair()
            sec, ns = _TIMESPEC.unpack_from(anc[0][2])
            age = wall - sec * 1_000_000_000 - ns
            if 0 <= age < MAX_AGE_NS:
                t -= age * 1e-9
                counts[0] += 1
            else:
                counts[1] += 1
        else:
            t = clock()
            if n:
                counts[1] += 1
        if not n:
            self._close_now(None)  # the server closed: asyncio's eof_received, answered None
            return
        data = self._buf[:n]
        if self._tls is not None:
            data = self._decrypt(data, t)
            if data is None:
                return
        if data:
            self._protocol.data_received_at(data, t)

    def _decrypt(self, raw, t: float) -> bytes | None:
        """The plaintext of ``raw`` (b"" while a record is incomplete), received at ``t``;
        None once closed."""
        tls = self._tls
        tls.incoming.write(raw)
        out = []
        try:
            while True:
                out.append(tls.obj.read(READ_SIZE))
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLZeroReturnError:  # close_notify: the end, after what came before it
            if out:
                self._protocol.data_received_at(b"".join(out), t)
            self._close_now(None)
            return None
        except ssl.SSLError as exc:
            self._fail(exc)
            return None
        if tls.outgoing.pending:  # e.g. a TLS 1.3 key update's answer
            self._send(tls.outgoing.read())
        return b"".join(out)

    # -- writing -----------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        if self._closing:
            return
        if self._tls is not None:
            self._tls.obj.write(data)
            data = self._tls.outgoing.read()
        self._send(data)

    def _send(self, data: bytes) -> None:
        if self._unsent:
            self._unsent += data
            return
        try:
            n = self._sock.send(data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except OSError as exc:
            self._fail(exc)
            return
        if n < len(data):
            self._unsent += data[n:]
            self._loop.add_writer(self._fd, self._writable)

    def _writable(self) -> None:
        try:
            n = self._sock.send(self._unsent)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._fail(exc)
            return
        del self._unsent[:n]
        if not self._unsent:
            self._loop.remove_writer(self._fd)
            if self._closing:
                self._close_now(None)

    # -- closing -----------------------------------------------------------------------------
    def close(self) -> None:
        """Close once what was written is sent; the protocol hears ``connection_lost(None)``."""
        if self._closing:
            return
        self._closing = True
        if not self._unsent:
            self._close_now(None)

    def abort(self) -> None:
        """Close at once, dropping what is not sent yet."""
        self._closing = True
        self._close_now(None)

    def _fail(self, exc: BaseException) -> None:
        self._closing = True
        self._close_now(exc)

    def _close_now(self, exc: BaseException | None) -> None:
        if self._closed:
            return
        self._closed = self._closing = True
        self._loop.remove_reader(self._fd)
        if self._unsent:
            self._loop.remove_writer(self._fd)
            self._unsent.clear()
        self._sock.close()
        self._loop.call_soon(self._protocol.connection_lost, exc)
