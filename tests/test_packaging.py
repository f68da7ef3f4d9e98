"""`pip install .` gives one import namespace, kfp_bench, and the kfp-bench console script."""

import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

from packaging.requirements import Requirement

from kfp_bench.components._step import EXTRAS
from kfp_bench.sandbox.pods import build_wheel

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_only_the_kfp_bench_namespace(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
        timeout=300,
        cwd=tmp_path,
    )
    (wheel,) = tmp_path.glob("kfp_bench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    others = {t for t in tops if t != "kfp_bench"}
    assert len(others) == 1 and others.pop().endswith(".dist-info"), tops
    assert "kfp_bench/components/__init__.py" in names
    assert "kfp_bench/pipelines/__init__.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "kfp-bench = kfp_bench.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text).lower()


def _closure(reqs: list[Requirement]) -> dict[str, str]:
    """Every distribution ``reqs`` install, by name, with the version this environment has."""
    seen: dict[str, str] = {}
    todo = list(reqs)
    while todo:
        req = todo.pop()
        name = _name(req.name)
        if name in seen or name in ("pip", "setuptools", "wheel"):
            continue
        seen[name] = md.version(name)
        for text in md.requires(name) or []:
            dep = Requirement(text)
            wanted = dep.marker is None or any(
                dep.marker.evaluate({"extra": e}) for e in (req.extras or {""})
            )
            if wanted:
                todo.append(dep)
    return seen


def test_every_package_a_step_installs_is_pinned_to_the_tested_version():
    """Each extra a step installs lists its whole closure, each package == this environment's
    version: what a pod installs is what the tests ran (a new dependency of a pinned package
    shows up here as unpinned)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = extras["optional-dependencies"]
    for extra in EXTRAS:
        listed = [Requirement(r) for r in extras[extra]]
        pins = {_name(r.name): str(r.specifier) for r in listed}
        closure = _closure(listed)
        wrong = {
            n: f"=={v} (listed {pins.get(n) or 'nothing'})"
            for n, v in closure.items()
            if pins.get(n) != f"=={v}"
        }
        assert not wrong, f"extra {extra}: pin these in pyproject.toml: {wrong}"


def test_every_step_names_an_extra_the_package_has():
    import kfp_bench.components as comps

    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    used = {e for name in comps.__all__ for e in getattr(comps, name).extras}
    assert used == set(EXTRAS) and used <= extras


def test_the_bare_package_says_which_extra_a_command_needs(tmp_path):
    """kfp-bench alone depends on nothing (a step installs its extra); its CLI says what to
    install instead of a traceback."""
    import venv

    wheel = build_wheel(tmp_path, ROOT)
    env = tmp_path / "env"
    venv.create(env, with_pip=False)  # installed into by the suite's pip, not one of its own
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "-q",
         "--no-deps", str(wheel)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    done = subprocess.run(
        [str(env / "bin" / "kfp-bench"), "compile", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().endswith("comes with the cli extra: pip install 'kfp-bench[cli]'")
    assert "Traceback" not in done.stderr
