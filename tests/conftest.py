"""Shared fixtures: an environment without the developer's kfp-bench, KFP or proxy settings."""

from __future__ import annotations

import builtins
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from kfp_bench.sandbox.fault_server import start_fault_server
from kfp_bench.sandbox.model_server import start_model_server

_ISOLATED_PREFIXES = ("KFP_BENCH_", "KF_PIPELINES_", "KFP_")


def pytest_addoption(parser):
    parser.addoption(
        "--kfp-api-port",
        type=int,
        default=0,
        help="run tests/kfp_api against a KFP API server already listening on this loopback "
        "port (a real one: docs/real-kfp.md) instead of the local server",
    )


_SUITE_TMP = pytest.StashKey[str]()


def pytest_configure(config):
    """Every process the suite starts keeps its temporary files in one folder of the session's,
    removed at its end (KFP's component command's `mktemp -d`, kfp.local's workspaces, SeaweedFS's
    logs and sockets): the machine's temporary folder is left as it was found. pytest's own
    folders stay where pytest keeps them. xdist's workers inherit the controller's folder."""
    if os.environ.get("KFPB_SUITE_TMP"):
        return
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix="kfpb-suite-")
    os.chmod(folder, 0o1777)  # as /tmp is: the tests that run a command as another user
    os.environ["KFPB_SUITE_TMP"] = os.environ["TMPDIR"] = folder
    tempfile.tempdir = None  # gettempdir reads TMPDIR again
    config.stash[_SUITE_TMP] = folder


