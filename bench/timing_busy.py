"""The suite's timing tests beside two busy loops: ``scripts/timing-tests-busy.sh`` runs the
tests marked ``timing`` ten times with both cores kept busy, and this script keeps its count and
each run's pytest line in a results file for BENCHMARKS.md (bench/result_files.py).

Usage: ``.venv/bin/python bench/timing_busy.py`` (about 5 minutes). Nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import result_files
from peers import host

from kfp_bench import __version__

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "scripts/timing-tests-busy.sh"
RUN = re.compile(r"^run (\d+): (.*)$", re.M)
PASSED = re.compile(r"^passed (\d+)/(\d+)$", re.M)
SECONDS = re.compile(r" in ([\d.]+)s")


def result(out: str, started: str, machine: dict, commit: str) -> result_files.Result:
    """The script's output as a results file: the count, and every run's last line."""
    runs = RUN.findall(out)
    passed, total = map(int, PASSED.search(out).groups())
    secs = sorted(float(m[1]) for _, line in runs if (m := SECONDS.search(line)))
    rows = [["runs passed", f"{passed} of {total}"]]
    if secs:
        rows.append(["a run's pytest time", f"{secs[0]:.1f} to {secs[-1]:.1f} s"])
    return result_files.Result(
        benchmark="timing-busy",
        title="Timing tests beside two busy loops",
        command=result_files.command(),
        started=started,
        commit=commit,
        machine=machine,
        versions={"kfp-bench": __version__},
        tables=[
            result_files.Table("", ["figure", "value"], rows),
            result_files.Table(
                "each run",
                ["run", "pytest's last line"],
                [[int(i), line] for i, line in runs],
                detail=True,
            ),  # fmt: skip
        ],
        goals=[
            result_files.Goal(
                "runs passed beside two busy loops", f"{passed} of {total}", "all", passed == total
            )
        ],  # fmt: skip
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", type=Path, default=result_files.RESULTS, help="for BENCHMARKS.md")
    a = ap.parse_args(argv)
    started, machine, commit = result_files.now(), host(), result_files.commit()
    done = subprocess.run(["bash", SCRIPT], cwd=ROOT, capture_output=True, text=True)
    print(done.stdout, end="")
    if not PASSED.search(done.stdout):
        print(f"{SCRIPT} printed no count:\n{done.stderr[-2000:]}", file=sys.stderr)
        return 2
    print(result_files.save(result(done.stdout, started, machine, commit), a.results))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
