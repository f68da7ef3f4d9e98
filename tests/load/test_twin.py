"""The load engine's compiled twin (``kfp_bench.load._cengine``, built by setup.py with Cython from
engine.py and engine.pxd): used only when built from the current engine.py, switched off by
``KFP_BENCH_ENGINE=python``, and the plain engine still passes the engine's tests."""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kfp_bench.load import engine, twin

ROOT = Path(__file__).resolve().parents[2]
TWIN = importlib.util.find_spec("kfp_bench.load._cengine")
needs_twin = pytest.mark.skipif(
    TWIN is None, reason="no compiled twin: setup.py found no C compiler or Cython"
)


@needs_twin
def test_the_twin_is_built_from_this_engine_and_runs():
    from kfp_bench.load import _cengine

    digest = hashlib.sha256(Path(engine.__file__).read_bytes()).hexdigest()
    assert _cengine.SOURCE_SHA256 == digest, (
        "the compiled engine is stale: rebuild it with `pip install --no-deps -e .` (make setup)"
    )
    if os.environ.get("KFP_BENCH_ENGINE") != "python":
        assert engine.ENGINE == "compiled"
        assert engine.Attack is _cengine.Attack and engine._Conn is _cengine._Conn


@needs_twin
def test_a_stale_twin_or_the_switch_means_the_plain_engine(monkeypatch):
    from kfp_bench.load import _cengine

    monkeypatch.setattr(_cengine, "SOURCE_SHA256", "0" * 64)
    assert twin.compiled_twin(engine.__file__) is None
    monkeypatch.undo()
    monkeypatch.setenv("KFP_BENCH_ENGINE", "python")
    assert twin.compiled_twin(engine.__file__) is None


def _load(server_url: str, tmp_path: Path, env_engine: str | None, name: str) -> dict:
    env = dict(os.environ)
    env.pop("KFP_BENCH_ENGINE", None)
    if env_engine:
        env["KFP_BENCH_ENGINE"] = env_engine
    out = tmp_path / f"{name}.json"
    cmd = [sys.executable, "-m", "kfp_bench.cli", "load", "-n", "300", "-c", "6"]
    subprocess.run(
        [*cmd, "--json-out", str(out), f"{server_url}/x?bytes=321&status=503"],
        check=True,
        capture_output=True,
        env=env,
        timeout=120,
    )
    return json.loads(out.read_text())


def test_both_engines_give_the_same_counts_and_say_which_ran(fault_server, tmp_path):
    plain = _load(fault_server.url, tmp_path, "python", "plain")
    default = _load(fault_server.url, tmp_path, None, "default")
    assert plain["options"]["engine"] == "python"
    assert default["options"]["engine"] == ("compiled" if TWIN else "python")
    for doc in (plain, default):
        assert doc["requests"] == 300
        assert doc["status_codes"] == {"503": 300}
        assert doc["bytes_in"] == 300 * 321
        assert doc["success_ratio"] == 0.0


@pytest.mark.slow
@needs_twin
def test_the_plain_engine_passes_the_engine_tests():
    """The compiled twin runs everywhere in this suite; this runs the engine's own tests again
    with the plain Python classes, so that neither can drift from the other."""
    env = dict(os.environ, KFP_BENCH_ENGINE="python")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/load/test_engine.py",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout.splitlines()[-1]
