"""Instructions per request of the load engine's request path, counted by valgrind (callgrind).

Timings on a shared 2-core VM swing by a third from run to run; instruction counts do not. This
script feeds one recorded nginx response to the engine's connection protocol (``RequestConnection``)
N times through stand-in transports that discard writes, PASS connections per pass of a stand-in
event loop that then runs what they queued (the closed loop's burst of next requests), under
``valgrind --tool=callgrind``, once with N = 0 and once with N = COUNT, and prints the difference
divided by COUNT: the user-space instructions the engine spends per request (parsing, timestamps,
the packed row, the next send), without the kernel, the event loop or the aggregation. It also
counts the series aggregation per row (``LoadStats.add_batch`` on batches of 10,000 rows).

Usage: ``.venv/bin/python bench/instructions.py [--count 100000]`` (needs valgrind: apt-get install
valgrind). Each count takes about a minute. The counts also go to a results file for
BENCHMARKS.md (bench/result_files.py).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__

RESPONSE = (
    b"HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Mon, 30 Nov 2026 07:00:00 GMT\r\n"
    b"Content-Type: text/plain\r\nContent-Length: 12\r\nConnection: keep-alive\r\n\r\n"
    b"hello world\n"
)

PASS = 8  # connections answered per pass of the event loop (about what -c 50 saw on nginx)

REQUEST_PATH = f"""
import sys, time
PASS = {PASS}
from kfp_bench.load.connection import RequestConnection
from kfp_bench.load.engine import Attack
from kfp_bench.load.options import LoadOptions
from kfp_bench.load.workers import StatsSink
from kfp_bench.stats.load import LoadStats

class Discard:
    def write(self, data): pass
    def close(self): pass
    def abort(self): pass

attack = Attack(LoadOptions(url="http://127.0.0.1:1/", duration=10), StatsSink(LoadStats()))
attack.t0 = time.perf_counter()
pending = []
attack.call_soon = pending.append  # the event loop's queue: run below after each pass
conns = [RequestConnection(attack) for _ in range(PASS)]
for i, conn in enumerate(conns):
    conn.connection_made(Discard())
    conn.send(i, None)
attack.inflight = PASS
response = {RESPONSE!r}
for _ in range(int(sys.argv[1]) // PASS):
    for conn in conns:  # one pass of the loop: PASS connections answered
        conn.data_received(response)
    while pending:
        pending.pop()()
    if attack.off > 4_000_000:  # doubles: start the buffer over before it grows past 32 MB
        attack.off = 0
"""

AGGREGATION = """
import sys, time
from array import array
from kfp_bench.records import ResultBatch
from kfp_bench.stats.load import LoadStats

stats = LoadStats(started_at=time.time())
t0 = time.perf_counter()
rows = array("d")
for i in range(10_000):
    t = t0 + i * 2e-5
    rows.extend((i, t, t, t + 1e-6, t + 1e-4, t + 1.2e-4 + (i % 97) * 1e-6, 200, 12))
for _ in range(int(sys.argv[1])):
    stats.add_batch(ResultBatch(t0, array("d", rows), [], [], 50))
"""


def instructions(code: str, n: int) -> int:
    """Instructions callgrind counts for ``python -c code n``."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    cmd = ["setarch", "-R", "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"]
    done = subprocess.run(
        [*cmd, sys.executable, "-c", code, str(n)], capture_output=True, text=True, env=env
    )
    found = re.search(r"Collected : ([\d,]+)", done.stderr)
    if done.returncode or not found:
        raise SystemExit(f"valgrind failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=100_000, help="requests in the measured run")
    p.add_argument("--results", type=Path, default=result_files.RESULTS, help="for BENCHMARKS.md")
    args = p.parse_args(argv)
    started, machine, commit = result_files.now(), host(), result_files.commit()
    if not shutil.which("valgrind"):
        sys.stderr.write("bench/instructions.py: valgrind not found; apt-get install valgrind\n")
        return 2
    base, full = instructions(REQUEST_PATH, 0), instructions(REQUEST_PATH, args.count)
    per_request = round((full - base) / args.count)
    print(f"request path: {per_request:,} instructions per request")
    batches = max(args.count // 10_000, 1)
    base, full = instructions(AGGREGATION, 0), instructions(AGGREGATION, batches)
    per_row = round((full - base) / (batches * 10_000))
    print(f"aggregation:  {per_row:,} instructions per row")
    valgrind = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
    result = result_files.Result(
        benchmark="instructions",
        title="Load engine: instructions per request",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__, "valgrind": valgrind.stdout.strip()},
        tables=[
            result_files.Table(
                "user-space instructions (callgrind)",
                ["path", "instructions"],
                [["request path, per request", per_request], ["aggregation, per row", per_row]],
            )
        ],
    )
    print(result_files.save(result, args.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
