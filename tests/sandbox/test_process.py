"""Starting and stopping sandbox servers: clear errors, and nothing left running."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap

import pytest

from kfp_bench.errors import ServerError
from kfp_bench.sandbox.fault_server import start_fault_server
from kfp_bench.sandbox.process import ServerSpec, free_port, start_server

from .helpers import children_running, gone

FAULT = "kfp_bench.sandbox.fault_server"


def test_port_in_use_raises_server_error_naming_server_and_port():
    running = children_running(FAULT)  # e.g. the session's fault server
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ServerError) as info:
            start_fault_server(port=port)
        # Run by hand, the server itself says why it stopped, on stderr, and exits 1.
        done = subprocess.run(
            [sys.executable, "-m", FAULT, "--port", str(port)], capture_output=True, text=True
        )
    message = str(info.value)
    assert f"fault server ({FAULT}) cannot start on 127.0.0.1:{port}: the port is in use" in message
    assert f"Fix: stop whatever listens on port {port}, or pass port=0" in message
    assert children_running(FAULT) == running
    assert done.returncode == 1
    assert f"fault server: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "address already in use" in done.stderr


def test_module_that_crashes_raises_server_error_with_its_stderr():
    spec = ServerSpec(
        name="broken server",
        module="kfp_bench.sandbox.no_such_module",
        port_flag="--port",
        health_path="/",
    )
    with pytest.raises(ServerError) as info:
        start_server(spec, port=free_port())
    message = str(info.value)
    assert "broken server (kfp_bench.sandbox.no_such_module) on 127.0.0.1:" in message
    assert "exited with code 1 before it was ready" in message
    assert "Last lines of its stderr:" in message
    assert "No module named kfp_bench.sandbox.no_such_module" in message


def test_server_that_never_gets_healthy_times_out_and_is_stopped():
    # The fault server answers any path; this health path always answers 404.
    spec = ServerSpec(
        name="unhealthy server",
        module=FAULT,
        port_flag="--port",
        health_path="/?status=404",
        start_timeout=1.0,
    )
    running = children_running(FAULT)
    with pytest.raises(
        ServerError, match=r"did not answer 200 at .* within 1 s \(last: HTTP 404\)"
    ):
        start_server(spec)
    assert children_running(FAULT) == running


def test_stop_leaves_nothing_and_is_idempotent():
    server = start_fault_server()
    assert server.alive() and server.port > 0
    assert server.stop() == 0  # SIGTERM is a clean exit
    assert server.stop() == 0
    assert gone(server.pid, within=0)
    assert "listening on" in server.log_tail()  # the log outlives the process


def test_context_manager_stops_on_exception():
    with pytest.raises(RuntimeError), start_fault_server() as server:
        raise RuntimeError("boom")
    assert not server.alive() and gone(server.pid, within=0)


def _run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=30
    )


def test_servers_left_open_are_stopped_at_exit():
    done = _run_python(
        """
        from kfp_bench.sandbox import start_fault_server
        print(start_fault_server().pid)
        """
    )
    assert done.returncode == 0, done.stderr
    assert gone(int(done.stdout), within=1)


def test_server_stops_itself_when_its_parent_is_killed():
    done = _run_python(
        """
        import os, signal
        from kfp_bench.sandbox import start_fault_server
        print(start_fault_server().pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)  # no atexit, no context manager
        """
    )
    assert done.returncode == -9
    assert gone(int(done.stdout), within=3)


def test_bad_port_and_free_port():
    with pytest.raises(ServerError, match="port 70000 is not a TCP port"):
        start_fault_server(port=70000)
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
