"""Packaging for kfp-bench.

One import namespace, ``kfp_bench``: the repository's top-level ``components/`` and ``pipelines/``
folders are installed as ``kfp_bench.components`` and ``kfp_bench.pipelines`` so that nothing with a
generic name such as ``components`` lands in site-packages.
"""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent


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
)
