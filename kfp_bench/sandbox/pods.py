"""Running the compiled pipeline as a cluster runs it: every step in a fresh Python environment.

A step's pod starts from a bare ``python:3.11-slim`` and has only what its command installs.
kfp.local's ``SubprocessRunner(use_venv=True)`` gives each task the same: a new virtual
environment (no system site-packages) in which the step's own ``pip install`` lines run; here
that environment is a fresh overlay (or copy) of one built once per byte-identical install
script (``step_envs``), in which those lines run again and find everything installed. What
differs from a cluster is where pip finds the packages: a local folder of wheels (``wheelhouse``)
with the index switched off, so that kfp-bench's own wheel, built from this checkout, is the one
installed, and nothing outside the folder can hide a missing pin.

``wheelhouse(dest)`` fills the folder: the pinned dependencies of the extras the steps install,
``kfp`` (which the launcher installs with ``--no-deps``) and pip, setuptools and wheel (kfp.local
upgrades them in each new environment), and never kfp-bench: the steps install kfp-bench only
from its pinned artifact, the ConfigMap ``kfp-bench install`` writes, whose volume
``mount_config_map`` lays out as the kubelet does. ``as_pods(wheels, root, mounted)`` is where the
demo and the tests run a pipeline: kfp.local with one environment per task, pip pointed at the
folder only, the steps' wheel folder at ``mounted``, and the working directory away from any
checkout.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import io
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from kfp_bench import __version__, artifact
from kfp_bench.components._step import EXTRAS, Delivery
from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.step_envs import StepEnvs, install_script

# Imports inside functions: the kfp SDK, in no extra of kfp-bench, loads only when pipelines run.

#: Where the step environments' templates are kept, in the running Python's environment.
ENVS = "kfp-bench-step-envs"
#: What kfp.local installs into each new environment before the step's own command runs.
_VENV_TOOLS = ("pip", "setuptools", "wheel")
#: The mark of a filled wheel folder: what it was filled for, and its wheels then.
_STAMP = ".kfp-bench-filled"


def wheelhouse(dest: Path, project: Path | None = None) -> Path:
    """Fill ``dest`` with every wheel but kfp-bench's that the compiled pipeline's steps
    install; return it. Wheels already there are kept (pip downloads only what is missing),
    and a folder filled for this kfp-bench wheel, kfp and Python, unchanged since, is left as is.

    Raises:
        ConfigError: no checkout to read kfp-bench's dependencies from, or pip failed (its last
            lines said).
    """

    import kfp

    project = project or artifact.project_root()
    if project is None:
        raise ConfigError(
            "kfp-bench runs from an installed wheel, not a checkout: there is no source to "
            "build the steps' package from; run from a clone (make demo)"
        )
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    need = f"kfp-bench[{','.join(EXTRAS)}]=={__version__}"
    own_wheel = artifact.build(project)
    # what the folder must serve follows from the wheel's requirements, kfp's version and the
    # interpreter (not from kfp-bench's code): a folder filled for the same ones, its files
    # untouched, is not filled again (the lock: xdist workers and a demo may fill it at once)
    stamp = f"{_requires(own_wheel.data)} kfp=={kfp.__version__} {sys.version}"
    with open(dest / ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _filled(dest) == stamp:
            return dest
        (dest / _STAMP).unlink(missing_ok=True)
        with tempfile.TemporaryDirectory(prefix="kfp-bench-artifact-") as own:
            own_wheel.write(own)
            # wheels: a dependency published as an sdist only is built once here, not per step
            _pip([*pip, "wheel", "-w", str(dest), "--find-links", str(dest), "--find-links", own,
                  need, *_VENV_TOOLS])  # fmt: skip
        for wheel in dest.glob("kfp_bench-*.whl"):  # kfp-bench never comes from the index
            wheel.unlink()
        _pip([*pip, "download", "-d", str(dest), "--no-deps", f"kfp=={kfp.__version__}"])
        (dest / _STAMP).write_text(f"{stamp}\n{_listing(dest)}")
    return dest


def _requires(wheel: bytes) -> str:
    """The Requires-Dist lines of the wheel ``wheel``'s metadata, one string."""

    with zipfile.ZipFile(io.BytesIO(wheel)) as z:
        (meta,) = (n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    return repr(sorted(line for line in lines if line.startswith("Requires-Dist:")))


def _listing(folder: Path) -> str:
    return "".join(
        f"{f.name} {f.stat().st_size} {f.stat().st_mtime_ns}\n"
        for f in sorted(folder.iterdir())
        if not f.name.startswith(".")
    )


def _filled(folder: Path) -> str | None:
    """The stamp of the last fill of ``folder`` when its wheels are still those it listed."""
    try:
        stamp, listing = (folder / _STAMP).read_text().split("\n", 1)
    except (OSError, ValueError):
        return None
    return stamp if listing == _listing(folder) else None


def mount_config_map(obj: dict, folder: Path) -> Path:
    """Lay out the ConfigMap ``obj`` (``kfp_bench.artifact.config_map``) in ``folder`` as the
    kubelet does its volume: a file per key, binaryData decoded; return the folder."""

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for key, text in (obj.get("data") or {}).items():
        (folder / key).write_text(text)
    for key, b64 in (obj.get("binaryData") or {}).items():
        (folder / key).write_bytes(base64.b64decode(b64))
    return folder


def installed(folder: Path, project: Path | None = None) -> Path:
    """``folder`` holding what ``kfp-bench install`` puts into a namespace for the checkout
    ``project`` (default: this one): its ConfigMap's volume, for ``as_pods``."""

    art = artifact.build(project)
    name = Delivery(sha256=art.sha256).config_map()
    return mount_config_map(artifact.config_map(art, "kfp-bench", name), folder)


def build_wheel(dest: Path, project: Path) -> Path:
    """kfp-bench's wheel built from the checkout ``project`` into ``dest`` (replacing one there).

    It is built in a copy of the checkout's own files (``_source_files``): setuptools builds in
    the tree's ``build/``, whose ``build_py`` copies modules there and never removes one, so an
    in-tree build would ship a module deleted since the last one."""

    dest = Path(dest).resolve()
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.glob("kfp_bench-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="kfp-bench-src-") as tmp:
        for name in _source_files(Path(project)):
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(project) / name, Path(tmp) / name)
        _pip(
            [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "wheel",
             "--no-deps", "--no-build-isolation", "-w", str(dest), tmp]
        )  # fmt: skip
    (wheel,) = dest.glob("kfp_bench-*.whl")
    return wheel


#: What is never a source in a checkout without git: build output and environments.
_NOT_SOURCE = ("build", "dist", ".git", "__pycache__", "results")


def _source_files(project: Path) -> list[str]:
    """The files of the checkout ``project``: git's (tracked, or new and not ignored) in a
    clone, else every file outside build output, environments and caches."""
    git = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=project, capture_output=True, text=True,
    )  # fmt: skip
    if git.returncode == 0 and (project / ".git").exists():
        return [n for n in git.stdout.split("\0") if n and (project / n).is_file()]
    out = []
    for folder, dirs, files in os.walk(project):
        here = Path(folder)
        dirs[:] = [
            d for d in dirs
            if d not in _NOT_SOURCE and not d.endswith(".egg-info")
            and not (here / d / "pyvenv.cfg").exists()
        ]  # fmt: skip
        out += [str((here / f).relative_to(project)) for f in files]
    return out


