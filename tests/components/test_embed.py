"""The components carry the engine and pin what requirements.txt pins."""

from __future__ import annotations

import base64
import gzip
import io
import re
import tarfile
from pathlib import Path

import kfp_bench.components as comps
import pytest
from kfp_bench.components._embed import PINS

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def _archive(component) -> tarfile.TarFile:
    source = component.component_spec.implementation.container.command[-1]
    b64 = re.search(r"__KFP_EMBEDDED_ARCHIVE_B64 = '([^']+)'", source).group(1)
    return tarfile.open(fileobj=io.BytesIO(gzip.decompress(base64.b64decode(b64))))


def test_pins_equal_requirements():
    pinned = {line.strip() for line in REQUIREMENTS.read_text().splitlines() if "==" in line}
    for pins in PINS.values():
        assert set(pins) <= pinned


@pytest.mark.parametrize("name", comps.__all__)
def test_component_embeds_the_engine_without_the_sandbox(name):
    component = getattr(comps, name)
    members = _archive(component).getmembers()
    names = {m.name for m in members}
    assert "./kfp_bench/__init__.py" in names
    assert not any("sandbox" in n or "__pycache__" in n for n in names)
    assert {(m.mtime, m.uid, m.gid) for m in members} == {(0, 0, 0)}
    assert component.component_spec.description  # documented: the UI shows it


def test_bundled_children_travel_with_the_driver():
    names = {m.name for m in _archive(comps.stage_manifest).getmembers()}
    assert {f"./kfp_bench/bundled/{n}.yaml" for n in ("noop", "fanout", "train")} <= names
