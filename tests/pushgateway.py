"""A real Prometheus Pushgateway (Debian's ``prometheus-pushgateway``, scripts/system-deps.sh) on a
free loopback port, in memory only (no persistence file), started in its own process group and
killed whole; and a reader of what it holds, through its own query API (``/api/v1/metrics``)."""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from kfp_bench.sandbox.process import free_port
from tests.group import process_group

BINARY = "/usr/bin/prometheus-pushgateway"


def binary() -> str | None:
    """The Pushgateway's binary, or None when the Debian package is not installed."""
    return shutil.which("prometheus-pushgateway") or (BINARY if os.path.exists(BINARY) else None)


@contextmanager
def pushgateway(workdir: Path, timeout: float = 60):
    """Start a Pushgateway, wait until it is ready, yield its URL (http://127.0.0.1:PORT)."""
    port = free_port()
    args = [binary() or BINARY, f"--web.listen-address=127.0.0.1:{port}"]
    # Debian's default keeps a file under /var/lib/prometheus: empty keeps the groups in memory.
    args += ["--persistence.file=", "--log.level=debug"]
    url = f"http://127.0.0.1:{port}"
    with process_group(args, workdir / "pushgateway.log") as proc:
        _wait_ready(url, proc, workdir, timeout)
        yield url


def _wait_ready(url: str, proc, workdir: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            tail = (workdir / "pushgateway.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"pushgateway exited {proc.returncode}: {tail}")
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"pushgateway not ready after {timeout}s at {url}")
        time.sleep(0.1)


def groups(url: str) -> list[dict]:
    """Every group the Pushgateway holds, as its query API answers (``GET /api/v1/metrics``)."""
    with urllib.request.urlopen(f"{url}/api/v1/metrics", timeout=10) as resp:
        doc = json.load(resp)
    assert doc["status"] == "success", doc
    return doc["data"]


def series(url: str) -> dict[tuple, float]:
    """``{(metric name, frozenset of its labels): value}`` of every pushed series (the
    Pushgateway's own push_time_seconds and push_failure_time_seconds left out)."""
    out = {}
    for group in groups(url):
        for name, family in group.items():
            if name == "labels" or not isinstance(family, dict) or name.startswith("push_"):
                continue
            for m in family["metrics"]:
                out[(name, frozenset(m["labels"].items()))] = float(m["value"])
    return out


def scrape(url: str) -> str:
    """The Pushgateway's /metrics page, as Prometheus scrapes it."""
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as resp:
        return resp.read().decode()
