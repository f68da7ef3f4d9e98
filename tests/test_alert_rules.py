"""The alert rules of docs/alerting-rules.yml, unit-tested by Prometheus' own promtool (Debian's
``prometheus`` package, scripts/system-deps.sh) with tests/alerting/rules_test.yml: "regressed"
and "gate broken" fire, "no success in 26 h" fires after 26 h and not before, absent() fires for a
benchmark that never passed. docs/alerting.md shows the rules file verbatim."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "docs" / "alerting-rules.yml"
PROMTOOL = shutil.which("promtool")


@pytest.mark.skipif(PROMTOOL is None, reason="Debian prometheus (promtool) not installed")
def test_promtool_checks_and_tests_the_rules():
    check = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    test = subprocess.run(
        [PROMTOOL, "test", "rules", "rules_test.yml"],
        cwd=ROOT / "tests" / "alerting",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert test.returncode == 0, test.stdout + test.stderr
    assert "SUCCESS" in test.stdout


def test_the_docs_show_the_rules_file_verbatim():
    doc = (ROOT / "docs" / "alerting.md").read_text()
    assert f"```yaml\n{RULES.read_text()}```" in doc
