"""Step environments reused by install command: a template per command, a fresh view per task.

kfp.local's ``SubprocessRunner(use_venv=True)`` makes a new virtual environment for every task
(``kfp/local/subprocess_task_handler.py``, ``environment()``: ``venv.create(with_pip=True)``,
then ``pip install --upgrade pip`` and ``setuptools wheel``) and the step's ``sh -c`` install
script runs in it. What that environment holds is a function of the script's text, the
interpreter, the wheels pip may read (the index is off, ``pods.pod_env``) and pip's settings:
so ``StepEnvs`` builds it once per distinct (byte-identical) script as a template, exactly as
kfp.local would and then with the script's own installs, and gives each task one of its own.
The task's command still runs its ``pip install`` lines (everything is found satisfied). A
task's environment is an overlay of the template (overlayfs in a user and mount namespace of the
task's own, as a container's filesystem lies over its image) or, where the kernel or filesystem
has none, a full copy, never hardlinks: a step writing into its site-packages must not reach the
template or any other task, as a pod's filesystem is its own. A script whose template cannot be
built runs whole in a view of kfp.local's new environment (made once: only pip's settings and
wheels shape it), so its failure shows as a pod's would.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import shutil
import subprocess
import sys
import time
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# Imports inside functions: the kfp SDK, in no extra of kfp-bench, loads only when pipelines run.

#: kfp.local's own upgrades of a new environment (subprocess_task_handler.environment()).
_KFP_LOCAL_UPGRADES = (("pip",), ("setuptools", "wheel"))
#: Templates kept in the cache folder; the least recently used beyond this are removed (a code
#: change gives every script a new wheel pin, so old templates are never used again).
KEEP = 12
_KEY_CHARS = 16


def install_script(full_command: list[str]) -> str | None:
    """The ``sh -c`` install script of a lightweight component's command (the KFP SDK's
    ``_get_packages_to_install_command``, ending ``&& "$0" "$@"``), None for any other shape."""
    if len(full_command) > 3 and full_command[:2] == ["sh", "-c"]:
        return full_command[2]
    return None


def _files_digest(h, folder: Path) -> None:
    for f in sorted(Path(folder).rglob("*")):
        if f.is_file():
            h.update(f"{f.relative_to(folder)}\0".encode())
            h.update(hashlib.sha256(f.read_bytes()).digest())


class StepEnvs:
    """The templates in ``cache`` for pip reading only ``wheels`` and ``mounted`` (the steps'
    wheel volume); ``env``: the pip settings the tasks run with (part of every key). A task's
    environment is an overlay of its template where ``overlays(cache)``, else a copy; ``copy``
    asks for copies."""

    def __init__(
        self, cache: Path, wheels: Path, mounted: Path, env: dict[str, str], copy: bool = False
    ):
        self.copy = copy
        self.cache = Path(cache)
        self.cache.mkdir(parents=True, exist_ok=True)
        h = hashlib.sha256(f"{sys.version}\0{sys.executable}\0".encode())
        for k in sorted(env):
            h.update(f"{k}={env[k]}\0".encode())
        _files_digest(h, wheels)
        _files_digest(h, mounted)
        self._base = h.digest()
        self._env = dict(env)
        # kfp.local's new environment runs pip alone (the upgrades): its inputs are the
        # interpreter, pip's own settings and the wheels, never the steps' volume
        h = hashlib.sha256(f"{sys.version}\0{sys.executable}\0kfp.local venv\0".encode())
        for k in sorted(k for k in env if k.startswith("PIP_")):
            h.update(f"{k}={env[k]}\0".encode())
        _files_digest(h, wheels)
        self.base_name = h.hexdigest()[:_KEY_CHARS]

    def key(self, script: str) -> str:
        """The template's name for ``script``: the sha256 of its exact text and of this cache's
        interpreter, pip settings and wheel folders."""
        return hashlib.sha256(self._base + script.encode()).hexdigest()[:_KEY_CHARS]

    @contextlib.contextmanager
    def environment(self, full_command: list[str]):
        """Yield the command that runs ``full_command`` in a fresh environment: an overlay of its
        script's template (of kfp.local's new environment when the script failed) or a copy,
        removed afterwards; None for another command shape: run it in kfp.local's own
        environment."""
        script = install_script(full_command)
        if script is None:
            yield None
            return
        # a script that fails runs whole in kfp.local's new environment, as in a pod
        template = self._template(script) or self._kfp_local_env()
        own = self.cache / f"{template.name[:9]}-{secrets.token_hex(3)}"  # same length
        layer = own.with_name(f"{own.name}.layer")
        try:
            # the template is the overlay's lower layer while the task runs: not pruned till then
            with self._lock(template.name, shared=True):
                if not self._done(template.name).exists():  # pruned since: kfp.local's own
                    yield None
                    return
                self._done(template.name).touch()  # recently used
                t0 = time.monotonic()
                if not self.copy and overlays(self.cache):
                    cmd = _in_overlay(template, own, layer, full_command)
                    how = "an overlay"
                else:
                    from kfp.local.subprocess_task_handler import replace_python_executable

                    _copy(template, own)
                    cmd = replace_python_executable(full_command, str(own / "bin" / "python"))
                    how = "a copy"
                print(f"step environment {own.name}: {how} of {template.name} "
                      f"({time.monotonic() - t0:.1f} s)", flush=True)  # fmt: skip
                yield cmd
        finally:
            _remove(own, layer)

    def prepare(self, scripts: list[str], workers: int = 2) -> None:
        """Build the templates of ``scripts`` in the background, in that order (a task that
        needs one being built waits for it): the same work a task would do, done earlier."""

        pool = ThreadPoolExecutor(workers, thread_name_prefix="step-env")
        for script in dict.fromkeys(scripts):
            pool.submit(self._template, script)
        pool.shutdown(wait=False)

    def _kfp_local_env(self) -> Path:
        """kfp.local's new environment before a script runs (a venv with pip, then pip,
        setuptools and wheel upgraded): the same for every script, so made once and copied."""
        path = self.cache / self.base_name
        with self._lock(path.name):
            if not self._done(path.name).exists():
                shutil.rmtree(path, ignore_errors=True)
                _kfp_local_venv(path, self._env)
                self._done(path.name).touch()
        return path

    def _template(self, script: str) -> Path | None:
        path = self.cache / self.key(script)
        with self._lock(path.name):
            if self._done(path.name).exists():
                return path
            shutil.rmtree(path, ignore_errors=True)  # a build cut short
            t0 = time.monotonic()
            base = self._kfp_local_env()
            with self._lock(base.name, shared=True):  # not pruned while it is copied
                _copy(base, path)
                self._done(base.name).touch()
            ok = _run_installs(path, script, self._env)
            with open(self.cache / f"{path.name}.log", "a") as log:  # the builds stay silent
                log.write(f"\n{'built' if ok else 'failed'} in {time.monotonic() - t0:.1f} s\n")
            if not ok:
                shutil.rmtree(path, ignore_errors=True)
                return None
            self._done(path.name).touch()
        self._prune(keep=path.name)
        return path

    def _done(self, name: str) -> Path:
        """The mark of a finished template, beside it (never inside: copies would carry it)."""
        return self.cache / f"{name}.ok"

    @contextlib.contextmanager
    def _lock(self, name: str, shared: bool = False):
        """flock on a file of its own per call: exclusive to build or remove ``name``, shared to
        copy it (tasks copy one template at once). Locks of separate opens exclude each other in
        one process too, so threads and processes (pytest-xdist workers share the cache) alike."""
        with open(self.cache / f"{name}.lock", "a") as f:
            fcntl.flock(f, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            yield

    def _prune(self, keep: str) -> None:
        done = sorted(
            (p for p in self.cache.glob("*.ok") if p.stem not in (keep, self.base_name)),
            key=lambda p: p.stat().st_mtime,
        )
        for ok in done[: max(0, len(done) + 1 - KEEP)]:
            with self._lock(ok.stem):
                ok.unlink(missing_ok=True)
                shutil.rmtree(self.cache / ok.stem, ignore_errors=True)


def _kfp_local_venv(path: Path, env: dict[str, str]) -> None:
    """The environment kfp.local makes for a task at ``path`` (``environment()``)."""
    venv.create(path, with_pip=True)
    python = str(path / "bin" / "python")
    for pkgs in _KFP_LOCAL_UPGRADES:  # kfp.local goes on when these fail; so does this
        subprocess.run([python, "-m", "pip", "install", "--upgrade", *pkgs],
                       env={**os.environ, **env}, capture_output=True)  # fmt: skip


def _run_installs(path: Path, script: str, env: dict[str, str]) -> bool:
    """Run ``script``'s installs in the environment ``path`` (its final ``"$0" "$@"`` as
    ``true``, with python3 replaced as kfp.local replaces it); False when it failed."""
    from kfp.local.subprocess_task_handler import replace_python_executable

    cmd = replace_python_executable(["sh", "-c", script, "true"], str(path / "bin" / "python"))
    with open(path.parent / f"{path.name}.log", "w") as log:
        done = subprocess.run(cmd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT)
    return done.returncode == 0


def _copy(src: Path, dst: Path) -> None:
    """A full copy of the environment ``src`` at ``dst`` (copy-on-write clones where the
    filesystem has them), its scripts' and pyvenv.cfg's absolute paths moved to ``dst``."""
    if shutil.which("cp") and sys.platform.startswith("linux"):
        subprocess.run(["cp", "-a", "--reflink=auto", str(src), str(dst)], check=True)
    else:
        shutil.copytree(src, dst, symlinks=True)
    _moved(src, dst, dst)


def _moved(src: Path, dst: Path, out: Path) -> None:
    """Write into ``out`` the files of the environment ``src`` that name its path (pyvenv.cfg
    and its scripts' ``#!`` lines), naming ``dst`` instead."""
    old, new = str(src).encode(), str(dst).encode()
    scripts = (src / "bin").iterdir() if (src / "bin").is_dir() else ()
    for f in [src / "pyvenv.cfg", *scripts]:
        if f.is_file() and not f.is_symlink():
            data = f.read_bytes()
            if old in data:
                to = out / f.relative_to(src)
                to.parent.mkdir(parents=True, exist_ok=True)
                to.write_bytes(data.replace(old, new))
                shutil.copymode(f, to)


#: Mounts ``$1`` (read-only) under the writable ``$2`` (overlayfs's work folder ``$3``) at ``$4``,
#: then runs the rest: in a mount namespace of its own, gone with its last process.
_MOUNT = (
    'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" && shift 4 && exec "$@"'
)


def _in_overlay(template: Path, own: Path, layer: Path, full_command: list[str]) -> list[str]:
    """``full_command`` run with ``own`` a copy-on-write view of ``template``: an overlay whose
    writes go to ``layer`` (a pod's container filesystem over its image's layers, the same)."""
    from kfp.local.subprocess_task_handler import replace_python_executable

    own.mkdir()
    (layer / "upper").mkdir(parents=True)
    (layer / "work").mkdir()
    _moved(template, own, layer / "upper")
    cmd = replace_python_executable(full_command, str(own / "bin" / "python"))
    mount = [str(template), str(layer / "upper"), str(layer / "work"), str(own)]
    return ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _MOUNT, "sh",
            *mount, *cmd]  # fmt: skip


