"""The running LLM server: routes, per-request plans, fault draws and the truth log's writer.

This module owns what every connection of one server shares (``Server``) and ``serve``, the loop
``llm_server.main`` runs; it is imported only there, so that building the CLI's flags imports
neither httptools nor the timers. The record format is documented in ``llm_server``.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import queue
import random
import threading
from collections import deque
from dataclasses import asdict

from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.deadlines import Deadlines
from kfp_bench.sandbox.llm_server_faults import Plan, header_ms, parse_fault
from kfp_bench.sandbox.llm_server_http import Connection, Stream, error_body, word_count
from kfp_bench.sandbox.llm_server_metrics import CONTENT_TYPE, VllmMetrics
from kfp_bench.sandbox.llm_server_options import (
    HEALTH_PATH,
    LlmServerOptions,
    anchor,
    process_log,
)
from kfp_bench.sandbox.llm_server_prefix import PrefixCache
from kfp_bench.sandbox.process import listen_until_stopped

_ENDPOINTS = ("/v1/completions", "/v1/chat/completions")


class TruthLog:
    """Appends one JSON line per finished request and flushes it (``path`` "": keeps nothing).

    The lines are made on the event loop and written by a thread of their own: a write to a file
    can block in the kernel (dirty-page throttling when other processes write a lot), and that
    must not hold up the streams' token deadlines.
    """

    def __init__(self, path: str, options: LlmServerOptions, index: int = 0) -> None:
        self._file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self._lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_lines, name="truth-log", daemon=True)
        if self._file is not None:
            self._writer.start()
        header = {"anchor": anchor(), "pid": os.getpid(), "options": asdict(options)}
        self.write([], {**header, "process": index} if index else header)

    def write(self, times_json: list[str], record: dict) -> None:
        """One line: ``record`` with its ``tokens`` the floats whose JSON is ``times_json``."""
        if self._file is not None:
            line = json.dumps(record, separators=(",", ":"))
            if "tokens" in record:
                line = line.replace('"tokens":null', '"tokens":[' + ",".join(times_json) + "]", 1)
            self._lines.put(line + "\n")

    def _write_lines(self) -> None:
        while (line := self._lines.get()) is not None:
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        """Write what is queued, then close."""
        if self._file is not None:
            self._lines.put(None)
            self._writer.join()
            self._file.close()
            self._file = None


class Server:
    """What every connection shares: options, deadlines, the truth log and the fault draws."""

    def __init__(self, loop, options: LlmServerOptions, index: int = 0, up=None) -> None:
        self.options = options
        #: One byte per process, shared by them all (``--processes``): set once it listens.
        #: /health answers 200 only when every process listens, so that a caller that waited
        #: for it sends to them all (the kernel spreads connections over the sockets bound).
        self.up = up
        self.deadlines = Deadlines(loop, "auto")
        self.truth = TruthLog(process_log(options.truth_log, index), options, index)
        self._id_prefix = f"llm{index}-" if index else "llm-"  # unique across the processes
        cache = PrefixCache(options.block_size, options.prefix_cache_blocks)
        self.metrics = VllmMetrics(options.model, cache)
        self.fault = parse_fault(options.fault)
        self._random = random.Random(options.seed)
        self._seq = 0
        self.connections: set[Connection] = set()
        self.free = options.slots  # decode slots free (``options.slots`` 0: no limit)
        self.waiting: deque = deque()  # streams waiting for a slot, in arrival order

    def admit(self, stream: Stream) -> None:
        """Start ``stream`` now if a slot is free, else queue it until one is."""
        if self.options.slots and self.free <= 0:
            self.waiting.append(stream)
            return
        self.free -= 1
        stream.start()

    def release(self) -> None:
        """A stream holding a slot ended: the slot goes to the longest-waiting live stream."""
        self.free += 1
        while self.waiting and self.free > 0:
            stream = self.waiting.popleft()
            if not stream.ended:
                self.free -= 1
                stream.start(queued=True)

    def route(self, conn: Connection, method: bytes, full: str) -> None:
        path = full[len("/openai") :] if full.startswith("/openai/") else full
        if full == "/metrics":  # vLLM serves it at the root (llm_server_metrics)
            conn.reply(200, self.metrics.exposition(), content_type=CONTENT_TYPE)
            return
        if path in (HEALTH_PATH, "/v1/models"):
            if method != b"GET":
                conn.reply(405, error_body(405, f"use GET {path}", "MethodNotAllowed"))
            elif path == HEALTH_PATH and self.up is not None and not all(self.up[:]):
                listening = len(self.up) - self.up[:].count(0)
                conn.reply(503, b'{"status":"starting","processes_listening":%d}' % listening)
            elif path == HEALTH_PATH:
                conn.reply(200, b'{"status":"ok"}')
            else:
                conn.reply(200, self._models())
            return
        if path not in _ENDPOINTS:
            conn.reply(404, error_body(404, f"no route {path}", "NotFoundError"))
            return
        if method != b"POST":
            conn.reply(405, error_body(405, f"use POST {path}", "MethodNotAllowed"))
            return
        body = self._body(conn, path)
        if self._refuse(conn, body) or self._too_long(conn, path, body):
            return
        self._seq += 1
        rid = conn.headers.get(b"x-request-id", b"").decode("latin-1")
        rid = rid or f"{self._id_prefix}{self._seq}"
        plan = self._plan(conn.headers, body)
        stream = Stream(conn, rid, full, body, plan)
        self.metrics.started()
        conn.current = stream
        if plan.fault and plan.fault.name == "429":
            after = plan.fault.get("retry_after")
            msg = "Rate limit reached (injected by the kfp-bench llm server)"
            err = error_body(429, msg, "requests", "rate_limit_exceeded")
            stream.outcome = "rejected"
            conn.reply(429, err, extra=[b"Retry-After: %d" % math.ceil(after)])
            stream.finish()
            return
        self.admit(stream)

    def _body(self, conn: Connection, path: str) -> dict:
        try:
            body = json.loads(bytes(conn.body) or b"null")
        except ValueError as e:
            raise ConfigError(f"the body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise ConfigError("the body must be a JSON object")
        need = "messages" if path.endswith("chat/completions") else "prompt"
        if need not in body:
            raise ConfigError(f"{path} needs '{need}'")
        if need == "messages" and not isinstance(body["messages"], list):
            raise ConfigError("'messages' must be a list")
        return body

    def _models(self) -> bytes:
        """GET /v1/models: the one model, with ``max_model_len`` when set, as vLLM's
        ``ModelCard`` carries it (vllm/entrypoints/openai/engine/protocol.py)."""
        model = {"id": self.options.model, "object": "model", "created": 0}
        model["owned_by"] = "kfp-bench"
        if self.options.max_model_len:
            model["max_model_len"] = self.options.max_model_len
        return json.dumps({"object": "list", "data": [model]}).encode()

    def _too_long(self, conn: Connection, path: str, body: dict) -> bool:
        """Answer 400 to a request whose prompt tokens plus max_tokens exceed max_model_len, as
        vLLM does, in the words KServe's huggingfaceserver uses too (kserve/kserve@aaac4e29
        python/huggingfaceserver/huggingfaceserver/generative_model.py lines 612-619; it
        answers them with a 500)."""
        limit = self.options.max_model_len
        asked = body.get("max_tokens", body.get("max_completion_tokens"))
        if not limit or not isinstance(asked, int) or isinstance(asked, bool):
            return False
        prompt = word_count(body, path.endswith("chat/completions"))
        if prompt + asked <= limit:
            return False
        msg = (
            f"This model's maximum context length is {limit} tokens. However, you requested "
            f"{prompt + asked} tokens ({prompt} in the messages, {asked} in the completion). "
            "Please reduce the length of the messages or completion."
        )
        conn.reply(400, error_body(400, msg, "BadRequestError"))
        return True

    def _refuse(self, conn: Connection, body: dict) -> bool:
        """Answer 422 to stream_options without "stream": true, as KServe's vLLM server does
        (python/huggingfaceserver/tests/test_vllm_generative.py lines 411-431, kserve@aaac4e29)."""
        if "stream_options" in body and not body.get("stream"):
            msg = "stream_options can only be set when stream is true"
            conn.reply(422, error_body(422, msg, "BadRequestError"))
            return True
        return False

    def _plan(self, headers: dict[bytes, bytes], body: dict) -> Plan:
        o = self.options
        first = header_ms(headers, "X-Llm-First-Token-Ms", o.first_token_ms)
        gap = header_ms(headers, "X-Llm-Token-Gap-Ms", o.token_gap_ms)
        asked = body.get("max_tokens", body.get("max_completion_tokens"))
        if asked is not None and (
            isinstance(asked, bool) or not isinstance(asked, int) or asked < 1
        ):
            raise ConfigError(f"max_tokens={asked!r} must be an integer >= 1")
        tokens = min(asked or o.max_tokens, o.max_tokens_cap)
        finish = "length" if asked is not None else "stop"
        raw = headers.get(b"x-llm-fault")
        if raw is not None:
            fault = parse_fault(raw.decode("latin-1"), "header X-Llm-Fault")
        elif self.fault and self._random.random() < o.fault_rate:
            fault = self.fault
        else:
            fault = None
        return Plan(first, gap, tokens, finish, fault)

    def close(self) -> None:
        for conn in list(self.connections):  # streams still open: logged, not lost
            if conn.current is not None:
                conn.current.outcome = "server-stopped"
                conn.current.finish()
        self.deadlines.close()
        self.truth.close()


async def serve(host: str, port: int, options: LlmServerOptions, index: int = 0, up=None) -> None:
    """Serve on ``host:port`` as process ``index`` of ``options.processes``; ``up``: the
    processes' shared bytes, this one's set once it listens."""
    server = Server(asyncio.get_running_loop(), options, index, up)
    n = options.processes

    def listening() -> None:
        if up is not None:
            up[index] = 1

    await listen_until_stopped(
        "llm server", server, lambda: Connection(server), host, port,
        note=f" (process {index + 1} of {n})" if n > 1 else "", reuse_port=n > 1,
        listening=listening,
    )  # fmt: skip
