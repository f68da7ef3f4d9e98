"""Running one local server in a child process: start, wait until healthy, stop, never leak.

This module owns the life of a sandbox server process. ``start_server`` runs
``python -m <module> <port flag> <port> ...`` in a new session (so a Ctrl-C in our terminal, and our
own signal handlers, never reach it), picks a free port when asked for port 0, polls a health URL
until it answers 200 and returns a ``ServerHandle``. ``ServerHandle.stop`` sends SIGTERM to the
child's process group, then SIGKILL after a grace period; the handle is a context manager and every
live handle is also stopped at interpreter exit. A child that outlives us anyway (our process was
SIGKILLed) stops itself: its ``main`` calls ``watch_parent``.

A server that cannot start raises ``kfp_bench.errors.ServerError`` naming the server, the port and
the last lines of its stderr. A port asked for explicitly is checked before anything is started:
whatever already listens there would otherwise answer our health checks.

The child's stderr goes to an anonymous temporary file rather than a pipe: a pipe nobody drains
blocks a chatty server, and draining it would cost the benchmark client CPU. Its stdout (uvicorn's
per-request access log) is discarded for the same reason.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import fcntl
import functools
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from kfp_bench.errors import ConfigError, ServerError
from kfp_bench.load.cpu import BLAS_THREADS_ENV

PARENT_ENV = "KFP_BENCH_PARENT_PID"
"""Environment variable through which a child learns which process it must not outlive."""

_PORT_RETRIES = 2  # when a port we picked is taken before the child binds it
_TAIL_BYTES = 8192


@functools.cache
def _opener():
    """Proxy variables must not route loopback health checks through a proxy."""
    # urllib.request (~20 ms) when a server starts: kfp-bench load imports this module
    from urllib.request import ProxyHandler, build_opener

    return build_opener(ProxyHandler({}))


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """How to run one sandbox server as ``python -m module``.

    Attributes:
        name: what messages call the server, e.g. "model server".
        module: the module run with ``python -m``.
        port_flag: the command-line flag that takes the port, e.g. "--http_port".
        health_path: the path polled until it answers 200, e.g. "/v1/models/iris".
        args: further command-line arguments, after the port.
        host: the loopback address the server's URLs use.
        start_timeout: seconds to wait for the health URL to answer 200.
        stop_timeout: seconds between SIGTERM and SIGKILL when stopping.
        env: extra environment variables for the child.
    """

    name: str
    module: str
    port_flag: str
    health_path: str
    args: tuple[str, ...] = ()
    host: str = "127.0.0.1"
    start_timeout: float = 30.0
    stop_timeout: float = 5.0
    env: dict[str, str] = field(default_factory=dict)


class ServerHandle:
    """A running sandbox server; a context manager that stops it on exit.

    Subclasses add URLs of their own; ``start_server`` builds them through ``handle_type``.
    """

    def __init__(self, spec: ServerSpec, proc: subprocess.Popen, port: int, log) -> None:
        self.spec = spec
        self.port = port
        self._proc = proc
        self._log = log
        self._final_tail = ""
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:8080``."""
        return f"http://{self.spec.host}:{self.port}"

    @property
    def health_url(self) -> str:
        return self.url + self.spec.health_path

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()

    def alive(self) -> bool:
        return self._proc.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines the server wrote to stderr (kept after ``stop``)."""
        if self._log is None:
            text = self._final_tail
        else:
            fd = self._log.fileno()
            size = os.fstat(fd).st_size
            start = max(0, size - _TAIL_BYTES)
            # pread leaves the shared file offset alone; the child appends through the same file.
            text = os.pread(fd, size - start, start).decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> int | None:
        """Stop the server and every process in its group; return its exit code. Idempotent."""
        with self._lock:
            if self._log is None:
                return self._proc.returncode
            _LIVE.discard(self)
            try:
                _terminate_group(self._proc, self.spec.stop_timeout)
            finally:
                self._final_tail = self.log_tail(lines=200)
                self._log.close()
                self._log = None
            return self._proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.alive() else f"exited {self.returncode}"
        return f"<{type(self).__name__} {self.name} {self.url} pid={self.pid} {state}>"


H = TypeVar("H", bound=ServerHandle)


def start_server(spec: ServerSpec, port: int = 0, handle_type: type[H] = ServerHandle) -> H:
    """Start ``spec``'s server on ``port`` (0: a free one) and return once it is healthy.

    Raises:
        ServerError: the server exited, or its health URL did not answer 200 in time.
    """
    if port < 0 or port > 65535:
        raise ServerError(f"{spec.name}: port {port} is not a TCP port; pass 0 to pick a free one")
    if port and not _bindable(port):
        # Checked up front: otherwise whatever holds the port could answer our health checks.
        raise ServerError(
            f"{spec.name} ({spec.module}) cannot start on {spec.host}:{port}: the port is in "
            f"use. Fix: stop whatever listens on port {port}, or pass port=0 to pick a free one."
        )
    retries = _PORT_RETRIES if port == 0 else 0
    while True:
        handle = _spawn(spec, port or free_port(), handle_type)
        try:
            _wait_healthy(handle)
            return handle
        except BaseException as e:
            tail = handle.log_tail()
            handle.stop()
            if isinstance(e, ServerError) and retries > 0 and _port_taken(tail):
                retries -= 1  # another process took the port between our probe and the bind
                continue
            raise


def free_port() -> int:
    """A TCP port that is free on every interface right now (the OS picks it)."""
    # Binding the wildcard address also rules out ports that a server holds on 0.0.0.0 only.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _bindable(port: int) -> bool:
    """False if something listens on ``port``; other bind errors are left for the server to say."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # SO_REUSEADDR as servers set it: a port with only TIME_WAIT connections counts as free.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("", port))
        except OSError as e:
            return e.errno != errno.EADDRINUSE
        return True


