"""The docs site (mkdocs.yml, make docs) builds in strict mode, offline: a broken link, a broken
anchor or a page missing from the nav fails it; the command reference has every flag of every
command, and the metric names', the pipeline parameters' and the flags' references are the
code's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kfp_bench.cli import build_parser
from kfp_bench.outcome import FAILURES, WARNINGS
from kfp_bench.report.metric_names import GROUPS
from kfp_bench.steps.params import BenchParams

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def build(root: Path, out: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict`` of the site at ``root`` into ``out``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "mkdocs.yml")]
        + ["-d", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def _subcommands() -> dict:
    parser = build_parser()
    return next(a for a in parser._actions if a.choices and a.dest == "command").choices


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(ROOT, out)
    assert done.returncode == 0, done.stderr
    return out


def test_every_flag_of_every_command_is_on_its_page(site):
    missing = {}
    for name, parser in _subcommands().items():
        page = (site / "reference" / "commands" / name / "index.html").read_text()
        flags = [f for a in parser._actions for f in a.option_strings if f not in ("-h", "--help")]
        missing.update({f"{name} {f}": 1 for f in flags if f"<code>{f}</code>" not in page})
    assert missing == {}


def test_the_references_are_the_codes(site):
    names = (site / "reference" / "metric-names" / "index.html").read_text()
    assert all(g.title in names for g in GROUPS)
    flags = (site / "failures" / "index.html").read_text()
    assert all(f"<code>{f}</code>" in flags for f in [*FAILURES, *WARNINGS])
    assert "gen:" not in flags  # every marker was filled
    params = (site / "reference" / "pipeline-parameters" / "index.html").read_text()
    assert all(f"<code>{name}</code>" in params for name in BenchParams.names())


def test_a_link_to_a_repository_file_shows_its_path(site):
    """The site has no copy of deploy/: a link to it becomes the file's path, not a dead link."""
    page = (site / "kubeflow-walkthrough" / "index.html").read_text()
    assert "deploy/rbac.yaml" in page and 'href="../deploy' not in page


@pytest.mark.parametrize(
    "link, said",
    [
        ("[the load](no-such-page.md)", "no-such-page.md"),
        ("[the load](load.md#no-such-heading)", "no-such-heading"),
        ("[a file](../no-such-file.yaml)", "finds no file in the repository"),
    ],
)
def test_a_broken_link_fails_the_build(tmp_path, link, said):
    """A copy of docs/ with one broken link in a page, the rest of the repository linked in."""
    for entry in ROOT.iterdir():
        if entry.name not in ("docs", "site", ".git", ".venv"):
            (tmp_path / entry.name).symlink_to(entry)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    page = tmp_path / "docs" / "getting-started.md"
    page.write_text(page.read_text() + f"\nSee {link}.\n")
    done = build(tmp_path, tmp_path / "out")
    assert done.returncode != 0 and said in done.stderr, done.stderr
