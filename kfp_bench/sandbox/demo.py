"""``kfp-bench demo``: the embedded default, the kfp_bench pipeline run end to end on one machine.

It starts, on loopback, the sandbox KServe model server (iris), the local streaming LLM server
(``kfp-bench llm-server``) and the local KFP API server, then runs compiled/kfp_bench.yaml, the
file a cluster receives, with kfp.local, each step in a fresh Python environment that installs
only what the step's command says, as a pod does (``kfp_bench.sandbox.pods``; kfp-bench's own
wheel is built from this checkout): the runs benchmark spawns noop child runs on the local KFP
server while a short rate sweep (``SWEEP_RATES``), then the load workers, load the model server,
and the LLM load (run_llm) streams from the LLM server. It shows each step as it finishes,
prints the summary, and writes the report bundle and the results into the output directory, the
LLM load's into ``llm/``. Everything it starts is stopped on the way out, Ctrl-C included.
kfp.local's own, verbose, output goes to DIR/pipeline.log.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml
from kfp import components

from kfp_bench import artifact
from kfp_bench.errors import ConfigError
from kfp_bench.kfp.manifest import YAML_LOADER
from kfp_bench.report import hey, llm_text, sweep
from kfp_bench.report import runs as runs_report
from kfp_bench.results import read_results
from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.sandbox.model_server import start_model_server
from kfp_bench.sandbox.pods import as_pods, install_scripts, installed, step_envs, wheelhouse
from kfp_bench.stats import store
from kfp_bench.steps.bundled import compiled_file

SERVICE_HOSTNAME = "iris.kfp-bench.example.com"
#: The demo's rate sweep against the model server: short steps, well below its saturation.
SWEEP_RATES = "5,20,50"
SWEEP_STEP_S = 2.0
#: What the demo copies out of kfp.local's pipeline root: (task, output) -> files.
_OUTPUTS = (("aggregate", "results"), ("report", "records"))
_BUNDLE = ("report.html", "summary.md", "metrics.json")
_RECORDS = ("summary.json", "load.json", "runs.jsonl", "api_calls.jsonl")
#: Where the LLM load's results and report go, inside the output directory: report_llm's.
LLM_DIR = "llm"
#: The demo's LLM load: the LLM server's defaults (first token at 200 ms, then a token every
#: 20 ms, 64 tokens), so each stream takes about 1.5 s.
LLM_ARGS = dict(llm_duration_sec=5.0, llm_concurrency=8, llm_workers=1, llm_slo="ttft=500ms")
#: The folder of wheels the demo's steps install from, in the running environment.
WHEELS = "kfp-bench-pod-wheels"
#: The steps' wheel volume (the ConfigMap kfp-bench install writes), in the running environment.
VOLUME = "kfp-bench-wheel-volume"
_TASK_DONE = re.compile(r"Task \S*?'(\S+?)'\S* finished with status \S*?(SUCCESS|FAILURE)")


def _say(msg: str, stream=None) -> None:
    print(f"[demo] {msg}", file=stream or sys.stderr, flush=True)


def run_demo(
    out: Path,
    duration_s: float = 5.0,
    num_runs: int = 5,
    load_workers: int = 2,
    concurrency: int = 4,
) -> int:
    """Run the demo; return the process exit code (130 when interrupted)."""

    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    _check_pin()
    wheels = Path(sys.prefix) / WHEELS
    _say(f"building kfp-bench's wheel and gathering the steps' packages into {wheels}")
    # what kfp-bench install would put into the namespace, at a path that stays: the steps'
    # environments are kept by install command, and the command names the wheel by its path
    mounted = Path(sys.prefix) / VOLUME
    shutil.rmtree(mounted, ignore_errors=True)
    installed(mounted)
    # the wheels (pip, in processes of its own), then the steps' environments, made while the
    # servers start and the first steps run (a task whose environment is being built waits)
    pool = ThreadPoolExecutor(1, thread_name_prefix="demo-wheels")
    ready = pool.submit(_prepare, wheels, mounted)
    pool.shutdown(wait=False)
    root = Path(tempfile.mkdtemp(prefix="kfp-bench-demo-"))
    try:
        _say("starting the KServe model server (iris), the LLM server and the local KFP API on "
             "127.0.0.1")  # fmt: skip
        with (
            start_model_server() as model,
            start_kfp_server() as kfp_api,
            start_llm_server() as llm,
        ):
            _say(f"ready in {time.monotonic() - started:.0f}s: KFP API {kfp_api.url}, "
                 f"model {model.v1_predict_url}, LLM {llm.url}/openai")  # fmt: skip
            args = dict(
                kfp_host=kfp_api.url,
                num_runs=num_runs,
                poll_interval_sec=0.5,
                run_timeout_sec=120.0,
                inference_url=model.v1_predict_url,
                host_header=SERVICE_HOSTNAME,
                duration_sec=duration_s,
                concurrency=concurrency,
                load_workers=load_workers,
                sweep_rates=SWEEP_RATES,
                sweep_step_sec=SWEEP_STEP_S,
                run_llm=True,
                llm_url=llm.url + "/openai",
                **LLM_ARGS,
            )
            what = (
                f"{num_runs} noop runs, a rate sweep ({SWEEP_RATES} req/s, {SWEEP_STEP_S:g}s "
                f"each), {load_workers} load workers x {duration_s:g}s, "
                f"{LLM_ARGS['llm_concurrency']} LLM streams x {LLM_ARGS['llm_duration_sec']:g}s"
            )
            envs = ready.result()  # pip's failure is raised here, before any step runs
            _say(f"running the kfp_bench pipeline with kfp.local: {what} ({out}/pipeline.log)")
            ok = _run_pipeline(args, root, out / "pipeline.log", wheels, mounted, envs)
        _collect(root, out)
    except KeyboardInterrupt:
        _say("interrupted: the servers are stopped; what finished is in " + str(out))
        return 130
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if not ok:
        _say(f"the pipeline failed: see {out}/pipeline.log")
        return 1
    _print_summary(out)
    _say(f"done in {time.monotonic() - started:.0f}s: {', '.join(_BUNDLE)}, the records, "
         f"{LLM_DIR}/ (the LLM load's report and llm.json) and "
         f"summary.json are in {out}/")  # fmt: skip
    return 0


def _prepare(wheels: Path, mounted: Path):
    """Fill the steps' wheel folder, then start building their environments: the StepEnvs."""

    wheelhouse(wheels)
    envs = step_envs(wheels, mounted)
    envs.prepare(_install_scripts())
    return envs


