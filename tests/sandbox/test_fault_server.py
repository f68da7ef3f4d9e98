"""The fault server, driven over real loopback sockets with http.client and raw sockets."""

from __future__ import annotations

import http.client
import socket
import statistics
import time

import pytest

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.fault_server import FaultModes, start_fault_server

from .helpers import get, paced_load

#: How late a wake-up may be beside other work on two cores: bounds tell the mode asked for from
#: another, never how precise the server is (that is the bench's, BENCHMARKS.md).
LATE_S = 0.050


def test_health_and_default_body(fault_server):
    status, _, body, _ = get(fault_server.port, "/__health")
    assert (status, body) == (200, b"ok\n")
    status, headers, body, _ = get(fault_server.port, "/any/path")
    assert status == 200
    assert headers["Content-Length"] == "2" and body == b"xx"


def test_delay_is_honoured_and_measured(fault_server):
    conn = http.client.HTTPConnection("127.0.0.1", fault_server.port, timeout=5)
    before = fault_server.stats()["hold_ms"]["count"]
    elapsed = [get(fault_server.port, "/?delay_ms=20", conn=conn)[3] for _ in range(20)]
    conn.close()
    assert min(elapsed) >= 0.020  # never early
    assert statistics.median(elapsed) < 0.020 + LATE_S  # the 20 ms asked, not 40 or more
    hold = fault_server.stats()["hold_ms"]
    assert hold["count"] == before + 20
    assert hold["max"] >= 20.0


@pytest.mark.parametrize("timer", ["timerfd", "call_at"])
def test_delay_precision_at_500_per_second(timer):
    with start_fault_server(delay_ms=10, timer=timer) as server:
        statuses = paced_load(server.port, rate=500, count=500)
        stats = server.stats()
    assert statuses == [200] * 500
    assert stats["timer"] == timer
    hold = stats["hold_ms"]
    assert hold["count"] == 500
    assert hold["min"] >= 10.0  # a deadline never fires early
    # The 10 ms asked and not a multiple: how close to it is bench/run.py's case (b), where
    # timerfd measured +0.05 ms median (call_at +0.3 ms) on an idle 2-vCPU VM (BENCHMARKS.md).
    assert hold["p50"] < 20.0


def test_status_override(fault_server):
    assert get(fault_server.port, "/?status=418")[0] == 418
    status, headers, body, _ = get(fault_server.port, "/?status=204")
    assert (status, body) == (204, b"")
    assert "Content-Length" not in headers
    status, _, body, _ = get(fault_server.port, "/?status=99")
    assert status == 400 and b"status=99 must be a status in 200..599" in body


@pytest.mark.parametrize("query", ["delay_ms=-1", "delay_ms=nan", "bytes=x", "slow_body_ms=inf"])
def test_bad_query_is_a_400(fault_server, query):
    status, _, body, _ = get(fault_server.port, "/?" + query)
    assert status == 400
    assert query.split("=")[0].encode() in body


def test_body_size(fault_server):
    status, headers, body, _ = get(fault_server.port, "/?bytes=100000")
    assert status == 200 and len(body) == 100000 and headers["Content-Length"] == "100000"
    assert get(fault_server.port, "/?bytes=0")[2] == b""


def test_reset_gives_connection_reset(fault_server):
    conn = http.client.HTTPConnection("127.0.0.1", fault_server.port, timeout=5)
    conn.request("GET", "/?reset=1")
    with pytest.raises(ConnectionResetError):
        conn.getresponse()
    conn.close()


def test_hang_times_out(fault_server):
    conn = http.client.HTTPConnection("127.0.0.1", fault_server.port, timeout=0.3)
    conn.request("GET", "/?hang=1")
    start = time.perf_counter()
    with pytest.raises(TimeoutError):
        conn.getresponse()
    assert time.perf_counter() - start >= 0.29
    conn.close()


def test_slow_body_trickles_after_the_headers(fault_server):
    sock = socket.create_connection(("127.0.0.1", fault_server.port), timeout=5)
    start = time.perf_counter()
    sock.sendall(b"GET /?slow_body_ms=300&bytes=30 HTTP/1.1\r\nHost: x\r\n\r\n")
    received, first_at = b"", None
    while not received.endswith(b"x" * 30):
        chunk = sock.recv(4096)
        assert chunk, "server closed early"
        first_at = first_at or time.perf_counter() - start
        received += chunk
    total = time.perf_counter() - start
    sock.close()
    assert b"Content-Length: 30" in received
    assert first_at < 0.1  # the headers came at once
    assert total >= 0.300


