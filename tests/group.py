"""A server binary started in its own process group, its output in a log file, and killed whole
on exit (a graceful stop can hang, and children would outlive their parent)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def process_group(args: list[str], log: Path) -> Iterator[subprocess.Popen]:
    """``args`` running in a new session, stdout and stderr into ``log``; SIGKILL to its group
    on exit."""
    out = log.open("wb")
    proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(30)
        out.close()
