"""Latency means a response: requests that got none are counted and timed apart, end to end.

Real processes and real loopback sockets: a closed port (bound, its number read, closed: every
connect is refused) and a small server that answers some requests after a pause and resets the
others. No mock.
"""

from __future__ import annotations

import json
import socket
import struct
import threading

import pytest

from kfp_bench.load.options import LoadOptions
from kfp_bench.load.sweep import run_sweep
from kfp_bench.outcome import summary_flags
from kfp_bench.results import write_results
from kfp_bench.stats.load import LoadStats
from kfp_bench.steps.predict import _said_step
from tests.conftest import run_cli

#: The answering server's pause before each answer: a floor under every response's latency.
PAUSE_S = 0.05


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class _HalfResetServer:
    """Loopback HTTP/1.1: the 1st, 3rd, 5th... request it reads is answered 200 after
    ``PAUSE_S``; each other one is reset at once (SO_LINGER 0: a TCP RST). It counts both."""

    def __init__(self):
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/"
        self.lock = threading.Lock()
        self.seen = self.answered = self.resets = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                buf = buf.split(b"\r\n\r\n", 1)[1]  # (GETs without a body)
                with self.lock:
                    self.seen += 1
                    answer = self.seen % 2 == 1
                    if answer:
                        self.answered += 1
                    else:
                        self.resets += 1
                if not answer:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                threading.Event().wait(PAUSE_S)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def half_reset():
    server = _HalfResetServer()
    yield server
    server.close()


def test_a_closed_port_prints_and_saves_no_latency_and_exits_1(tmp_path):
    out = tmp_path / "load.json"
    r = run_cli(
        "load", "-n", "40", "-c", "4", "--json-out", str(out), f"http://127.0.0.1:{_closed_port()}/"
    )
    assert r.returncode == 1, r.stdout + r.stderr
    for latency in ("Slowest", "Fastest", "Average", "Latency distribution", "histogram"):
        assert latency not in r.stdout, r.stdout
    assert "No response:\tnone of 40 requests got one: no latency figures" in r.stdout
    assert "no-response: no request of the load got a response" in r.stdout
    assert "Requests:\t40 of 40" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["latency_ms"] is None and doc["responses"] == 0, doc
    assert doc["flags"] == ["no-response"]
    nr = doc["no_response"]
    assert nr["requests"] == 40 and sum(nr["errors"].values()) == 40
    assert all("refused" in e for e in nr["errors"]) and nr["time_ms"]["max"] > 0
    assert doc["details"]["connect"]["count"] == 0  # a refused connect is no phase of a response
    # the saved result reads back, and its report says the same
    again = run_cli("report", str(out))
    assert again.returncode == 0, again.stderr
    assert "Latency distribution" not in again.stdout and "no-response" in again.stdout
    # and a report bundle of it: no latency Metric, the no-response ones and the flag
    write_results(tmp_path / "results", load=LoadStats.from_dict(doc))
    bundle = run_cli("report", str(tmp_path / "results"))
    assert bundle.returncode == 0, bundle.stderr
    metrics = json.loads((tmp_path / "results" / "report" / "metrics.json").read_text())
    assert metrics["flag_no_response"] == 1 and metrics["load_no_response"] == 40
    assert metrics["load_responses"] == 0 and "load_no_response_p99_ms" in metrics
    assert not [k for k in metrics if k.startswith(("load_p", "load_mean", "load_max"))]


def test_latency_figures_are_those_of_the_answered_requests_only(half_reset, tmp_path):
    out = tmp_path / "load.json"
    r = run_cli("load", "-n", "40", "-c", "2", "--json-out", str(out), half_reset.url)
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    answered, resets = half_reset.answered, half_reset.resets
    assert answered and resets and doc["requests"] == 40
    # every latency figure is of a response: none is under the server's pause
    assert doc["latency_ms"]["min"] >= PAUSE_S * 1000 * 0.99, doc["latency_ms"]  # (HDR: 3 digits)
    assert doc["responses"] == doc["status_codes"]["200"] == answered
    assert doc["no_response"]["requests"] == sum(doc["errors"].values()) == resets
    assert sum(row["requests"] - row["no_response"] for row in doc["series"]) == answered
    assert doc["no_response"]["time_ms"]["min"] < doc["latency_ms"]["min"]
    assert "flags" in doc and "no-response" not in doc["flags"]
    assert f"Requests:\t{resets} of 40" in r.stdout
    assert "Latency distribution:" in r.stdout


def test_a_sweep_step_without_a_response_is_flagged_and_never_the_knee():
    url = f"http://127.0.0.1:{_closed_port()}/"
    result = run_sweep(LoadOptions(url=url), [20, 40], 0.3, pause_s=0)
    for step in result.steps:
        assert "no-response" in step.failures and step.p99_ms is None, step
        assert step.no_response == step.requests > 0
    assert result.knee.level is None, result.knee
    row = result.rows()[0]
    assert row["p99_ms"] is None and row["failures"] == ["no-response"] and not row["knee"]
    # the pipeline's check_outcome and Metrics read the steps' failures from summary.json
    assert "no-response" in summary_flags(result.as_dict())
    _said_step(result.steps[0])  # the pipeline's step log: no p99 to format


def test_the_sweep_command_exits_1_and_names_the_flag(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/"
    r = run_cli("sweep", "--rates", "20", "-z", "0.3s", "--pause", "0", url)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "kfp-bench sweep: no-response:" in r.stderr
    assert "No knee: no steps with a response." in r.stdout
