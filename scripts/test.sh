#!/usr/bin/env bash
# Runs the test suite in the project's virtual environment. pytest's exit code 5 ("no tests
# collected") is a failure here: a suite that ran nothing has proven nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
"$VENV/bin/ruff" check . || exit 1
# Two worker processes, each test file kept in one (its module-scoped servers are started once);
# the 15 slowest tests are listed at the end. Arguments replace the defaults, e.g. a single file.
if [ "$#" -eq 0 ]; then
  set -- -n 2 --dist loadfile --durations=15
fi
"$VENV/bin/python" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
