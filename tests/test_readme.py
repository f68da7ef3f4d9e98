"""README.md is a manual's first page: under 10 kB, its quickstart the two commands CI and people
run (.ci/run runs the second), its picture and links there to follow."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def test_the_readme_is_under_10_kb():
    assert README.stat().st_size < 10_000


def test_the_quickstart_is_make_demo_and_make_test():
    text = README.read_text()
    block = text.split("## Quickstart", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in block.splitlines()] == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_every_link_and_picture_of_the_readme_is_there():
    links = re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert local and [link for link in local if not (ROOT / link).exists()] == []
    assert "docs/report.png" in local