def _check_pin() -> None:
    """Refuse, before anything starts, a compiled/kfp_bench.yaml pinned to another wheel than
    this checkout builds: every step would fail its install."""

    own = artifact.build().sha256
    if artifact.pins(compiled_file("kfp_bench")) != {own}:
        raise ConfigError(
            f"{compiled_file('kfp_bench')} is pinned to another kfp-bench wheel than this "
            f"checkout builds (sha256 {own}): the sources changed since it was compiled; run "
            "kfp-bench compile --out compiled"
        )


def _install_scripts() -> list[str]:
    """The install scripts of compiled/kfp_bench.yaml's steps that run whatever the arguments."""

    with open(compiled_file("kfp_bench")) as f:
        return install_scripts(next(yaml.load_all(f, Loader=YAML_LOADER)))


def _run_pipeline(
    args: dict, root: Path, log: Path, wheels: Path, mounted: Path, envs=None
) -> bool:
    """Run compiled/kfp_bench.yaml with kfp.local, a fresh environment per step (a copy from
    ``envs``) installing from ``wheels`` and kfp-bench from ``mounted``; its output to ``log``,
    a line per finished step."""

    log = log.resolve()  # the tail opens it after the working directory has changed
    kfp_bench = components.load_component_from_file(str(compiled_file("kfp_bench")))
    stderr = os.fdopen(os.dup(2), "w", buffering=1)
    stop = threading.Event()
    with open(log, "w") as f, _redirected(f.fileno()), as_pods(wheels, root, mounted, envs):
        tail = threading.Thread(target=_follow, args=(log, stderr, stop), daemon=True)
        tail.start()
        try:
            kfp_bench(**args)
            return True
        except RuntimeError as exc:  # kfp.local: a task failed
            print(f"pipeline failed: {exc}", flush=True)
            return False
        finally:
            sys.stdout.flush()  # kfp.local's last lines, for the tail to see before it stops
            sys.stderr.flush()
            stop.set()
            tail.join(timeout=2)
            stderr.close()


@contextlib.contextmanager
def _redirected(fd: int):
    """Send this process's stdout and stderr (and its children's) to ``fd``."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _follow(log: Path, stream, stop: threading.Event) -> None:
    t0 = time.monotonic()
    with open(log, errors="replace") as f:
        while True:
            line = f.readline()
            if not line:
                if stop.is_set():
                    return
                time.sleep(0.2)
                continue
            m = _TASK_DONE.search(re.sub(r"\x1b\[[0-9;]*m", "", line))
            if m:
                _say(f"{time.monotonic() - t0:5.0f}s  step {m.group(1)}: {m.group(2)}", stream)


def _collect(root: Path, out: Path) -> None:
    """Copy the results and the report bundles from kfp.local's pipeline root into ``out`` (the
    LLM load's into ``out/llm``)."""
    for task, output, into in (
        *((t, o, out) for t, o in _OUTPUTS),
        ("report-llm", "results", out / LLM_DIR),
    ):
        for src in sorted(root.glob(f"*/{task}/{output}")):
            into.mkdir(exist_ok=True)
            for item in src.iterdir():
                if item.is_file():
                    shutil.copyfile(item, into / item.name)


def _print_summary(out: Path) -> None:

    res = read_results(out)
    print("\n=== KFP runs (noop child pipeline on the local KFP API)")
    runs_report.write_text(res.summary, sys.stdout)
    if res.summary.get("sweep"):
        print("\n=== rate sweep (KServe iris model, V1 predict, open loop)")
        sweep.write_text(res.summary["sweep"], res.summary.get("sweep_knee"), sys.stdout)
    if res.load is not None:
        print("\n=== inference load (KServe iris model, V1 predict)")
        hey.write_text(res.load, sys.stdout)
    llm = out / LLM_DIR / "llm.json"
    if llm.exists():
        print(f"\n=== LLM load (the local streaming server, /openai; report in {out / LLM_DIR})")
        llm_text.write_text(store.load(llm), sys.stdout)
