"""Step start-up: how long each step of a compiled pipeline spends pip-installing its packages.

Every step of the compiled benchmark pipeline runs in a bare ``python:3.11-slim`` pod whose
command first pip-installs the step's packages (the lightweight-component launcher: an ``sh -c``
script with one or more ``python3 -m pip install ... 'pkg==ver'`` commands, then the program).
That install is start-up cost paid by every step of every run. This script measures it on this
machine, as a pod would pay it:

  1. it reads the pipeline YAML (``deploymentSpec.executors`` of the first document), and takes
     the pip install commands out of each executor's ``sh -c`` script with ``shlex``, keeping the
     options the script gives (``--no-deps``, ``--index-url``, ``--trusted-host``, ...);
  2. for each step it creates a fresh virtual environment (``python -m venv``, no system site
     packages) and times each of the step's installs in it, run as
     ``<venv>/bin/python -m pip install --no-cache-dir --disable-pip-version-check <args>``:
     the cache is off, so each step downloads what a pod downloads; pip reads no configuration
     file (``PIP_CONFIG_FILE=/dev/null``) and sees no other ``PIP_*`` variable of this machine,
     only the ones the script itself sets, and ``--find-links DIR`` for the folders given;
  3. it records per step the wall seconds of each install and their sum, the packages installed
     (``pip list`` after, less the fresh venv's own), the venv's growth on disk, and whether it
     succeeded (with the last lines of pip's output when it failed);
  4. the run's total weighs each step by the tasks a default run starts from it: an executor
     used by several tasks counts once per task, and a step inside a ParallelFor once per
     iteration (``load_workers`` of the pipeline's defaults, or ``--load-workers N``).

kfp-bench's own wheel is where a pod finds it, the ConfigMap's folder (``$wheel`` in the step's
script, under ``KFP_BENCH_WHEEL_DIR``): built from this checkout into the work folder and checked
against the pipeline's pin first (a pipeline compiled by another kfp-bench is refused, exit 2),
or taken from ``--wheel-dir``. Tasks a default run skips by their condition (the LLM load,
report-history) count 0 in its total; their steps are still measured.

Creating the venv is not counted: a pod's image already has Python. Steps with no pip install at
all (image mode) count 0 s and 0 packages. Each venv is removed after its step, and all of them on
an error or Ctrl-C.

Run it as ``.venv/bin/python bench/startup.py [PIPELINE.yaml] [--find-links DIR] [--repeat N]``.
It prints progress on stderr, a Markdown table on stdout and writes the figures as JSON
(default bench/startup.json) and a results file for BENCHMARKS.md (bench/result_files.py). It
exits 1 when any install failed, and says which. Nothing here runs in CI: the figures hold for
this machine's network and disks.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import result_files
import yaml
from peers import host
from pipeline_installs import Step, read_pipeline
from startup_report import failed_installs, markdown, result, summarise

from kfp_bench import artifact

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_YAML = ROOT / "compiled" / "kfp_bench.yaml"
DEFAULT_JSON = ROOT / "bench" / "startup.json"
PIP_FIXED = ["--no-cache-dir", "--disable-pip-version-check"]
#: Where a package-mode step's script looks for kfp-bench's wheel (kfp_bench/components/_step.py).
WHEEL_DIR_ENV = "KFP_BENCH_WHEEL_DIR"
PIN = re.compile(r"#sha256=([0-9a-f]{64})")
TAIL_LINES = 25

# -- measuring ---------------------------------------------------------------------------------


def pip_env(script_env: dict[str, str]) -> dict[str, str]:
    """This process's environment without pip's settings, as a pod has none: no config file,
    no ``PIP_*`` variable but the ones the step's own script sets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.pop("VIRTUAL_ENV", None)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONHOME", None)
    env.update({k: v for k, v in script_env.items() if k.startswith("PIP_")})
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def du_bytes(path: Path) -> int:
    """Disk usage of a tree, as ``du`` counts it (allocated blocks, hard links once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total + os.lstat(path).st_blocks * 512


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(cmd: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, float]:
    t0 = time.perf_counter()
    try:
        p = subprocess.run(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
        rc, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.output.decode(errors="replace") if isinstance(e.output, bytes) else e.output
        rc, out = -1, (out or "") + f"\n(timed out after {timeout:g} s)"
    return rc, out, time.perf_counter() - t0


def installed(py: Path, env: dict[str, str]) -> dict[str, str]:
    """The venv's packages, name (lower case) to version, from ``pip list --format json``."""
    p = subprocess.run(
        [str(py), "-m", "pip", "list", "--format", "json", *PIP_FIXED[1:]],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if p.returncode != 0:
        raise RuntimeError(f"pip list failed: {(p.stdout + p.stderr).strip()[-500:]}")
    return {x["name"].lower(): x["version"] for x in json.loads(p.stdout)}


#: Imports every top-level module of the venv's distributions but pip's own tools, once, as
#: kfp's launcher runs a step (_KFP_RUNTIME): an upper bound of what the step imports, and the
#: cost of compiling to bytecode at import what pip did not compile at install (PIP_COMPILE=0).
_IMPORT_ALL = r"""
import importlib, importlib.metadata as md, os, sys, time
os.environ["_KFP_RUNTIME"] = "true"
os.environ.setdefault("MPLBACKEND", "Agg")
tools = {"pip", "setuptools", "wheel", "pkg_resources", "_distutils_hack"}
names = set()
for d in md.distributions():
    top = d.read_text("top_level.txt")
    if top:
        names.update(top.split())
    else:
        names.update(f.parts[0].removesuffix(".py") for f in d.files or ()
                      if len(f.parts) and (f.suffix == ".py" or len(f.parts) > 1)
                      and not f.parts[0].endswith((".dist-info", ".data", "__pycache__")))
t = time.perf_counter()
for name in sorted(n for n in names if n.isidentifier() and n not in tools):
    try:
        importlib.import_module(name)
    except Exception:
        pass
print(time.perf_counter() - t)
"""


def first_import(py: Path, env: dict[str, str], timeout: float) -> float | None:
    """Seconds for the venv's first import of everything it installed (``_IMPORT_ALL``), in a
    process that may write bytecode, as a pod's Python does; None when it could not run."""
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    rc, out, _ = run([str(py), "-c", _IMPORT_ALL], env, timeout)
    try:
        return round(float(out.strip().splitlines()[-1]), 3) if rc == 0 else None
    except (ValueError, IndexError):
        return None


def measure_step(step: Step, work: Path, a: argparse.Namespace) -> dict:
    """One step in a fresh venv: each install timed, the packages and the disk growth after."""
    res: dict = {"installs": [], "seconds": 0.0, "packages": 0, "mb": 0.0, "ok": True}
    if not step.installs:
        return res
    venv = Path(tempfile.mkdtemp(prefix=f"{step.name}-", dir=work))
    try:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "venv", "--clear", str(venv)],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        py = venv / "bin" / "python"
        base_env = pip_env({})
        if a.pip:
            rc, out, _ = run([str(py), "-m", "pip", "install", *PIP_FIXED, a.pip], base_env, 600)
            if rc != 0:
                raise RuntimeError(f"installing {a.pip} in the venv failed:\n{out[-2000:]}")
        res["venv_create_s"] = round(time.perf_counter() - t0, 3)  # not counted: a pod has it
        fresh = installed(py, base_env)
        res["pip_version"] = fresh.get("pip")
        fresh_bytes = du_bytes(venv)
        for n, inst in enumerate(step.installs, 1):
            links = [w for d in a.find_links for w in ("--find-links", str(d))]
            args = inst.expanded({WHEEL_DIR_ENV: str(a.wheel_dir)} if a.wheel_dir else {})
            cmd = [str(py), "-m", "pip", "install", *PIP_FIXED, *args, *links]
            shown = shlex.join(["python", "-m", "pip", "install", *PIP_FIXED, *args, *links])
            log(f"    install {n}/{len(step.installs)}: {shlex.join(inst.requirements)}")
            rc, out, secs = run(cmd, pip_env(inst.env), a.timeout)
            rec = {
                "command": shown,
                "script_env": inst.env,
                "dropped": inst.dropped,
                "seconds": round(secs, 3),
                "ok": rc == 0,
            }
            res["installs"].append(rec)
            res["seconds"] += secs
            log(f"      {secs:.1f} s{'' if rc == 0 else f'  FAILED (exit {rc})'}")
            if rc != 0:
                rec["exit_code"] = rc
                rec["output_tail"] = out.strip().splitlines()[-TAIL_LINES:]
                log("      " + "\n      ".join(rec["output_tail"][-5:]))
                res["ok"] = False
                break  # the script chains its installs with &&: the pod stops here too
        if res["ok"]:
            res["import_s"] = first_import(py, pip_env({}), a.timeout)
        after = installed(py, base_env)
        new = {k: v for k, v in after.items() if k not in fresh}
        res["packages"] = len(new)
        res["installed"] = [f"{k}=={v}" for k, v in sorted(new.items())]
        res["mb"] = round((du_bytes(venv) - fresh_bytes) / 1e6, 1)
        res["seconds"] = round(res["seconds"], 3)
    finally:
        shutil.rmtree(venv, ignore_errors=True)
    return res


