#!/usr/bin/env bash
# Runs the test suite in the project's virtual environment. pytest's exit code 5 ("no tests
# collected") is a failure here: a suite that ran nothing has proven nothing.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
"$VENV/bin/ruff" check . || exit 1
"$VENV/bin/python" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
exit "$rc"
