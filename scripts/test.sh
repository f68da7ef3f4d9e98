#!/usr/bin/env bash
# Runs the test suite in the project's virtual environment. pytest's exit code 5 ("no tests
# collected") is a failure here: a suite that ran nothing has proven nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
# Python's bytecode cache on, whatever the calling environment says: the suite starts hundreds of
# Python processes (commands, servers, pipeline steps), and with PYTHONDONTWRITEBYTECODE set each
# compiled kfp-bench's sources again (tests/test_cli.py and test_no_shell.py: 41.2 s of CPU with
# it, 33.9 s without, on 2026-12-06). The cache goes to __pycache__ folders, which git ignores.
unset PYTHONDONTWRITEBYTECODE
"$VENV/bin/ruff" check . || exit 1
# Four worker processes on the two cores, each test file kept in one (its module-scoped servers
# are started once): with two, the suite kept the cores 63% busy (12 min 28 s of wall clock for
# 15.7 min of CPU on 2026-12-02), waiting on its servers and pipelines; four overlap the waits.
# Every test holds with both cores busy. The files are handed out in the order tests/conftest.py
# sorts them (the longest first), not xdist's (the most tests first). The 15 slowest tests are
# listed at the end. Arguments replace the defaults, e.g. a single file.
if [ "$#" -eq 0 ]; then
  set -- -n 4 --dist loadfile --no-loadscope-reorder --durations=15
fi
"$VENV/bin/python" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
