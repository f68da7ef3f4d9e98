"""A real Prometheus (Debian's ``prometheus``, scripts/system-deps.sh) on a free loopback port,
scraping given targets every second with a generated config, its TSDB in the test's folder;
started in its own process group and killed whole (tests/group.py)."""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import yaml

from kfp_bench.sandbox.process import free_port
from tests.group import process_group

BINARY = shutil.which("prometheus") or "/usr/bin/prometheus"


@contextmanager
def prometheus(workdir: Path, targets: dict[str, dict], timeout: float = 60):
    """Start Prometheus scraping ``targets`` ({"host:port": {label: value}}, each its own job,
    the labels set on every series); yield its URL once it is ready."""
    port = free_port()
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "scrape_configs": [
            {"job_name": f"t{i}", "static_configs": [{"targets": [t], "labels": labels}]}
            for i, (t, labels) in enumerate(targets.items())
        ],
    }
    (workdir / "prometheus.yml").write_text(yaml.safe_dump(config))
    args = [
        BINARY,
        f"--config.file={workdir / 'prometheus.yml'}",
        f"--storage.tsdb.path={workdir / 'tsdb'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--log.level=warn",
    ]
    url = f"http://127.0.0.1:{port}"
    with process_group(args, workdir / "prometheus.log") as proc:
        _wait(f"{url}/-/ready", proc, workdir, timeout)
        yield url


def _wait(ready: str, proc, workdir: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            tail = (workdir / "prometheus.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"prometheus exited {proc.returncode}: {tail}")
        try:
            with urllib.request.urlopen(ready, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (OSError, urllib.error.HTTPError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"prometheus not ready after {timeout}s at {ready}")
        time.sleep(0.2)


def query(url: str, expr: str, at: float | None = None) -> list[dict]:
    """An instant query's result (``/api/v1/query``) at epoch second ``at`` (default: now),
    asserted successful."""
    q = urllib.parse.urlencode({"query": expr} | ({} if at is None else {"time": f"{at:.3f}"}))
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as resp:
        doc = json.load(resp)
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def wait_scraped(url: str, job_count: int, timeout: float = 60) -> None:
    """Until every job's target has been scraped up at least once."""
    deadline = time.monotonic() + timeout
    while True:
        up = query(url, "up == 1")
        if len(up) >= job_count:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"prometheus scraped {len(up)} of {job_count} targets up")
        time.sleep(0.3)