def pytest_unconfigure(config):
    folder = config.stash.get(_SUITE_TMP, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


#: The longest test files, in seconds of one worker (setup, call and teardown summed per file from
#: ``scripts/test.sh -n 4 --dist loadfile --durations=0``, 2026-12-06, 2 cores). xdist's loadfile
#: hands whole files to the workers in the order collected, and scripts/test.sh turns off its
#: reordering by number of tests, which handed out these few-test files last: the longest ran
#: alone for minutes at the end while the other workers sat idle. They go first, longest first,
#: and the short files fill in behind; a file not named keeps its place after them. The files
#: made shorter on 2026-12-07 (stats.hdr's mean and percentiles, shared servers, fixtures and
#: templates) have the 2026-12-06 seconds scaled by their wall clock alone after/before (nice 19,
#: side by side), until the next --durations=0 run; those that fell under 50 s left the list
#: (test_llm_find, test_llm_sweep, test_real_streams, test_llm_report, test_artifact).
LONGEST_FILES = {
    "tests/pipelines/test_pods.py": 346,
    "tests/pipelines/test_image_mode.py": 280,
    "tests/pipelines/test_step_envs.py": 163,
    "tests/pipelines/test_pod_loss.py": 142,
    "tests/sandbox/kfp_server/test_real_pipelines.py": 111,
    "tests/pipelines/test_pinned_install.py": 108,
    "tests/pipelines/test_schedule_pair.py": 100,
    "tests/test_cli.py": 88,
    "tests/kfp/test_fault_matrix.py": 74,
    "tests/pipelines/test_cleanup_each_step.py": 74,
    "tests/pipelines/test_meta_local.py": 70,
    "tests/metrics/test_llm_prometheus.py": 68,
    "tests/history/test_report_step.py": 66,
    "tests/history/test_report_files.py": 63,
    "tests/test_outputs.py": 51,
}


def pytest_collection_modifyitems(items):
    """The files of ``LONGEST_FILES`` first, longest first (a stable sort: each file's tests stay
    together and in their order)."""
    items.sort(key=lambda item: -LONGEST_FILES.get(item.nodeid.split("::", 1)[0], 0))


_ISOLATED = {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"}


def isolate_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Remove the proxy and kfp-bench/KFP variables of the machine through ``monkeypatch``: what
    ``clean_env`` does for each test, for a fixture of a wider scope, which runs before it."""
    for name in list(os.environ):
        if name in _ISOLATED or name.startswith(_ISOLATED_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    """Tests see no proxy or kfp-bench/KFP variables from the machine they run on."""
    isolate_env(monkeypatch)


_PRINT = builtins.print


@pytest.fixture(autouse=True)
def print_restored():
    """``print`` as Python has it after each test. kfp.local indents its tasks' output by
    swapping ``builtins.print`` for the task's run (kfp 2.17.3 ``kfp/local/logging_utils.py``,
    ``indented_print``); its orchestrator runs tasks in threads
    (``orchestrator/enhanced_dag_orchestrator.py``:266), and two that overlap restore each
    other's swap, leaving print indented for the rest of the process: a later test in the same
    worker then read ``    Gates: all held`` from the CLI."""
    yield
    builtins.print = _PRINT


#: The keys every load result document has at its top level (issue: the results file format).
LOAD_RESULT_KEYS = (
    "requests",
    "duration_s",
    "rps",
    "success_ratio",
    "latency_ms",
    "status_codes",
    "errors",
    "corrected",
)
LATENCY_KEYS = {"p50", "p90", "p95", "p99", "max", "mean"}


#: SIGINT's disposition a command starts with: as from a terminal, or ignored, as a background
#: command of a non-interactive shell inherits it (``bash -c 'kfp-bench ... &'``, POSIX).
SIGINT_AT_START = {"default": "SIG_DFL", "ignored": "SIG_IGN"}
#: Set SIGINT's disposition, then exec the command: an ignored signal stays ignored across exec,
#: so the command starts as it would from that shell, whatever the suite itself inherited.
_EXEC_WITH_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, getattr(signal, sys.argv[1])); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[2:]])"
)


def start_python(*args: str, sigint: str = "default") -> subprocess.Popen:
    """Start ``python ARGS`` in a real process, its output piped, with SIGINT as
    ``SIGINT_AT_START[sigint]`` at its start."""
    return subprocess.Popen(
        [sys.executable, "-c", _EXEC_WITH_SIGINT, SIGINT_AT_START[sigint], *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_cli(*args: str, sigint: str = "default") -> subprocess.Popen:
    """Start ``kfp-bench ARGS`` as ``start_python`` does."""
    return start_python("-m", "kfp_bench.cli", *args, sigint=sigint)


def interrupt_when(proc: subprocess.Popen, ready, what: str, wait_s: float = 120, timeout=120):
    """Send ``proc`` one SIGINT (a first Ctrl-C) as soon as ``ready()`` holds (polled every 0.1 s,
    at most ``wait_s``; ``what`` names what was awaited), and return its (stdout, stderr). A
    process that ended before the signal went fails here, not as a wrong exit code later."""
    try:
        deadline = time.monotonic() + wait_s
        while not ready():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"no {what}"
            time.sleep(0.1)
        assert proc.poll() is None, ("it ended before the SIGINT", *proc.communicate())
        proc.send_signal(signal.SIGINT)
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()


def run_cli(*args: str, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    """Run ``kfp-bench ARGS`` in a real process and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "kfp_bench.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


@pytest.fixture(scope="session")
def fault_server():
    """A fault server with no server-wide modes; tests steer it with query parameters."""
    with start_fault_server() as server:
        yield server


@pytest.fixture(scope="session")
def model_server():
    """The sandbox KServe model server (a real kserve.ModelServer serving iris)."""
    with start_model_server() as server:
        yield server


def fail_replace_after(monkeypatch, calls: int) -> None:
    """``os.replace`` works ``calls`` times, then fails as a full disk or a crash would."""
    real, seen = os.replace, [0]

    def replace(src, dst, **kw):
        seen[0] += 1
        if seen[0] > calls:
            raise OSError(28, "No space left on device (a test)")
        return real(src, dst, **kw)

    monkeypatch.setattr(os, "replace", replace)


@pytest.fixture
def fake_cluster(tmp_path, monkeypatch):
    """The stand-in Kubernetes API (tests/kserve/fake_kube.py), as the default kubeconfig's
    cluster: what a step's ``Kube(namespace)`` reaches."""
    from tests.kserve.fake_kube import FakeKube, default_kubeconfig

    server = FakeKube()
    default_kubeconfig(server, tmp_path, monkeypatch)
    yield server
    server.close()


def copy_of_checkout(dest):
    """A copy of this checkout's tracked files in ``dest`` (new times, default modes)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    names = subprocess.run(
        ["git", "ls-files"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    for name in names:
        if (root / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            (dest / name).write_bytes((root / name).read_bytes())
    return dest
