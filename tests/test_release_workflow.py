"""The release workflow (.github/workflows/release.yml) against GitHub's workflow schema and
zizmor's security audits, both from PyPI and run offline; and what it must do: publish with
trusted publishing (no token), pin every action by commit, and attach the pipeline compiled
against the released artifacts."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    return shutil.which(name, path=str(BIN)) or name


def test_it_validates_against_github_s_workflow_schema():
    done = subprocess.run(
        [_tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing():
    done = subprocess.run(
        [_tool("zizmor"), "--offline", "--no-progress", str(WORKFLOW)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def _steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def test_every_action_is_pinned_by_commit_and_pypi_gets_no_token():
    doc = yaml.safe_load(WORKFLOW.read_text())
    for name, job in doc["jobs"].items():
        for step in _steps(job):
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), (name, step)
    pypi = doc["jobs"]["pypi"]
    assert pypi["permissions"] == {"id-token": "write"}
    (publish,) = [s for s in _steps(pypi) if "gh-action-pypi-publish" in s.get("uses", "")]
    assert "with" not in publish  # no password: trusted publishing
    assert doc["permissions"] == {}


def test_the_release_compiles_the_pipeline_pinned_to_what_it_released():
    run = "\n".join(
        s.get("run", "") for s in _steps(yaml.safe_load(WORKFLOW.read_text())["jobs"]["release"])
    )
    assert 'kfp-bench compile --out out/url --wheel-url "$url" --sha256 "$SHA256"' in run
    assert 'kfp-bench compile --out out/image --image "ghcr.io/$REPO@$DIGEST"' in run
    assert "sha256sum -c -" in run
