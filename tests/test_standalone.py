"""A fresh clone stands alone: no test or bench script reads data from outside the repository.

The reference files the tests use are copied into ``tests/data/`` (see its README.md for their
source and licence) and read through ``tests/paths.py``. A folder beside the checkout, or an
absolute path on the machine that wrote the test, is missing in a user's clone.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("tests", "bench")
SUFFIXES = {".py", ".sh", ".yaml", ".yml"}
#: tests/data holds the upstream files themselves, copied unedited; this file names the patterns.
SKIP = (ROOT / "tests" / "data", Path(__file__).resolve())

OUTSIDE = re.compile(
    r"\.\./shared"  # the folder beside the checkout
    r"|shared/reference"
    r"|[\"']shared[\"']\s*/\s*[\"']reference[\"']"  # the same, spelled as Path parts
    r"|/work/"  # an absolute path on the machine that wrote the test
    r"|[\"']/tmp/"  # a string literal that starts with an absolute /tmp path
)


def _sources() -> list[Path]:
    files = []
    for d in SOURCES:
        for p in sorted((ROOT / d).rglob("*")):
            if p.suffix not in SUFFIXES or not p.is_file():
                continue
            if any(p == s or s in p.parents for s in SKIP):
                continue
            files.append(p)
    return files


def test_sources_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in _sources()}
    assert {"tests/paths.py", "tests/kfp/conftest.py", "bench/kfp_runs.py"} <= names


def test_no_source_reads_data_from_outside_the_repository():
    hits = [
        f"{p.relative_to(ROOT)}:{n}: {line.strip()}"
        for p in _sources()
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not hits, "read reference data from tests/data (tests/paths.py):\n" + "\n".join(hits)


def test_every_data_file_is_documented():
    data = ROOT / "tests" / "data"
    readme = (data / "README.md").read_text()
    files = [p.relative_to(data).as_posix() for p in sorted(data.rglob("*")) if p.is_file()]
    assert "Apache-2.0" in readme and "https://www.apache.org/licenses/LICENSE-2.0" in readme
    undocumented = [f for f in files if not f.endswith("README.md") and not _documented(data, f)]
    assert undocumented == []


def _documented(data: Path, name: str) -> bool:
    """Named in tests/data/README.md, or under a folder named there (``kfp_api/``) whose own
    README.md names the subfolder the file came from (``resources/``): a copied tree of 160
    files is documented by its folders, each with its source path."""
    if f"`{name}`" in (data / "README.md").read_text():
        return True
    parts = name.split("/")
    for i in range(1, len(parts)):
        folder, rest = "/".join(parts[:i]), parts[i:]
        own = data / folder / "README.md"
        if f"`{folder}/`" not in (data / "README.md").read_text() or not own.is_file():
            continue
        text = own.read_text()
        if any(f"`{'/'.join(rest[:j])}/`" in text for j in range(1, len(rest))):
            return True
    return False
