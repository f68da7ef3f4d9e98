"""The three real LLM servers of ``llm_real_servers.py``: how each one's virtualenv is built
(outside the repository, under ``--root``), how it is started on a free port, and where its
OpenAI routes live. Nothing here is installed by ``make setup`` or the tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

#: kserve/kserve's git directory (a clone's .git or a bare mirror), from KFP_BENCH_KSERVE_GIT;
#: without it, setup clones the repository from GitHub.
KSERVE_GIT_URL = "https://github.com/kserve/kserve"
LLAMA_CPP = "llama-cpp-python==0.3.36"
TRANSFORMERS = "transformers==5.24.0"
TORCH = "torch==2.13.0"  # the machine's CPU wheel (a bare "torch" takes a CUDA build)
MODEL = "tiny"  # the name the servers that take one serve the model under


@dataclass(frozen=True)
class Server:
    name: str
    venv: str
    prefix: str  # the OpenAI base under the root URL (kfp-bench llm URL)
    health: str  # a path that answers 200 once the model is loaded
    args: tuple = ()  # added to its command


SERVERS = {
    "kserve": Server("kserve", "ks", "/openai", f"/v1/models/{MODEL}"),
    "transformers": Server("transformers", "tf", "", "/health"),
    # as installed: a stream is cut short ([DONE], then the close) once another request waits
    # (llama-cpp-python 0.3.36, server/settings.py l. 223 interrupt_requests=True, app.py l. 212)
    "llamacpp": Server("llamacpp", "lc", "", "/v1/models"),
    # every stream to its end, one at a time: the same work as the other two servers do
    "llamacpp-no-interrupt": Server(
        "llamacpp-no-interrupt", "lc", "", "/v1/models", ("--interrupt_requests", "False")
    ),
}


def sh(cmd: str, log: Path) -> None:
    """Runs one install step at low priority, its output in ``log``; raises naming the log."""
    with open(log, "a") as out:
        out.write(f"\n$ {cmd}\n")
        out.flush()
        rc = subprocess.call(["nice", "-n", "10", "bash", "-c", cmd], stdout=out, stderr=out)
    if rc:
        raise SystemExit(f"llm_real_servers: setup step failed (exit {rc}): {cmd}; see {log}")


def setup_commands(root: Path) -> dict[str, list[str]]:
    """The install steps of each venv, in order (each is skipped once its venv's python runs)."""
    ks = root / "src/kserve/python"
    return {
        "tf": [
            f"python3 -m venv {root}/tf",
            f"{root}/tf/bin/pip install {TORCH} '{TRANSFORMERS.replace('==', '[serving]==')}' "
            "tokenizers gguf",
        ],
        "ks": [
            # KFP_BENCH_KSERVE_GIT, else a bare clone of GitHub's made once
            f"mkdir -p {root}/src/kserve && G=${{KFP_BENCH_KSERVE_GIT:-{root}/src/kserve.git}} && "
            f'{{ [ -d "$G" ] || git clone -q --bare --depth 1 {KSERVE_GIT_URL} "$G"; }} && '
            f'git --git-dir="$G" archive HEAD '
            f"python/huggingfaceserver python/kserve python/storage | tar -x -C {root}/src/kserve",
            f"python3 -m venv {root}/ks",
            f"{root}/ks/bin/pip install {TORCH}",
            f"{root}/ks/bin/pip install '{TRANSFORMERS}' 'accelerate>=1.6.0,<2' {ks}/kserve "
            f"{ks}/storage",
            f"{root}/ks/bin/pip install --no-deps {ks}/huggingfaceserver",
            # kserve's OpenAI routes import vLLM's protocol classes; vLLM pins a CUDA torch
            f"{root}/ks/bin/pip install --no-deps vllm==0.24.0",
            # what the import of those classes needs, found by importing them (vLLM's own
            # requirements pull its CUDA torch)
            f"{root}/ks/bin/pip install openai cbor2 pyzmq openai-harmony pybase64 cachetools "
            "msgspec cloudpickle py-cpuinfo llguidance xgrammar partial-json-parser",
        ],
        "lc": [
            f"python3 -m venv {root}/lc",
            # builds llama.cpp from source (13 min or more on 2 cores): the wheel is kept
            f"ls {root}/wheels/llama_cpp_python-*.whl || CMAKE_ARGS=-DGGML_NATIVE=OFF "
            f"{root}/lc/bin/pip wheel --no-deps -w {root}/wheels {LLAMA_CPP}",
            # the kept wheel, never a second build (a wheel outranks the sdist of its version)
            f"{root}/lc/bin/pip install '{LLAMA_CPP.replace('==', '[server]==')}' "
            f"--only-binary llama-cpp-python --find-links {root}/wheels",
        ],
    }


def model_name(server: Server, model: Path) -> str:
    """The ``model`` a request must name: ``transformers serve`` pinned to a folder answers 400
    to any other name ("Server is pinned to ...")."""
    return str(model) if server.name == "transformers" else MODEL


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(server: Server, root: Path, model: Path, port: int) -> list[str]:
    py = str(root / server.venv / "bin/python")
    if server.name == "kserve":
        return [py, "-m", "huggingfaceserver", f"--model_dir={model}", f"--model_name={MODEL}",
                "--backend=huggingface", "--task=text_generation", "--dtype=float32",
                f"--http_port={port}", f"--grpc_port={free_port()}", "--workers=1"]  # fmt: skip
    if server.name == "transformers":
        return [str(root / "tf/bin/transformers"), "serve", str(model), "--host", "127.0.0.1",
                "--port", str(port), "--device", "cpu"]  # fmt: skip
    return [py, "-m", "llama_cpp.server", "--model", str(model / "model-f32.gguf"),
            "--model_alias", MODEL, "--host", "127.0.0.1", "--port", str(port),
            "--n_ctx", "512", "--n_threads", "1", *server.args]  # fmt: skip


@contextlib.contextmanager
def started(server: Server, root: Path, model: Path, log: Path, wait_s: float = 600.0):
    """The server in a process group of its own, until it answers ``health``; yields its
    root URL and stops the whole group after (SIGTERM, then SIGKILL)."""
    port = free_port()
    cmd = command(server, root, model, port)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}  # fmt: skip
    out = open(log, "w")
    out.write("$ " + " ".join(cmd) + "\n")
    out.flush()
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"llm_real_servers: {server.name} exited ({proc.returncode}); "
                                 f"see {log}")  # fmt: skip
            try:
                with urllib.request.urlopen(url + server.health, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"llm_real_servers: {server.name} not healthy in {wait_s:g}s; "
                                 f"see {log}")  # fmt: skip
            time.sleep(1)
        yield url, " ".join(cmd)
    finally:
        stop(proc)
        out.close()


def stop(proc: subprocess.Popen) -> None:
    """Ends the server's whole process group: no process is left behind."""
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone; a child may still hold the group
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