def test_keep_alive_pipelining_and_connection_close():
    with start_fault_server() as server:
        connections = server.stats()["connections"]
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        # Pipelined: the second (undelayed) answer must wait for the first (delayed) one.
        sock.sendall(
            b"GET /?delay_ms=50&bytes=1 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /?bytes=3 HTTP/1.1\r\nHost: x\r\n\r\n"
            b"GET /?bytes=5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk  # the server closes after the third response
        sock.close()
        heads = [part for part in data.split(b"HTTP/1.1 ")[1:]]
        assert [h.split(b"\r\n\r\n", 1)[1] for h in heads] == [b"x", b"xxx", b"xxxxx"]
        assert b"Connection: close" in heads[2]
        # HTTP/1.0 without keep-alive is closed too.
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
        sock.close()
        assert data.startswith(b"HTTP/1.1 200 OK") and data.endswith(b"\r\n\r\nxx")
        stats = server.stats()
    assert stats["connections"] - connections == 3  # pipelined, HTTP/1.0 and this stats call
    assert stats["served"] == 4


def test_malformed_request_is_a_400(fault_server):
    sock = socket.create_connection(("127.0.0.1", fault_server.port), timeout=5)
    sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
    assert sock.recv(4096).startswith(b"HTTP/1.1 400 Bad Request")
    sock.close()
    assert fault_server.stats()["parse_errors"] >= 1


def test_stall_holds_responses_until_the_window_ends():
    every, length = 1.0, 0.3
    with start_fault_server(stall_every=every, stall_for=length) as server:
        stats = server.stats()
        started = stats["started_monotonic"]  # CLOCK_MONOTONIC, shared by processes on Linux
        assert stats["stall"] == {"every_s": every, "for_s": length}
        now = time.monotonic()
        window = started + (int((now - started) / every) + 1) * every  # the next window opens
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        # Due inside the window: sent before it opens, with a delay that lands inside it.
        time.sleep(max(0.0, window - 0.1 - time.monotonic()))
        get(server.port, "/?delay_ms=150", conn=conn)
        assert window + length <= time.monotonic() < window + length + LATE_S
        # Arriving inside the next window: held to its end.
        time.sleep(max(0.0, window + every + 0.1 - time.monotonic()))
        get(server.port, "/", conn=conn)
        assert window + every + length <= time.monotonic() < window + every + length + LATE_S
        # Outside a window: answered at once, not held for one.
        elapsed = get(server.port, "/", conn=conn)[3]
        assert elapsed < length / 2
        conn.close()


def test_stats_counts_every_outcome():
    with start_fault_server(delay_ms=1) as server:
        for _ in range(5):
            get(server.port, "/")
        for _ in range(2):
            get(server.port, "/?status=500")
        with pytest.raises(ConnectionResetError):
            get(server.port, "/?reset=1")
        with pytest.raises(TimeoutError):
            get(server.port, "/?hang=1", timeout=0.2)
        get(server.port, "/__health")  # control paths are not counted
        stats = server.stats()
    assert stats["requests"] == 9
    assert stats["served"] == 7
    assert stats["status"] == {"200": 5, "500": 2}
    assert stats["resets"] == 1
    assert stats["hangs"] == 1
    assert stats["hold_ms"]["count"] == 7
    assert 1.0 <= stats["hold_ms"]["min"] <= stats["hold_ms"]["p50"] <= stats["hold_ms"]["max"]
    assert abs(stats["started_at"] - time.time()) < 60
    assert stats["modes"]["delay_ms"] == 1.0


def test_server_wide_error_and_reset_rates():
    with start_fault_server(error_rate=0.5, error_status=503, seed=7) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        statuses = [get(server.port, "/", conn=conn)[0] for _ in range(200)]
        conn.close()
    assert set(statuses) == {200, 503}
    assert 60 < statuses.count(503) < 140
    with start_fault_server(reset_rate=1.0) as server:
        with pytest.raises(ConnectionResetError):
            get(server.port, "/")
        assert get(server.port, "/?reset=0")[0] == 200  # the query overrides the mode


def test_sustains_thousands_of_requests_per_second(fault_server):
    before = fault_server.stats()["served"]
    start = time.perf_counter()
    statuses = paced_load(fault_server.port, rate=4000, count=4000, conns=32)
    elapsed = time.perf_counter() - start
    assert statuses == [200] * 4000
    assert fault_server.stats()["served"] - before == 4000
    # Thousands, not hundreds (a server that took a millisecond per request); how many is the
    # bench's (BENCHMARKS.md), and beside other work the Python client gets less of a core.
    assert 4000 / elapsed > 1000


def test_modes_are_checked_before_anything_starts():
    with pytest.raises(ConfigError, match="error_rate"):
        start_fault_server(error_rate=2)
    with pytest.raises(ConfigError, match="stall_for"):
        FaultModes(stall_every=1, stall_for=1)
    with pytest.raises(ConfigError, match="unknown modes"):
        start_fault_server(dealy_ms=10)
    assert FaultModes(delay_ms=10, seed=3).argv() == ("--delay-ms", "10", "--seed", "3")


def test_asyncio_client_helper_paces_open_loop(fault_server):
    # Guards the helper the rate tests rely on: 100 requests at 1000/s, 20 ms each, overlap.
    start = time.perf_counter()
    assert paced_load(fault_server.port, "/?delay_ms=20", rate=1000, count=100) == [200] * 100
    assert time.perf_counter() - start < 0.5
