"""What every kfp-bench component shares: its packages, its base image and the embedded engine.

A component's code is the engine (``kfp_bench``), carried inside the compiled YAML with kfp's
``embedded_artifact_path``: kfp tars the directory, gzips and base64-encodes it into the component's
source, and at runtime extracts it and puts it first on ``sys.path``. Uploading the YAML in any KFP
UI then works with no image to build. ``engine(*parts)`` stages a copy of only the parts a component
imports (never sandbox/, tests or caches), so that each compiled file stays small, and each step
can start: its source, archive included, is one argument of its command, which Linux caps at
128 KiB (``kfp_bench.compile``). A part is a sub-package or a single module (``load/options.py``:
the engine's packages import their names on first use, ``kfp_bench._lazy``).

Two things make the archive deterministic, so that compiling twice gives identical YAML (the
golden test in tests/pipelines/ depends on it). kfp's own archiving uses the files' owner and
mtime and ``gzip.compress``'s current time; ``_deterministic_kfp_archives`` replaces, in kfp's
``component_factory`` module only, ``tarfile.open`` with one whose members are normalized (mtime
0, root-owned, mode 0644/0755) and ``gzip.compress`` with one that writes mtime 0. tarfile already
adds a directory's entries in sorted order.
"""

from __future__ import annotations

import atexit
import gzip
import shutil
import tarfile
import tempfile
import types
from pathlib import Path

import kfp
from kfp.dsl import component_factory

import kfp_bench

#: The image the components run in; ``kfp-bench compile --base-image`` swaps it in compiled YAML.
BASE_IMAGE = "python:3.11-slim"

#: Runtime pins of each engine part, equal to requirements.txt (tests/components check this), so
#: that under kfp.local in this venv every pip install is an "already satisfied" no-op.
PINS = {
    "load": ["hdrhistogram==0.10.8", "httptools==0.9.0", "uvloop==0.23.0", "numpy==2.4.6"],
    "stats": ["hdrhistogram==0.10.8", "numpy==2.4.6"],
    "kfp": ["PyYAML==6.0.4"],
    "kserve": ["kserve==0.21.0"],  # brings kubernetes (30.1.0 here)
    "report": [
        "numpy==2.4.6",
        "pandas==2.3.3",
        "matplotlib==3.11.2",
        "seaborn==0.13.2",
        "hdrhistogram==0.10.8",
    ],
}
#: Files of the engine every part needs.
_BASE = (
    "__init__.py",
    "errors.py",
    "records.py",
    "jsonl.py",
    "_doc.py",
    "params.py",
    "failpoint.py",  # the KFP_BENCH_FAIL_STEP test hook every step calls
    "names.py",  # DNS-1123 names: params.py, kfp/options.py and kserve/spec.py check with it
    "_lazy.py",  # the sub-packages' names imported on first use
)
# the compiled engine twin and its type declarations are for this machine, not the pod
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*", "*.so", "*.pxd")
_staged: dict[tuple[str, ...], str] = {}
_root: list[Path] = []


def packages(*parts: str) -> list[str]:
    """The pinned third-party packages that ``parts`` of the engine import, sorted, no repeats."""
    return sorted({p for part in parts for p in PINS.get(part, ())})


def engine(*parts: str) -> str:
    """A staged copy of ``kfp_bench`` with the base files and the sub-packages ``parts``.

    Args:
        parts: sub-packages of kfp_bench (load, kfp, stats, report, history) or modules
            (results.py, load/options.py) the component imports; a module of a sub-package
            comes with that package's ``__init__.py``.

    Returns:
        The directory to pass as ``embedded_artifact_path``; it holds ``kfp_bench/``.
    """
    key = tuple(sorted(set(parts)))
    if key in _staged:
        return _staged[key]
    if not _root:
        _root.append(Path(tempfile.mkdtemp(prefix="kfp-bench-embed-")))
        atexit.register(shutil.rmtree, _root[0], True)
    src = Path(kfp_bench.__file__).parent
    out = _root[0] / ("-".join(key) or "base")
    pkg = out / "kfp_bench"
    pkg.mkdir(parents=True)
    for name in _BASE:
        shutil.copy2(src / name, pkg / name)
    for part in key:
        path = src / part
        if path.is_dir():
            shutil.copytree(path, pkg / part, ignore=_SKIP, dirs_exist_ok=True)
        elif path.suffix == ".py" and path.is_file():
            for parent in reversed(Path(part).parents[:-1]):  # load/options.py: load/__init__.py
                (pkg / parent).mkdir(exist_ok=True)
                shutil.copy2(src / parent / "__init__.py", pkg / parent / "__init__.py")
            shutil.copy2(path, pkg / part)
        else:
            raise ValueError(f"engine part {part!r}: not a sub-package or module of kfp_bench")
    if "kfp" in key or "kfp/manifest.py" in key:  # the children travel with the manifest loader
        _bundle_children(pkg / "bundled")
    _staged[key] = str(out)
    return _staged[key]


def _bundle_children(directory: Path) -> None:
    """Compile the bundled child pipelines into the staged engine (see params.bundled_manifest)."""
    from kfp_bench.pipelines import compile_pipeline
    from kfp_bench.pipelines.children import CHILDREN

    directory.mkdir()
    for name in CHILDREN:
        compile_pipeline(name, directory / f"{name}.yaml")


def _normalized(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
    info.mode = 0o755 if info.isdir() else 0o644
    return info


class _NormalizedTarFile(tarfile.TarFile):
    def add(self, name, arcname=None, recursive=True, *, filter=None):  # noqa: A002
        super().add(name, arcname, recursive, filter=_normalized)


def _deterministic_kfp_archives() -> None:
    def open_(*args, **kwargs):
        return _NormalizedTarFile.open(*args, **kwargs)

    def compress(data, compresslevel=9, *, mtime=None):
        return gzip.compress(data, compresslevel, mtime=0)

    component_factory.tarfile = types.SimpleNamespace(open=open_)
    component_factory.gzip = types.SimpleNamespace(compress=compress)


assert kfp.__version__ == "2.17.3", "the archive patch is checked against kfp 2.17.3's source"
_deterministic_kfp_archives()
