"""The suite's order (tests/conftest.py): the longest files it names exist and go first."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONGEST_FILES

ROOT = Path(__file__).resolve().parents[1]


def test_every_longest_file_exists():
    """A renamed or deleted file would quietly drop back to the end of the suite."""
    assert [name for name in LONGEST_FILES if not (ROOT / name).is_file()] == []


def test_the_longest_files_are_handed_out_first(request):
    """The session's items begin with the named files, longest first, each file's tests together."""
    files = [item.nodeid.split("::", 1)[0] for item in request.session.items]
    collected = [name for name in dict.fromkeys(files) if name in LONGEST_FILES]
    assert collected == sorted(collected, key=lambda name: -LONGEST_FILES[name])
    first = files[: len(collected) and files.count(collected[0])]
    assert first == collected[:1] * len(first)  # (nothing to check when none was collected)
