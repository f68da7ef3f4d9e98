"""Many ``kfp-bench`` commands as real processes, with the interpreter's start-up paid once.

A refusal takes the command a few milliseconds; the process around it spends half a second
importing kfp-bench. ``serve`` (run in a child process: ``ForkServer``) imports the CLI and
builds its parser (importing every command's modules) once, then forks one process per command:
a process of its own with its exit code, its own working directory, TMPDIR, stdin, stdout and
stderr, which runs ``python -m kfp_bench.cli ARGV`` as ``runpy`` runs it and ends through the
interpreter's own exit (atexit handlers, buffered output flushed). What the shared start-up
itself leaves in its working directory or TMPDIR is kept apart (``ForkServer.close``), so that
the callers can check it as they check each command's.
"""

from __future__ import annotations

import json
import os
import runpy
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SERVE = "from tests.cli_forks import serve; serve()"


def _child(job: dict) -> None:
    """In the forked process: the command's directories and streams, then ``-m kfp_bench.cli``."""
    os.chdir(job["cwd"])
    os.environ["TMPDIR"] = job["tmpdir"]
    tempfile.tempdir = None  # gettempdir reads TMPDIR again
    for fd, name, flags in (
        (0, os.devnull, os.O_RDONLY),
        (1, job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(name, flags, 0o644)
        os.dup2(opened, fd)
        os.close(opened)
    sys.argv = ["kfp-bench", *job["argv"]]
    # as python -m: sys.path[0] is the working directory ('' from -c), argv[0] the module's file
    runpy.run_module("kfp_bench.cli", run_name="__main__", alter_sys=True)


def _run(job: dict) -> int | None:
    """Fork, run ``job``, and return its exit code (None: killed after ``job["timeout"]`` s)."""
    if threading.active_count() != 1:
        raise RuntimeError("a process with threads cannot fork safely")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        # its SystemExit, or any other exception, unwinds to the interpreter's own exit
        _child(job)
        sys.exit(0)
    with os.fdopen(os.pidfd_open(pid), "rb", buffering=0) as pidfd:
        ready, _, _ = select.select([pidfd], [], [], job["timeout"])
        if not ready:
            os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) if ready else None


def serve() -> None:
    """Import the CLI, then run each job of a JSON line of stdin, answering a JSON line."""
    from kfp_bench.cli import build_parser

    build_parser()  # imports every command's modules: the start-up every command shares

    for line in sys.stdin:
        print(json.dumps({"code": _run(json.loads(line))}), flush=True)


class ForkServer:
    """A ``serve`` process started with ``env``, in ``base``/cwd with TMPDIR ``base``/tmp."""

    def __init__(self, base: Path, env: dict):
        self.cwd, self.tmpdir = base / "cwd", base / "tmp"
        self.cwd.mkdir()
        self.tmpdir.mkdir()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVE],
            cwd=self.cwd,
            env={**env, "TMPDIR": str(self.tmpdir), "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, argv, cwd: Path, tmpdir: Path, timeout: float = 120):
        """Run ``kfp-bench ARGV`` in ``cwd`` with TMPDIR ``tmpdir``: its CompletedProcess, or
        None when it took more than ``timeout`` s."""
        out, err = tmpdir.parent / "stdout", tmpdir.parent / "stderr"
        job = dict(argv=list(argv), cwd=str(cwd), tmpdir=str(tmpdir), timeout=timeout,
                   stdout=str(out), stderr=str(err))  # fmt: skip
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        assert answer, "the fork server ended"
        code = json.loads(answer)["code"]
        if code is None:
            return None
        return subprocess.CompletedProcess(
            ["kfp-bench", *argv], code, out.read_text(), err.read_text()
        )

    def close(self) -> set[str]:
        """End the server; return what its own start-up left in its cwd and TMPDIR."""
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0
        self.proc.stdout.close()
        return {str(p) for d in (self.cwd, self.tmpdir) for p in d.rglob("*")}