def watch_parent(interval: float = 0.5) -> None:
    """In a child server: kill our process group once the parent that started us is gone.

    ``start_server`` names the parent in ``KFP_BENCH_PARENT_PID``; without it this does nothing,
    so a server started by hand keeps running.
    """
    expected = os.environ.get(PARENT_ENV)
    if not expected or not expected.isdigit():
        return

    def watch() -> None:
        while os.getppid() == int(expected):
            time.sleep(interval)
        # We are our group's leader (start_new_session), so this reaches only our own workers.
        os.killpg(os.getpgid(0), signal.SIGKILL)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def _spawn(spec: ServerSpec, port: int, handle_type: type[H]) -> H:
    argv = [sys.executable, "-m", spec.module, spec.port_flag, str(port), *spec.args]
    log = tempfile.TemporaryFile(prefix="kfp-bench-server-", suffix=".log")
    flags = fcntl.fcntl(log.fileno(), fcntl.F_GETFL)
    fcntl.fcntl(log.fileno(), fcntl.F_SETFL, flags | os.O_APPEND)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=_child_env(spec),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as e:
        log.close()
        raise ServerError(f"{spec.name}: cannot run {argv[0]}: {e}") from e
    handle = handle_type(spec, proc, port, log)
    _LIVE.add(handle)
    return handle


def _child_env(spec: ServerSpec) -> dict[str, str]:
    env = dict(os.environ)
    env.update(spec.env)
    env[PARENT_ENV] = str(os.getpid())
    env.setdefault("PYTHONUNBUFFERED", "1")
    # a local server shares the two cores with the load generator: no idle OpenBLAS threads
    env.setdefault(BLAS_THREADS_ENV, "1")
    # The child must import this same kfp_bench, even from a checkout that is not installed.
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def _wait_healthy(handle: ServerHandle) -> None:
    spec = handle.spec
    deadline = time.monotonic() + spec.start_timeout
    last_error = "no answer yet"
    while True:
        code = handle.returncode
        if code is not None:
            raise ServerError(
                _start_message(handle, f"exited with code {code} before it was ready")
            )
        try:
            with _opener().open(handle.health_url, timeout=1.0) as resp:
                if resp.status == 200:
                    return
                last_error = f"HTTP {resp.status}"
        except urllib.error.HTTPError as e:
            last_error = f"HTTP {e.code}"
        except (OSError, urllib.error.URLError) as e:
            last_error = str(getattr(e, "reason", e))
        if time.monotonic() >= deadline:
            reason = (
                f"did not answer 200 at {handle.health_url} within {spec.start_timeout:g} s "
                f"(last: {last_error})"
            )
            raise ServerError(_start_message(handle, reason))
        time.sleep(0.05)


def _start_message(handle: ServerHandle, reason: str) -> str:
    tail = handle.log_tail()
    if _port_taken(tail):
        fix = f"port {handle.port} is in use: stop whatever listens there, or pass port=0"
    else:
        fix = "see its stderr above"
    return (
        f"{handle.name} ({handle.spec.module}) on {handle.spec.host}:{handle.port} {reason}.\n"
        f"Last lines of its stderr:\n{_indent(tail) or '    (empty)'}\nFix: {fix}."
    )


def _port_taken(text: str) -> bool:
    return "address already in use" in text.lower() or f"[errno {errno.EADDRINUSE}]" in text.lower()


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def _terminate_group(proc: subprocess.Popen, grace: float) -> None:
    """SIGTERM the child's group, SIGKILL it after ``grace`` s, then reap the child."""
    pgid = proc.pid  # start_new_session made the child the leader of its own group
    if proc.returncode is None:
        _killpg(pgid, signal.SIGTERM)
        if not _exited(proc.pid, grace):
            _killpg(pgid, signal.SIGKILL)
        # The leader is a zombie but not reaped, so its pgid cannot be reused: sweep stragglers
        # (worker processes) before reaping it.
        _exited(proc.pid, 5.0)
        _killpg(pgid, signal.SIGKILL)
    proc.wait()


def _exited(pid: int, timeout: float) -> bool:
    """Whether ``pid`` exits within ``timeout`` s; it is left unreaped (WNOWAIT)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True  # already reaped
        if info is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


_LIVE: set[ServerHandle] = set()


@atexit.register
def _stop_all() -> None:
    for handle in list(_LIVE):
        with contextlib.suppress(Exception):
            handle.stop()


async def listen_until_stopped(
    name: str, server, protocol, host: str, port: int, note="", reuse_port=False, listening=None
):
    """The child's side: listen on ``host:port`` with ``protocol()`` connections, say where on
    stderr (the line ``start_server``'s callers see), serve until SIGTERM or SIGINT, then close
    the listener and ``server``. A port that cannot be had is a ``ConfigError`` naming it, and
    ``server`` is closed first. ``reuse_port``: SO_REUSEPORT, for several processes on one port;
    ``listening()`` is called once the port is held."""

    loop = asyncio.get_running_loop()
    try:
        listener = await loop.create_server(
            protocol, host, port, backlog=4096, reuse_address=True, reuse_port=reuse_port or None
        )
    except OSError as e:
        server.close()
        raise ConfigError(f"{name}: cannot listen on {host}:{port}: {e}") from e
    bound = listener.sockets[0].getsockname()[1]
    print(f"{name} listening on http://{host}:{bound}{note}", file=sys.stderr, flush=True)
    if listening is not None:
        listening()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    listener.close()
    server.close()
