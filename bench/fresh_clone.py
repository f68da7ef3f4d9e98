"""How long a fresh clone takes to run the README's commands: ``make demo``, or the suite as CI
runs it (``CI=true bash .ci/run``, which is ``make test``), in a ``git clone`` of this checkout's
HEAD in a temporary folder, with pip's cache as the machine has it.

Prints the command's output as it goes and writes a results file for BENCHMARKS.md
(bench/result_files.py): the wall time, the CPU of every process it waited for, and for the
suite pytest's count and time against the budget of 10 minutes.

Usage: ``.venv/bin/python bench/fresh_clone.py demo|test`` (demo: a few minutes; test: 15 or
more). Nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"demo": ["make", "demo"], "test": ["bash", ".ci/run"]}
SHOWN = {"demo": "make demo", "test": "CI=true bash .ci/run"}
PYTEST_BUDGET_S = 600.0
#: pytest's last line: "2935 passed, 33 skipped in 687.12s (0:11:27)"
SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ passed.*?) in (?P<s>[\d.]+)s", re.M)


def minutes(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def run(what: str) -> dict:
    """Clone HEAD, run the command in the clone, and time it."""
    with tempfile.TemporaryDirectory(prefix="fresh-clone-") as tmp:
        clone = Path(tmp) / "x"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = {**os.environ, "CI": "true"} if what == "test" else dict(os.environ)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.Popen(COMMANDS[what], cwd=clone, env=env, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
        lines = []
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line)
        rc = proc.wait()
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    found = SUMMARY.search("".join(lines[-50:]))
    return {
        "rc": rc,
        "wall_s": wall,
        "user_s": after.ru_utime - before.ru_utime,
        "sys_s": after.ru_stime - before.ru_stime,
        "pytest": (found["counts"], float(found["s"])) if found else None,
    }


def result(what: str, r: dict, started: str, machine: dict, commit: str):
    """The run as a results file."""
    rows = [
        [f"`{SHOWN[what]}`, wall", minutes(r["wall_s"])],
        ["CPU, user / sys", f"{r['user_s']:.0f} s / {r['sys_s']:.0f} s"],
        ["exit status", r["rc"]],
    ]
    goals = []
    if r["pytest"]:
        counts, secs = r["pytest"]
        rows.insert(1, ["pytest", f"{minutes(secs)} ({counts})"])
        goals.append(result_files.Goal("pytest, wall", minutes(secs), "<= 10 min",
                                       secs <= PYTEST_BUDGET_S))  # fmt: skip
    title = {"demo": "`make demo` from a fresh clone", "test": "The test suite from a fresh clone"}
    return result_files.Result(
        benchmark=f"fresh-clone-{what}",
        title=title[what],
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[result_files.Table("", ["figure", "value"], rows)],
        goals=goals,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=sorted(COMMANDS))
    ap.add_argument("--results", type=Path, default=result_files.RESULTS, help="for BENCHMARKS.md")
    a = ap.parse_args(argv)
    started, machine, commit = result_files.now(), host(), result_files.commit()
    r = run(a.what)
    print(result_files.save(result(a.what, r, started, machine, commit), a.results))
    return r["rc"]


if __name__ == "__main__":
    sys.exit(main())
