"""Isolated Python environments in which executed runs' components run, one per kfp version.

This module owns where a foreign manifest's code runs. A lightweight component's command first
runs ``python3 -m pip install kfp==<the version it was compiled with>``; under kfp.local's
SubprocessRunner with ``use_venv=False`` that ``python3`` is the orchestrator's interpreter, so run
in the server's environment it would replace the server's own kfp (seen: 2.17.3 became 2.14.3).
So the components of an executed run never use the server's interpreter: they use the
interpreter of a cached environment made for the kfp version the manifest pins, in which that
``pip install`` finds its requirement already satisfied instead of installing it.

An environment is an *overlay*: a venv of the server's Python whose own site-packages hold
``kfp==X`` (installed once with ``--no-deps``) and anything components install, followed by the
server's site-packages (added by a ``.pth`` file with ``site.addsitedir``, so that their own
``.pth`` files run too: an editable install of kfp-bench finds the package through one) for kfp's
dependencies, which kfp 2.14 to 2.17 share.
Its own site-packages come first, so ``import kfp`` there finds X; pip in it writes only into it
(pip does not uninstall what lies outside the venv it runs in). Making one is a venv with pip
and one small download, a fraction of a full ``pip install kfp==X`` (BENCHMARKS.md, "Figures
out of the code").

Environments live in ``$KFP_BENCH_ENV_CACHE``, else ``$XDG_CACHE_HOME/kfp-bench/envs``, else
``~/.cache/kfp-bench/envs``, as ``kfp-X-py3.11-<hash of the server's site-packages>``; they are
made once under an exclusive file lock (servers and test runs may race) and reused afterwards.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from kfp_bench.errors import ServerError

_MARKER = ".kfp-bench-ready"


def cache_root() -> Path:
    """The directory that holds the cached environments."""
    explicit = os.environ.get("KFP_BENCH_ENV_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kfp-bench" / "envs"


def _base_site_packages() -> list[str]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return sorted(p for p in paths if os.path.isdir(p))


def env_dir(kfp_version: str, root: Path | None = None) -> Path:
    """Where the environment for ``kfp_version`` lives (whether or not it exists yet)."""
    base = _base_site_packages()
    digest = hashlib.sha256("\n".join(base).encode()).hexdigest()[:10]
    py = f"py{sys.version_info.major}.{sys.version_info.minor}"
    return (root or cache_root()) / f"kfp-{kfp_version}-{py}-{digest}"


def python_of(env: Path) -> Path:
    return env / "bin" / "python"


def ensure_env(kfp_version: str, root: Path | None = None, timeout: float = 600.0) -> Path:
    """The interpreter of the environment for ``kfp_version``, made first if need be (blocking).

    Raises:
        ServerError: the environment could not be made (no network for pip, a bad version, ...).
    """
    env = env_dir(kfp_version, root)
    if (env / _MARKER).exists():
        _link_base(_venv_purelib(env))  # an environment made before the link ran .pth files
        return python_of(env)
    env.parent.mkdir(parents=True, exist_ok=True)
    with open(str(env) + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be making the same one
        if not (env / _MARKER).exists():
            _make(env, kfp_version, timeout)
    return python_of(env)


def _make(env: Path, kfp_version: str, timeout: float) -> None:
    started = time.monotonic()
    tmp = env.with_name(env.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(env, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(tmp)], f"create a venv at {tmp}", timeout)
    # pip upgraded before anything sees the server's packages, as kfp.local upgrades it in its
    # own new environments (kfp/local/subprocess_task_handler.py, environment()): the pip that
    # venv bundles parses every installed distribution's requirements with pyparsing, and each
    # executed step's already-satisfied ``pip install`` of kfp-bench scans them all
    upgrade = [str(python_of(tmp)), "-m", "pip", "install", "--quiet", "--upgrade", "pip"]
    _run(upgrade, "upgrade pip", timeout)
    _link_base(_venv_purelib(tmp))
    pip = [str(python_of(tmp)), "-m", "pip", "install", "--quiet", "--no-deps"]
    _run([*pip, f"kfp=={kfp_version}"], f"pip install kfp=={kfp_version}", timeout)
    # Renamed only once complete, so a half-made env is never used. Its pip is always run as
    # ``python -m pip``, so the stale shebangs of its bin/ scripts do not matter.
    tmp.rename(env)
    (env / _MARKER).write_text(f"made in {time.monotonic() - started:.1f}s\n")


def _link_base(purelib: Path) -> None:
    """Follow the server's site-packages from the environment's, their ``.pth`` files included.

    A bare path in a ``.pth`` file only extends sys.path; ``site.addsitedir`` also runs the
    ``.pth`` files it finds there, such as the finder of an editable install (without it
    the checkout's kfp_bench cannot be imported in a step).
    """
    lines = "".join(f"import site; site.addsitedir({p!r})\n" for p in _base_site_packages())
    pth = purelib / "_kfp_bench_base.pth"
    if not pth.exists() or pth.read_text() != lines:
        tmp = pth.with_name(f"{pth.name}.{os.getpid()}")
        tmp.write_text(lines)
        os.replace(tmp, pth)  # atomic: a step starting meanwhile reads the old or the new one


def _venv_purelib(env: Path) -> Path:
    py = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env / "lib" / py / "site-packages"


def _run(argv: list[str], what: str, timeout: float) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ServerError(f"kfp server: could not {what}: {e}") from e
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).splitlines()[-15:])
        raise ServerError(
            f"kfp server: could not {what} (exit {done.returncode}):\n{tail}\n"
            "Fix: check that PyPI is reachable, or run with --simulate all:... to skip execution."
        )