def pinned_wheel(steps: list[Step]) -> artifact.Artifact | None:
    """kfp-bench's wheel built from this checkout, when ``steps`` install kfp-bench by its pin
    (None when none does); ``ValueError`` naming both when the pin is another build's."""
    pins = {m for s in steps for i in s.installs for w in i.args for m in PIN.findall(w)}
    if not pins:
        return None
    own = artifact.build()
    if pins != {own.sha256}:
        raise ValueError(
            f"pins kfp-bench's wheel to sha256 {', '.join(sorted(pins))}; this checkout builds "
            f"{own.sha256}: compile it again (kfp-bench compile --out compiled), or give "
            "--wheel-dir with the pinned wheel"
        )
    return own


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "pipeline",
        nargs="?",
        default=str(DEFAULT_YAML),
        help="compiled pipeline YAML (default: compiled/kfp_bench.yaml)",
    )
    ap.add_argument(
        "--find-links",
        action="append",
        default=[],
        metavar="DIR",
        help="a folder of wheels pip may install from besides PyPI, e.g. kfp-bench's own wheel "
        "(repeatable); pip gets no other find-links, index or constraint of this machine",
    )
    ap.add_argument(
        "--wheel-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="a folder holding the kfp-bench wheel the pipeline pins, as the ConfigMap's volume "
        "does in a pod; default: the wheel built from this checkout, checked against the pin",
    )
    ap.add_argument(
        "--steps",
        default="",
        help="comma-separated steps to measure (executor names, with or without 'exec-'); "
        "default: all",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="measure every step N times (a fresh venv each time); the table gives the medians",
    )
    ap.add_argument(
        "--load-workers",
        type=int,
        default=None,
        metavar="N",
        help="ParallelFor iterations in the run's total (default: the pipeline's load_workers)",
    )
    ap.add_argument(
        "--json-out",
        default=str(DEFAULT_JSON),
        metavar="FILE",
        help="where the figures go as JSON (default: bench/startup.json)",
    )
    ap.add_argument(
        "--results",
        type=Path,
        default=result_files.RESULTS,
        help="where the results file for BENCHMARKS.md goes (bench/render.py)",
    )
    ap.add_argument(
        "--timeout", type=float, default=1800.0, help="seconds one install may take (1800)"
    )
    ap.add_argument(
        "--pip",
        default="",
        metavar="SPEC",
        help="install this pip (e.g. 'pip==24.0', to match a pod image's) in each fresh venv "
        "first, untimed; default: the venv's own pip",
    )
    ap.add_argument(
        "--workdir",
        default=None,
        metavar="DIR",
        help="where the venvs are made (default: the system's temporary folder)",
    )
    ap.add_argument(
        "--dry-run",
        action="store_true",
        help="print the parsed installs and tasks per step, install nothing",
    )
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be >= 1")
    if a.load_workers is not None and a.load_workers < 0:
        ap.error("--load-workers must be >= 0")
    for d in a.find_links:
        if not Path(d).is_dir():
            ap.error(f"--find-links {d}: not a folder")
    a.find_links = [Path(d).resolve() for d in a.find_links]
    if a.wheel_dir is not None and not a.wheel_dir.is_dir():
        ap.error(f"--wheel-dir {a.wheel_dir}: not a folder")
    out_dir = Path(a.json_out).resolve().parent
    if not out_dir.is_dir() or not os.access(out_dir, os.W_OK | os.X_OK):
        ap.error(f"--json-out {a.json_out}: folder {out_dir} is missing or not writable")
    return a


