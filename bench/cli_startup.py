"""CLI start-up: the CPU one ``kfp-bench`` command spends, most of it in imports (the test suite
starts the command about a thousand times).

Each command runs ``--runs`` times as its own process, after one untimed run that writes the
bytecode caches; a figure is the median of its user+sys CPU (the process and what it waited
for), with the median wall time in the file. With ``--baseline REV`` the same commands also run
from REV's ``kfp_bench/`` (``git archive`` into a temporary folder put first on PYTHONPATH, the
same environment), alternating run by run, so that both see the same machine. The load's target
is an HTTP server in this process, whose CPU is not counted.

Usage: ``.venv/bin/python bench/cli_startup.py [--baseline REV] [--runs 5]``. It prints a table
and writes a results file for BENCHMARKS.md (bench/result_files.py).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__

ROOT = Path(__file__).resolve().parents[1]
KFP_BENCH = Path(sys.executable).with_name("kfp-bench")
#: The commands measured, as a reader types them; URL is the local server's.
COMMANDS = ["--version", "load --help", "load -n 20 -c 2 URL"]


class Hello(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real server answers the load

    def do_GET(self):  # noqa: N802 (http.server's name)
        body = b"hello world\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def cpu_of(argv: list[str], env: dict) -> tuple[float, float]:
    """Run ``argv`` to its end: its user+sys CPU seconds and its wall seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall


def extract(rev: str, into: Path) -> None:
    """REV's kfp_bench/ package under ``into``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "kfp_bench"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)


def measure(trees: dict[str, dict], url: str, runs: int) -> dict:
    """Every command of ``COMMANDS`` from each tree (its name -> its environment), ``runs``
    times: {command: {tree: [(cpu, wall), ...]}}."""
    out = {}
    for command in COMMANDS:
        argv = [str(KFP_BENCH), *command.replace("URL", url).split()]
        out[command] = {name: [] for name in trees}
        for env in trees.values():  # untimed: writes each tree's bytecode caches
            cpu_of(argv, env)
        for _ in range(runs):
            for name, env in trees.items():
                out[command][name].append(cpu_of(argv, env))
        print(command, {n: f"{statistics.median(c for c, _ in v):.3f}" for n, v in
                        out[command].items()}, file=sys.stderr)  # fmt: skip
    return out


def result(figures: dict, names: list[str], runs: int, started: str, commit: str, machine):
    """The figures as a results file: each command's median CPU from each tree; every run kept
    in a detail table."""

    def med(xs, i):
        return round(statistics.median(x[i] for x in xs), 3)

    columns = ["command", *names]
    rows = [[f"kfp-bench {c}", *(med(figures[c][n], 0) for n in names)] for c in COMMANDS]
    runs_rows = [
        [f"kfp-bench {c}", n, med(figures[c][n], 1), " ".join(f"{x[0]:.3f}" for x in figures[c][n])]
        for c in COMMANDS
        for n in names
    ]
    return result_files.Result(
        benchmark="cli-startup",
        title=f"CLI start-up: user+sys CPU s, median of {runs} runs",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table("", columns, rows),
            result_files.Table(
                "every run",
                ["command", "tree", "wall s, median", "CPU s of each run"],
                runs_rows,
                detail=True,
            ),
        ],  # fmt: skip
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed runs of each command (5)")
    ap.add_argument("--baseline", default="", metavar="REV", help="also measure REV's kfp_bench")
    ap.add_argument("--results", type=Path, default=result_files.RESULTS)
    a = ap.parse_args(argv)
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")
    }
    trees = {"this checkout": env}
    started, commit, machine = result_files.now(), result_files.commit(), host()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = Path(tempfile.mkdtemp(prefix="kfp-bench-cli-startup-"))
    try:
        if a.baseline:
            extract(a.baseline, base)
            trees = {a.baseline: {**env, "PYTHONPATH": str(base)}, **trees}
        figures = measure(trees, f"http://127.0.0.1:{server.server_port}/", a.runs)
    finally:
        server.shutdown()
        shutil.rmtree(base, ignore_errors=True)
    machine["loadavg_1m_end"] = os.getloadavg()[0]
    r = result(figures, list(trees), a.runs, started, commit, machine)
    for row in [r.tables[0].columns, *r.tables[0].rows]:
        print(" | ".join(str(c) for c in row))
    print(f"load average {machine['loadavg_1m']:.2f} at the start, "
          f"{machine['loadavg_1m_end']:.2f} at the end", file=sys.stderr)  # fmt: skip
    print(f"wrote {result_files.save(r, a.results)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
