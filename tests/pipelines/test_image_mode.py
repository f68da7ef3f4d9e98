"""Image mode: every step of ``kfp-bench compile --image`` runs in the image, installing nothing.

No Docker engine runs here, so the image's environment is built as the Dockerfile builds it: its
one install command, ``scripts/image-install.sh``, run into a fresh virtual environment (no
system site-packages) from kfp-bench's wheel and requirements.txt. The compiled YAML then runs
with kfp.local inside that environment (``SubprocessRunner(use_venv=False)``: each step runs the
environment's own interpreter, as a pod runs the image's ``python3``), with no package index
reachable (``PIP_NO_INDEX=1``), so a step that tried to install anything would fail.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from kfp_bench.sandbox.kfp_server import start_kfp_server
from kfp_bench.sandbox.llm_server import start_llm_server
from kfp_bench.sandbox.pods import build_wheel
from kfp_bench.steps.compile import compile_all, delivery_for
from tests.components.conftest import leftovers
from tests.pipelines.test_pods import STEPS, e2e_args, llm_args

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
IMAGE = "registry.example.com/kfp-bench@sha256:" + "1" * 64
_RUN = """
import json, sys
from kfp import components, local
local.init(runner=local.SubprocessRunner(use_venv=False), pipeline_root=sys.argv[3])
components.load_component_from_file(sys.argv[1])(**json.loads(sys.argv[2]))
"""


def test_the_dockerfile_installs_with_the_script_the_test_runs():
    runs = re.findall(r"^RUN (.+)$", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert runs == ["sh /tmp/kfp-bench/image-install.sh /tmp/kfp-bench && rm -rf /tmp/kfp-bench"]


@pytest.fixture(scope="module")
def image_env(tmp_path_factory) -> Path:
    """A fresh environment with what the image has, built by the image's install script."""
    base = tmp_path_factory.mktemp("image")
    context = base / "context"
    context.mkdir()
    shutil.copy2(ROOT / "requirements.txt", context)
    build_wheel(context, ROOT)
    env = base / "env"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    # python:3.11-slim brings a pip of its own, not this interpreter's bundled one (ensurepip's,
    # whose resolver and pip check parse every requirement with pyparsing): a current one, put
    # there by this environment's pip in one install (ensurepip's, then an upgrade, was two)
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "pip"], check=True
    )
    # Without compiling every installed module to bytecode, as a build would: the steps import a
    # small part of them and Python compiles those as they are imported. PIP_COMPILE=0 is pip's
    # --no-compile, as package mode's steps set it (kfp_bench/components/_step.py, Delivery.env).
    # 45 s of CPU with the compiling, 21 s without, on 2026-12-07.
    install_env = {**os.environ, "PIP_COMPILE": "0"}
    done = subprocess.run(
        ["sh", str(ROOT / "scripts" / "image-install.sh"), str(context), str(python)],
        capture_output=True, text=True, timeout=1200, env=install_env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert not list(env.glob("lib/python*/site-packages/numpy/__pycache__"))  # none compiled
    return env


def _freeze(python: Path) -> str:
    return subprocess.run(
        [str(python), "-m", "pip", "freeze"], capture_output=True, text=True, check=True
    ).stdout


def test_every_step_runs_in_the_image_with_no_index(image_env, tmp_path, model_server):
    yaml_file = compile_all(tmp_path, delivery=delivery_for(image=IMAGE), names=["kfp_bench"])
    python = image_env / "bin" / "python"
    before = _freeze(python)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull)
    with (
        start_kfp_server(simulate="all:fixed(0.2)", max_parallel_runs=8) as kfp_api,
        start_llm_server(first_token_ms=20, token_gap_ms=5, max_tokens=16) as llm,
    ):
        args = e2e_args(kfp_api.url, model_server.v1_predict_url, "image-e2e")
        args.update(llm_args(llm.url + "/openai"))  # the LLM load's steps run in it too
        done = subprocess.run(
            [str(python), "-c", _RUN, str(yaml_file["kfp_bench"]), json.dumps(args),
             str(tmp_path / "root")],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        left = leftovers(kfp_api.url, "image-e2e")
    text = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    assert done.returncode == 0, text[-4000:]
    finished = re.findall(r"Task '(\S+)' finished with status (\w+)", text)
    # kfp.local logs the end of a ParallelFor's tasks once or once per task: count the starts
    assert {name for name, _ in finished} == STEPS and {s for _, s in finished} == {"SUCCESS"}
    assert text.count("Executing task 'inference-load'") == 2  # one task per load worker
    assert "pip install" not in text
    assert _freeze(python) == before  # nothing was installed at any step's start
    assert left == 0
