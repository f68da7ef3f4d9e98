#!/bin/bash
# The suite's timing tests (marked timing: tests/README.md) ten times beside two busy loops (a
# test that fails under load without a reason is a defect). Prints each run's last line and the count; exits 1 unless 10/10.
set -u
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
for _ in 1 2; do (while :; do :; done) & done
trap 'kill $(jobs -p) 2>/dev/null' EXIT
pass=0
for i in $(seq 1 10); do
  log=$(mktemp)
  if timeout 900 "$VENV/bin/python" -m pytest -q -p no:cacheprovider -m timing tests \
      >"$log" 2>&1; then
    pass=$((pass + 1))
  fi
  echo "run $i: $(tail -1 "$log")"
  rm -f "$log"
done
echo "passed $pass/10"
[ "$pass" -eq 10 ]
