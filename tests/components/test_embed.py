"""The components carry the engine and pin what requirements.txt pins."""

from __future__ import annotations

import ast
import base64
import gzip
import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import kfp_bench.components as comps
import pytest
from kfp_bench.components._embed import PINS, engine

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


# Run in a child with only the archive to import kfp_bench from: this checkout's editable install
# is taken off the import machinery, as it is absent from a pod.
_ALONE = """
import importlib, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path[:] = [p for p in sys.path if p not in ("", {cwd!r})]
sys.path.insert(0, {root!r})
for module in {modules!r}:
    importlib.import_module(module)
{imports}
{extra}
def where(module):
    return getattr(module, "__file__", "") or ""
outside = sorted(
    name for name, module in sys.modules.items()
    if name.startswith("kfp_bench") and not where(module).startswith({root!r})
)
assert not outside, outside
"""
#: What a step's function does besides its imports, to reach the engine's deferred imports.
_EXERCISE = {
    # every branch of the parameters' check: the sweep's rates, an InferenceService, the manifest
    "check_params": "from kfp_bench.params import BenchParams\n"
    "BenchParams(sweep_rates='5,50', isvc={'name': 'm', 'model_format': 'sklearn', "
    "'storage_uri': 'gs://b/m'}).check()",
}


@pytest.mark.parametrize("name", comps.__all__)
def test_the_archive_alone_runs_its_step(name, tmp_path):
    """A step imports kfp_bench from its archive only: every module in it, and each kfp_bench
    import of the step's function, load with nothing else of kfp_bench on the path (a module left
    out would fail in a pod with ModuleNotFoundError)."""
    component = getattr(comps, name)
    _archive(component).extractall(tmp_path / "root", filter="data")
    root = str(tmp_path / "root")
    source = component.component_spec.implementation.container.command[-1]
    function = next(
        n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name
    )
    imports = [
        ast.unparse(n)
        for n in ast.walk(function)
        if isinstance(n, ast.Import | ast.ImportFrom) and "kfp_bench" in ast.unparse(n)
    ]
    assert imports, "the step imports nothing of kfp_bench"
    package = Path(root) / "kfp_bench"
    modules = sorted(
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for p in package.rglob("*.py")
    )
    script = _ALONE.format(
        cwd=str(tmp_path),
        root=root,
        modules=modules,
        imports="\n".join(imports),
        extra=_EXERCISE.get(name, ""),
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]


def test_an_engine_part_that_does_not_exist_is_refused():
    with pytest.raises(ValueError, match="engine part 'load/nothing.py'"):
        engine("load/nothing.py")
