"""Packaging for kfp-bench.

One import namespace, ``kfp_bench``: the repository's top-level ``components/`` and ``pipelines/``
folders are installed as ``kfp_bench.components`` and ``kfp_bench.pipelines`` so that nothing with a
generic name such as ``components`` lands in site-packages.

It also compiles the load engine's twin, ``kfp_bench.load._cengine``: ``kfp_bench/load/engine.py``
and its type declarations ``engine.pxd``, copied under ``build/cengine`` with the source's SHA-256
appended and compiled by Cython (a build requirement in pyproject.toml). ``engine.py`` uses the twin
only when that hash matches its own text. Without a C compiler the build goes on without the twin
and the plain Python engine runs: same results, about half the top request rate.
"""

import hashlib
import shutil
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).parent
ENGINE = HERE / "kfp_bench" / "load" / "engine"
TWIN = "kfp_bench.load._cengine"
CYTHON_DIRECTIVES = {
    "language_level": 3,
    "annotation_typing": False,  # the types are engine.pxd's, not the hints'
    "infer_types": True,
    "boundscheck": False,
    "wraparound": False,
    "initializedcheck": False,
}


def _requirements() -> list[str]:
    """Runtime pins from requirements.txt, without the test and lint tools."""
    dev_only = {
        "pytest",
        "pytest-xdist",
        "execnet",
        "ruff",
        "gcp-storage-emulator",
        "nbclient",
        "nbformat",
        "ipykernel",
        "ipython",
        "jupyter_client",
        "pyzmq",
        "tornado",
        "jsonschema",
        "kubernetes-validate",
        "importlib_resources",
    }
    reqs = []
    for line in (HERE / "requirements.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and line.split("==")[0] not in dev_only:
            reqs.append(line)
    return reqs


def _twin_extensions() -> list:
    """The engine's compiled twin, or nothing when Cython is not there to build it."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("kfp-bench: Cython not found; the plain Python engine will run", file=sys.stderr)
        return []
    src = ENGINE.with_suffix(".py")
    out = HERE / "build" / "cengine" / "kfp_bench" / "load"
    out.mkdir(parents=True, exist_ok=True)
    for pkg in (out, out.parent):
        (pkg / "__init__.py").touch()
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    text = src.read_text() + f'\n\nSOURCE_SHA256 = "{digest}"\n'
    twin = out / "_cengine.py"
    if not twin.exists() or twin.read_text() != text:
        twin.write_text(text)
    shutil.copyfile(ENGINE.with_suffix(".pxd"), out / "_cengine.pxd")
    ext = Extension(TWIN, [str(twin.relative_to(HERE))])
    return cythonize([ext], compiler_directives=CYTHON_DIRECTIVES, quiet=True)


class _OptionalBuildExt(build_ext):
    """build_ext that goes on without the twin when it cannot be compiled (no C compiler)."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # CompileError, LinkError, a missing compiler
            print(
                f"kfp-bench: could not compile {ext.name} ({exc}); "
                "the plain Python engine will run",
                file=sys.stderr,
            )


engine = find_packages(include=["kfp_bench", "kfp_bench.*"])
mapped = {"kfp_bench.components": "components", "kfp_bench.pipelines": "pipelines"}

setup(
    name="kfp-bench",
    version="0.1.0",
    description="Benchmarks for Kubeflow Pipelines and KServe, as a KFP pipeline and a CLI",
    long_description=(HERE / "README.md").read_text(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=engine + list(mapped),
    package_dir={"": ".", **mapped},
    include_package_data=True,
    package_data={"kfp_bench": ["py.typed"]},
    install_requires=_requirements(),
    extras_require={
        "test": [
            "pytest==9.2.0",
            "pytest-xdist==3.8.0",
            "ruff==0.17.6",
            "gcp-storage-emulator==2026.7.19",
        ]
    },
    entry_points={"console_scripts": ["kfp-bench=kfp_bench.cli:main"]},
    ext_modules=_twin_extensions(),
    cmdclass={"build_ext": _OptionalBuildExt},
)
