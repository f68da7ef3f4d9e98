"""The fixtures of ``tests/data/llm_streams/``, recorded from a running real server by
``llm_real_servers.py --record``: per server, the raw bytes of a streamed completion, a
streamed chat completion and one error answer, exactly as received on the socket (head and
chunked body), each with a sidecar JSON naming the server, its version, its command and the
request sent (as ``kfp-bench llm`` renders it).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from llm_real_wire import record_interrupted, record_raw

from kfp_bench.load.openai import SEQ_FORMAT, LlmOptions, render, request_source

MAX_TOKENS = 8  # small files
#: The interrupted stream's max_tokens: room (the context less the prompt) for the second
#: request to come while the first still streams.
INTERRUPTED_MAX_TOKENS = 480
PROMPT = "The benchmark runs a pipeline of components against a server"
#: What each server's error fixture is, and the request that draws it.
ERRORS = {
    # llama-cpp-python's RequestIdPlugin (starlette-context) refuses an id that is not a UUID
    "llamacpp": (
        "an X-Request-Id that is not a UUID (kfp-bench's own form before its ids "
        "were UUIDs): 400 with an empty body",
        "own-id",
    ),
    # a prompt past max_position_embeddings (512): KServe answers 500 naming the token count
    "kserve": ("a prompt longer than the model's context (512 tokens)", "overflow"),
    # pinned to the model's folder, it refuses any other model name (400, a JSON detail)
    "transformers": ("a model name other than the one it is pinned to", "wrong-model"),
}
PACKAGES = {
    "kserve": ("huggingfaceserver", "kserve", "transformers", "vllm"),
    "transformers": ("transformers",),
    "llamacpp": ("llama_cpp_python", "sse-starlette", "starlette-context", "uvicorn"),
}


@dataclass(frozen=True)
class _P:
    text: str
    output_tokens: int = MAX_TOKENS


def versions(name: str, root: Path, venv: str) -> dict:
    code = (
        "import importlib.metadata as m, json, sys; "
        "print(json.dumps({p: m.version(p) for p in sys.argv[1:]}))"
    )
    out = subprocess.run(
        [str(root / venv / "bin/python"), "-c", code, *PACKAGES[name]],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout)


#: An id ``uuid.UUID`` cannot read: the form kfp-bench's ids had before they were UUIDs.
NOT_A_UUID = "kfpb-1.00000000-0"


def request(base: str, model: str, endpoint: str, text: str, request_id: str,
            max_tokens: int = MAX_TOKENS) -> bytes:  # fmt: skip
    """The request ``kfp-bench llm`` writes, its X-Request-Id replaced by ``request_id``."""
    opts = LlmOptions(url=base, model=model, endpoint=endpoint, max_tokens=max_tokens)
    [(head, tail)] = render(opts.validate(), [_P(text)], request_source())
    data = head + SEQ_FORMAT % 0 + tail
    return re.sub(rb"X-Request-Id: [^\r]*", b"X-Request-Id: " + request_id.encode(), data)


def record(name: str, base: str, root: Path, model: str, command: str, out: Path) -> None:
    from llm_real_envs import SERVERS

    out.mkdir(parents=True, exist_ok=True)
    port = int(base.split(":")[2].split("/")[0])
    what, kind = ERRORS[name]
    cases = {
        "completions": ("completions", PROMPT, str(uuid.uuid4()), "a streamed completion"),
        "chat": ("chat", PROMPT, str(uuid.uuid4()), "a streamed chat completion"),
        "error": (
            "completions",
            " ".join(["pipeline"] * 700) if kind == "overflow" else PROMPT,
            NOT_A_UUID if kind == "own-id" else str(uuid.uuid4()),
            what,
        ),
    }
    meta = {"server": name, "versions": versions(name, root, SERVERS[name].venv),
            "command": command.replace(str(root), "$ROOT")}  # fmt: skip
    for case, (endpoint, text, rid, about) in cases.items():
        wrong = case == "error" and kind == "wrong-model"
        req = request(base, "tiny" if wrong else model, endpoint, text, rid)
        raw = record_raw(port, req)
        (out / f"{name}-{case}.http").write_bytes(raw)
        doc = {**meta, "case": about, "recorded_utc": time.strftime("%Y-%m-%d", time.gmtime()),
               "request": req.decode("utf-8")}  # fmt: skip
        if len(doc["request"]) > 2000:  # the overflow prompt: said, not kept
            doc["request"] = doc["request"][:300] + "... (the word 'pipeline' 700 times)"
        (out / f"{name}-{case}.json").write_text(json.dumps(doc, indent=1) + "\n")
    if name == "llamacpp":
        _record_interrupted(base, port, model, meta, out)


def _record_interrupted(base: str, port: int, model: str, meta: dict, out: Path) -> None:
    """llama.cpp's streams cut short by a second request (its interrupt_requests, on by
    default), each kept once a try gave its shape: ``interrupted``, ``[DONE]`` before any
    finish_reason; ``cut-after-finish``, the finish_reason and ``[DONE]``, then the close
    inside the body (the second request came just before the last chunk's check)."""
    cases = {
        "interrupted": (INTERRUPTED_MAX_TOKENS, (0.0,), lambda fin, done: done and not fin,
                        "a streamed completion cut short by a second request on another "
                        "connection: [DONE] without a finish_reason, then the close inside "
                        "the chunked body"),
        "cut-after-finish": (MAX_TOKENS, [i * 0.0005 for i in range(20)] * 10,
                             lambda fin, done: done and fin,
                             "a streamed completion whose last chunk (finish_reason) and "
                             "[DONE] came, then the close inside the chunked body: a second "
                             "request came just before the server's last check"),
    }  # fmt: skip
    for case, (max_tokens, delays, shape, about) in cases.items():
        first = request(base, model, "completions", PROMPT, str(uuid.uuid4()), max_tokens)
        for delay in list(delays) * (5 if len(delays) == 1 else 1):
            second = request(base, model, "completions", PROMPT, str(uuid.uuid4()))
            raw = record_interrupted(port, first, second, delay)
            if not raw.endswith(b"0\r\n\r\n") and shape(
                b'"finish_reason": "' in raw, b"data: [DONE]" in raw
            ):
                break
        else:
            raise SystemExit(f"llm_real_fixtures: llama.cpp never gave its {case} shape")
        (out / f"llamacpp-{case}.http").write_bytes(raw)
        doc = {**meta, "case": about, "recorded_utc": time.strftime("%Y-%m-%d", time.gmtime()),
               "request": first.decode("utf-8")}  # fmt: skip
        (out / f"llamacpp-{case}.json").write_text(json.dumps(doc, indent=1) + "\n")
