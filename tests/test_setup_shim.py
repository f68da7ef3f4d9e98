"""setup.py is a shim: setuptools reads everything from pyproject.toml, one place for metadata."""

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import kfp_bench

ROOT = Path(__file__).resolve().parents[1]


def test_setup_py_passes_nothing_to_setup():
    tree = ast.parse((ROOT / "setup.py").read_text())
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert [ast.unparse(c) for c in calls] == ["setup()"]
    imports = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert imports == ["from setuptools import setup"]


def test_setup_py_reports_what_pyproject_says():
    done = subprocess.run(
        [sys.executable, "setup.py", "--name", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert done.stdout.split() == [project["name"], kfp_bench.__version__]
