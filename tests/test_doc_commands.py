"""Every ``kfp-bench`` command in a code block of README.md and docs/ is one the real parser
takes: its subcommand and every flag exist, each flag's value is of the right kind. Parsed only,
never run: most need a cluster."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kfp_bench.cli import build_parser
from kfp_bench.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^[ \t]*```(?:sh|bash)?\n(.*?)^[ \t]*```", re.M | re.S)


def commands(text: str) -> list[str]:
    """The kfp-bench command lines of ``text``'s code blocks, continuation lines joined, comments
    and a trailing ``&`` left out."""
    found = []
    for block in _BLOCK.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #")[0].strip().removesuffix("&").strip()
            if line.startswith("kfp-bench "):
                found.append(line)
    return found


CASES = [(p.relative_to(ROOT).as_posix(), c) for p in PAGES for c in commands(p.read_text())]


def test_the_pages_have_commands_to_check():
    assert len(CASES) >= 10 and {page for page, _ in CASES} >= {
        "README.md",
        "docs/kubeflow-walkthrough.md",
        "docs/load.md",
    }


@pytest.mark.parametrize("page, command", CASES, ids=[f"{p}:{c[:50]}" for p, c in CASES])
def test_a_documented_command_parses(page, command):
    try:
        build_parser().parse_args(shlex.split(command)[1:])
    except (ConfigError, SystemExit) as exc:
        pytest.fail(f"{page}: {command}\n{exc}")