def _remove(*folders: Path) -> None:
    for folder in folders:
        # overlayfs leaves its work folder's own folder mode 000: opened first to be removable
        with contextlib.suppress(OSError):
            (folder / "work" / "work").chmod(0o700)
        shutil.rmtree(folder, ignore_errors=True)


_OVERLAYS: dict[Path, bool] = {}


def overlays(cache: Path) -> bool:
    """Whether a task's environment can be an overlay in ``cache`` (``_in_overlay``): this
    kernel mounts overlayfs in a user namespace over this filesystem, and a write through it
    leaves the lower folder as it was. Else tasks get full copies."""
    cache = Path(cache)
    if cache in _OVERLAYS:
        return _OVERLAYS[cache]
    ok = False
    if shutil.which("unshare") and shutil.which("mount") and not set(str(cache)) & set(",:"):
        probe = cache / f"overlay-probe-{secrets.token_hex(3)}"
        try:
            (probe / "lower").mkdir(parents=True)
            (probe / "lower" / "f").write_text("lower")
            cmd = _in_overlay(probe / "lower", probe / "view", probe / "layer",
                              ["sh", "-c", 'echo upper > "$0/f"', str(probe / "view")])  # fmt: skip
            done = subprocess.run(cmd, capture_output=True, timeout=60)
            ok = (
                done.returncode == 0
                and (probe / "lower" / "f").read_text() == "lower"
                and (probe / "layer" / "upper" / "f").read_text() == "upper\n"
            )
        except (OSError, subprocess.SubprocessError):
            ok = False
        finally:
            _remove(probe / "layer", probe)
    _OVERLAYS[cache] = ok
    return ok