def _sigterm(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    path = Path(a.pipeline)
    try:
        text = path.read_text()
        steps, info = read_pipeline(text, a.load_workers)
    except (OSError, ValueError, yaml.YAMLError) as e:
        log(f"{path}: {e}")
        return 2
    if a.steps:
        wanted = {w.strip().removeprefix("exec-") for w in a.steps.split(",") if w.strip()}
        unknown = wanted - {s.name for s in steps}
        if unknown:
            log(
                f"unknown steps: {', '.join(sorted(unknown))}; known: "
                f"{', '.join(s.name for s in steps)}"
            )
            return 2
        steps = [s for s in steps if s.name in wanted]

    log(
        f"pipeline {path} ({info['pipeline']}, kfp {info['sdk_version']}): {len(steps)} steps, "
        f"load_workers={info['load_workers']} (default {info['load_workers_default']})"
    )
    for s in steps:
        log(
            f"  {s.name}: {s.tasks} task(s) per run{' in a ParallelFor' if s.in_loop else ''}, "
            f"image {s.image}"
        )
        for inst in s.installs:
            env = " ".join(f"{k}={v}" for k, v in inst.env.items())
            log(f"    pip install {shlex.join(inst.args)}" + (f"   [{env}]" if env else ""))
        if not s.installs:
            log("    (no pip install)")
    if a.dry_run:
        return 0

    try:
        own = pinned_wheel(steps) if a.wheel_dir is None else None
    except ValueError as e:
        log(f"{path} {e}")
        return 2
    signal.signal(signal.SIGTERM, _sigterm)
    work = Path(tempfile.mkdtemp(prefix="kfp-bench-startup-", dir=a.workdir))
    if own is not None:
        a.wheel_dir = own.write(work / "wheel").parent  # the ConfigMap's folder in a pod
    started = dt.datetime.now(dt.UTC)
    begun, commit = result_files.now(), result_files.commit()
    rounds: list[dict[str, dict]] = []
    interrupted = False
    try:
        for r in range(a.repeat):
            results: dict[str, dict] = {}
            rounds.append(results)
            for i, s in enumerate(steps, 1):
                log(f"[round {r + 1}/{a.repeat}] [{i}/{len(steps)}] {s.name}")
                try:
                    results[s.name] = res = measure_step(s, work, a)
                except (RuntimeError, OSError, ValueError, subprocess.SubprocessError) as e:
                    results[s.name] = res = {
                        "installs": [],
                        "seconds": 0.0,
                        "packages": 0,
                        "mb": 0.0,
                        "ok": False,
                        "error": str(e),
                    }
                log(
                    f"  {s.name}: {res['seconds']:.1f} s, {res['packages']} packages, "
                    f"{res['mb']:.1f} MB{'' if res['ok'] else '  FAILED'}"
                )
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: reporting what was measured")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    done = [r for r in rounds if r]
    rows = summarise(steps, done)
    table = markdown(rows, info)
    total = round(sum(r["seconds_per_run"] for r in rows), 2)
    failed = failed_installs(done)
    doc = {
        "command": shlex.join(
            [
                os.path.relpath(sys.executable, ROOT)
                if sys.executable.startswith(str(ROOT))
                else sys.executable,
                *sys.argv,
            ]
        ),
        "started_utc": started.isoformat(timespec="seconds"),
        "finished_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "machine": host(),
        "pipeline_file": str(path),
        "pipeline_sha256": hashlib.sha256(text.encode()).hexdigest(),
        **info,
        "repeat": a.repeat,
        "rounds_done": len(done),
        "interrupted": interrupted,
        "pip_flags": PIP_FIXED,
        "pip_env": "PIP_CONFIG_FILE=/dev/null; no other PIP_* variable but the script's own",
        "find_links": [str(d) for d in a.find_links],
        "not_counted": "creating the venv (a pod's image already has Python); "
        "pip list and du after each step",
        "steps": rows,
        "rounds": done,
        "default_run_seconds": total,
        "default_run_first_import_seconds": round(
            sum((r["import_s"] or 0.0) * r["tasks_per_run"] for r in rows), 2
        ),
        "failed": failed,
        "table_markdown": table,
    }
    Path(a.json_out).write_text(json.dumps(doc, indent=1))
    print(table)
    print()
    print(
        f"Default run (load_workers={info['load_workers']}): {total:.1f} s of pip install "
        f"summed over its tasks, and {doc['default_run_first_import_seconds']:.1f} s of first "
        "imports after (an upper bound: every module the steps installed); venv creation not "
        "counted (a pod's image has Python)."
    )
    log(f"wrote {a.json_out}")
    if not interrupted:
        log(f"wrote {result_files.save(result(doc, path, a.steps, begun, commit), a.results)}")
    if failed:
        log("FAILED installs:\n  " + "\n  ".join(failed))
    if interrupted:
        return 130
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