def _pip(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise ConfigError(f"preparing the steps' wheels failed: {' '.join(cmd[3:6])}: {tail}")


def pod_env(wheels: Path, mounted: Path) -> dict[str, str]:
    """The environment in which each step's pip installs from ``wheels`` only, and its
    install script finds kfp-bench's wheel in ``mounted`` (the ConfigMap's volume in a pod)."""
    return {
        "KFP_BENCH_WHEEL_DIR": str(Path(mounted).resolve()),
        "PIP_CONFIG_FILE": os.devnull,  # none of this machine's pip settings: a pod has none
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(Path(wheels).resolve()),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def init_local(pipeline_root: Path) -> None:
    """Start kfp.local with a fresh environment per task, tasks of a ParallelFor in parallel
    (kfp.local holds its install slot for a task's whole run, so serialized installs would run
    the load workers one after the other)."""
    from kfp import local

    runner = local.SubprocessRunner(
        use_venv=True, serialize_pip_installs=False, max_concurrent_pip_installs=64
    )
    local.init(runner=runner, pipeline_root=str(pipeline_root))


def _handler(envs: StepEnvs):
    """kfp.local's task handler for ``SubprocessRunner``, with the environment of a task a
    fresh overlay or copy of its install script's template (``step_envs``) instead of a new
    venv; the rest is kfp.local's own (``kfp/local/subprocess_task_handler.py``,
    ``SubprocessTaskHandler.run``)."""
    from kfp.local import status, subprocess_task_handler

    base = subprocess_task_handler.SubprocessTaskHandler

    class StepEnvHandler(base):
        def run(self) -> status.Status:
            with envs.environment(self.full_command) as cmd:
                if cmd is None:  # not an install script: kfp.local's own venv
                    return super().run()
                code = subprocess_task_handler.run_local_subprocess(cmd, self.env_vars)
                return status.Status.SUCCESS if code == 0 else status.Status.FAILURE

    return StepEnvHandler


@contextlib.contextmanager
def _reused_envs(envs: StepEnvs):
    """kfp.local's dispatcher looks the handler up in ``subprocess_task_handler`` for every task
    (``kfp/local/task_dispatcher.py``, ``run_single_task_implementation``): ours while inside."""
    from kfp.local import subprocess_task_handler as sth

    saved = sth.SubprocessTaskHandler
    sth.SubprocessTaskHandler = _handler(envs)
    try:
        yield
    finally:
        sth.SubprocessTaskHandler = saved


def step_envs(
    wheels: Path, mounted: Path, cache: Path | None = None, copy: bool = False
) -> StepEnvs:
    """The step environments of ``as_pods(wheels, root, mounted)``, kept in ``cache`` (default:
    ``ENVS`` in this Python's environment, kept between runs); ``copy``: each task's a full copy
    of its template even where an overlay could be (``StepEnvs``)."""
    env = pod_env(wheels, mounted)
    return StepEnvs(cache or Path(sys.prefix) / ENVS, wheels, mounted, env, copy=copy)


def install_scripts(spec: dict) -> list[str]:
    """The install scripts of the tasks of the compiled pipeline ``spec`` that run whatever its
    arguments (a task under a condition is left out), each once, in the order of its first
    task in the pipeline's DAGs."""
    out: dict[str, None] = {}

    def walk(dag: dict) -> None:
        for task in _in_order(dag.get("tasks") or {}):
            if (task.get("triggerPolicy") or {}).get("condition"):
                continue
            comp = spec["components"][task["componentRef"]["name"]]
            if "dag" in comp:
                walk(comp["dag"])
            else:
                container = spec["deploymentSpec"]["executors"][comp["executorLabel"]]
                script = install_script(list(container["container"].get("command") or []))
                if script is not None:
                    out[script] = None

    walk(spec["root"]["dag"])
    return list(out)


def _in_order(tasks: dict) -> list[dict]:
    """A DAG's tasks, each after the tasks it depends on."""
    done: dict[str, dict] = {}

    def visit(name: str) -> None:
        if name not in done:
            for dep in tasks[name].get("dependentTasks") or ():
                visit(dep)
            done[name] = tasks[name]

    for name in tasks:
        visit(name)
    return list(done.values())


@contextlib.contextmanager
def as_pods(wheels: Path, root: Path, mounted: Path, envs: Path | StepEnvs | None = None):
    """Run the pipelines called inside as pods would: ``init_local(root)``, ``pod_env(wheels,
    mounted)`` in this process's environment (the tasks inherit it; restored after), and
    ``root`` as the working directory: a step runs ``python3 -m ...``, which puts its working
    directory first on sys.path, and from a checkout it would import the checkout's kfp_bench
    instead of the wheel. Each task gets a fresh overlay or copy of the environment its install
    script makes, built once per byte-identical script (``step_envs(wheels, mounted, envs)``, or
    ``envs`` itself when it is one) or, with ``envs=False``, kfp.local's own new venv. The
    tasks' temporary files (``TMPDIR``: KFP's launcher writes each step's code to a ``mktemp -d``
    folder) go to a folder removed at the end, as a pod's /tmp goes with the pod."""
    tmp = tempfile.mkdtemp(prefix="kfp-bench-pods-")
    env = {**pod_env(wheels, mounted), "TMPDIR": tmp}
    saved = {k: os.environ.get(k) for k in env}
    root.mkdir(parents=True, exist_ok=True)
    init_local(root)
    os.environ.update(env)
    reuse = contextlib.nullcontext()
    if envs is not False:
        if not isinstance(envs, StepEnvs):
            envs = step_envs(wheels, mounted, envs)
        reuse = _reused_envs(envs)
    try:
        with contextlib.chdir(root), reuse:
            yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        shutil.rmtree(tmp, ignore_errors=True)
