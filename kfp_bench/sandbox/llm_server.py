"""A local OpenAI-compatible streaming server whose token timing is known exactly.

This module owns ``kfp-bench llm-server``: its options (``LlmServerOptions``, from which the flags
are built), its routes, its truth log and ``start_llm_server``, which runs it in a child process.
The streams themselves are in ``llm_server_http``, the fault modes in ``llm_server_faults``.

Routes, as vLLM and KServe's ``/openai`` prefix serve them: ``POST /v1/completions``, ``POST
/v1/chat/completions``, ``GET /v1/models`` (each also under ``/openai``), and ``GET /health``.
A streaming request (``"stream": true``) is answered as ``text/event-stream``, one ``data: {json}``
event per chunk, ending ``data: [DONE]``; chat streams start with a role chunk. Others get one JSON
body once the last token would have been generated.

Timing: the first token ``first_token_ms`` after the request's last byte was parsed, then one every
``token_gap_ms``, ``max_tokens`` tokens (the request's, capped at ``max_tokens_cap``, else the
server's). A request may override the timing with ``X-Llm-First-Token-Ms`` and
``X-Llm-Token-Gap-Ms`` and pick a fault with ``X-Llm-Fault`` (``llm_server_faults``).
prompt_tokens is the prompt's whitespace word count (chat: of the messages' contents).

Truth log (``--truth-log FILE``): JSON lines. The first holds the ``anchor``: one
``time.perf_counter()`` reading and the epoch time taken with it, the server's pid and options. Then
one line per request, written and flushed when it ends: ``id`` (its ``X-Request-Id``, else the
server's own), ``endpoint``, ``arrived`` (last request byte parsed), ``head`` (response head
written), ``tokens`` (each content token's send time, after its write), ``done``, ``prompt_tokens``,
``completion_tokens`` (content tokens really sent), ``usage`` (what the server reported), ``fault``,
``outcome`` (ok, client-gone, dropped, error-event, stalled, rejected, server-stopped),
``queued_writes`` (token writes that left bytes queued in user space) and ``write_max_ms`` (the
longest token write: the client may have had those bytes up to that much before the logged send
time). Every time is ``perf_counter`` (CLOCK_MONOTONIC on Linux, the same clock in every process).
``read_truth`` reads it back.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from kfp_bench._doc import field_help
from kfp_bench.errors import ConfigError
from kfp_bench.sandbox.deadlines import Deadlines
from kfp_bench.sandbox.llm_server_faults import Plan, header_ms, parse_fault
from kfp_bench.sandbox.llm_server_http import Connection, Stream, error_body
from kfp_bench.sandbox.process import ServerHandle, ServerSpec, start_server, watch_parent

HEALTH_PATH = "/health"
_ENDPOINTS = ("/v1/completions", "/v1/chat/completions")


@dataclass(frozen=True, slots=True)
class LlmServerOptions:
    """Server-wide settings of the local LLM server; a request's ``X-Llm-*`` headers override some.

    Attributes:
        first_token_ms: time from a request's arrival to its first content token (ms).
        token_gap_ms: time between two content tokens of one stream (ms).
        max_tokens: tokens per answer when the request gives no max_tokens.
        max_tokens_cap: the most tokens one answer has, whatever the request asks.
        model: the model name served (GET /v1/models) and put in chunks the request names none in.
        fault: a fault applied to requests at fault_rate: NAME[:key=value,...], one of stall,
            drop, 429, error, no-usage, wrong-usage, empty (see llm_server_faults); empty: none.
        fault_rate: the fraction of requests the fault is applied to.
        seed: seed of the draws behind fault_rate; unset: unseeded.
        truth_log: file to write the truth log to (JSON lines); empty: none.
    """

    first_token_ms: float = 200.0
    token_gap_ms: float = 20.0
    max_tokens: int = 64
    max_tokens_cap: int = 4096
    model: str = "kfp-bench-llm"
    fault: str = ""
    fault_rate: float = 1.0
    seed: int | None = None
    truth_log: str = ""

    def __post_init__(self) -> None:
        for name in ("first_token_ms", "token_gap_ms"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value < 3.6e6:
                raise ConfigError(f"llm server: {_flag(name)} {value!r} must be ms in [0, 3600000)")
        for name in ("max_tokens", "max_tokens_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"llm server: {_flag(name)} {value!r} must be an integer >= 1")
        if self.max_tokens > self.max_tokens_cap:
            raise ConfigError(
                f"llm server: --max-tokens {self.max_tokens} exceeds --max-tokens-cap "
                f"{self.max_tokens_cap}; lower it or raise the cap"
            )
        if not 0 <= self.fault_rate <= 1:
            raise ConfigError(f"llm server: --fault-rate {self.fault_rate!r} must be in [0, 1]")
        if not self.model.strip():
            raise ConfigError("llm server: --model must not be empty")
        parse_fault(self.fault)

    def argv(self) -> tuple[str, ...]:
        """The command-line flags that reproduce these options (defaults left out)."""
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value != f.default:
                out += [_flag(f.name), str(value)]
        return tuple(out)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


# --- the truth log ---------------------------------------------------------------------------


class TruthLog:
    """Appends one JSON line per finished request and flushes it (``path`` "": keeps nothing)."""

    def __init__(self, path: str, options: LlmServerOptions) -> None:
        self._file = open(path, "a", encoding="utf-8") if path else None  # noqa: SIM115
        self.write({"anchor": anchor(), "pid": os.getpid(), "options": asdict(options)})

    def write(self, record: dict) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record, separators=(",", ":")) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def anchor() -> dict:
    """One ``perf_counter`` reading and the epoch time at the same moment (the midpoint)."""
    a = time.perf_counter()
    epoch = time.time()
    b = time.perf_counter()
    return {"perf_counter": (a + b) / 2, "epoch": epoch}


@dataclass(frozen=True, slots=True)
class Truth:
    """A truth log read back: ``header`` its first line, ``requests`` the rest, by id."""

    header: dict
    requests: dict[str, dict]

    def epoch(self, t: float) -> float:
        """A ``perf_counter`` time of this log as epoch seconds."""
        a = self.header["anchor"]
        return a["epoch"] + (t - a["perf_counter"])


def read_truth(path: str | Path) -> Truth:
    """Read a truth log; lines cut short (the server was killed mid-write) are left out."""
    header: dict = {}
    requests: dict[str, dict] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "anchor" in record:
            header = header or record
        else:
            requests[record["id"]] = record
    return Truth(header, requests)


# --- the server ------------------------------------------------------------------------------


class Server:
    """What every connection shares: options, deadlines, the truth log and the fault draws."""

    def __init__(self, loop, options: LlmServerOptions) -> None:
        self.options = options
        self.deadlines = Deadlines(loop, "auto")
        self.truth = TruthLog(options.truth_log, options)
        self.fault = parse_fault(options.fault)
        self._random = random.Random(options.seed)
        self._seq = 0
        self.connections: set[Connection] = set()

    def route(self, conn: Connection, method: bytes, full: str) -> None:
        path = full[len("/openai") :] if full.startswith("/openai/") else full
        if path in (HEALTH_PATH, "/v1/models"):
            if method != b"GET":
                conn.reply(405, error_body(405, f"use GET {path}", "MethodNotAllowed"))
            elif path == HEALTH_PATH:
                conn.reply(200, b'{"status":"ok"}')
            else:
                model = {"id": self.options.model, "object": "model", "created": 0}
                model["owned_by"] = "kfp-bench"
                conn.reply(200, json.dumps({"object": "list", "data": [model]}).encode())
            return
        if path not in _ENDPOINTS:
            conn.reply(404, error_body(404, f"no route {path}", "NotFoundError"))
            return
        if method != b"POST":
            conn.reply(405, error_body(405, f"use POST {path}", "MethodNotAllowed"))
            return
        body = self._body(conn, path)
        if self._refuse(conn, body):
            return
        self._seq += 1
        rid = conn.headers.get(b"x-request-id", b"").decode("latin-1") or f"llm-{self._seq}"
        plan = self._plan(conn.headers, body)
        stream = Stream(conn, rid, full, body, plan)
        conn.current = stream
        if plan.fault and plan.fault.name == "429":
            after = plan.fault.get("retry_after")
            msg = "Rate limit reached (injected by the kfp-bench llm server)"
            err = error_body(429, msg, "requests", "rate_limit_exceeded")
            stream.outcome = "rejected"
            conn.reply(429, err, extra=[b"Retry-After: %d" % round(after)])
            stream.finish()
            return
        stream.start()

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


async def serve(host: str, port: int, options: LlmServerOptions) -> None:
    loop = asyncio.get_running_loop()
    server = Server(loop, options)
    try:
        listener = await loop.create_server(
            lambda: Connection(server), host, port, backlog=4096, reuse_address=True
        )
    except OSError as e:
        server.close()
        raise ConfigError(f"llm server: cannot listen on {host}:{port}: {e}") from e
    bound = listener.sockets[0].getsockname()[1]
    print(f"llm server listening on http://{host}:{bound}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    listener.close()
    server.close()


# --- running it --------------------------------------------------------------------------------


class LlmServerHandle(ServerHandle):
    """A running LLM server: ``url`` its base (``url + "/openai"`` as KServe serves it)."""

    truth_path: Path | None = None

    def models(self, timeout: float = 5.0) -> dict:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.url + "/v1/models", timeout=timeout) as resp:
            return json.load(resp)

    def truth(self, wait_for: tuple[str, ...] = (), timeout: float = 2.0) -> Truth:
        """The truth log so far (every request that has ended), once it holds ``wait_for``'s ids.

        A client can see a stream's end a moment before the server has logged it: the line is
        written just after the last bytes.
        """
        if self.truth_path is None:
            raise ConfigError("llm server: started without a truth log; pass truth_log=PATH")
        deadline = time.monotonic() + timeout
        while True:
            truth = read_truth(self.truth_path)
            if all(i in truth.requests for i in wait_for) or time.monotonic() > deadline:
                return truth
            time.sleep(0.005)


def start_llm_server(
    port: int = 0, *, truth_log: str | Path = "", start_timeout: float = 15.0, **options
) -> LlmServerHandle:
    """Run the LLM server in a child process on 127.0.0.1 and return once it answers.

    The handle is a context manager: ``with start_llm_server(truth_log=p) as h: ...`` stops it.

    Args:
        port: TCP port; 0 picks a free one.
        truth_log: where the server writes its truth log; "" for none.
        start_timeout: seconds to wait for ``/health``.
        **options: fields of ``LlmServerOptions``, e.g. ``token_gap_ms=5``.

    Raises:
        ConfigError: an unknown or invalid option; nothing was started.
        ServerError: the server exited or did not answer in time.
    """
    known = {f.name for f in fields(LlmServerOptions)} - {"truth_log"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ConfigError(f"llm server: unknown options {unknown}; known: {sorted(known)}")
    path = Path(truth_log).resolve() if truth_log else None
    opts = LlmServerOptions(**options, truth_log=str(path or ""))
    spec = ServerSpec(
        name="llm server",
        module="kfp_bench.sandbox.llm_server",
        port_flag="--port",
        health_path=HEALTH_PATH,
        args=opts.argv(),
        start_timeout=start_timeout,
        stop_timeout=3.0,
    )
    handle = start_server(spec, port, LlmServerHandle)
    handle.truth_path = path
    return handle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The server's flags: ``--port``, ``--host`` and every ``LlmServerOptions`` field."""
    parser.add_argument("--port", type=int, default=8000, help="TCP port; 0 picks a free one")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    for f in fields(LlmServerOptions):
        kind = type(f.default) if f.default is not None else int
        parser.add_argument(
            _flag(f.name), dest=f.name, type=kind, default=f.default,
            help=field_help(LlmServerOptions, f.name),
        )  # fmt: skip


def main(args: argparse.Namespace | list[str] | None = None) -> int:
    """Serve until SIGTERM or Ctrl-C; bad options raise ConfigError before anything listens."""
    if not isinstance(args, argparse.Namespace):
        parser = argparse.ArgumentParser(
            prog="python -m kfp_bench.sandbox.llm_server", description=__doc__.split("\n\n")[0]
        )
        add_arguments(parser)
        args = parser.parse_args(args)
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"llm server: --port {args.port} is not a TCP port; 0 picks a free one")
    options = LlmServerOptions(**{f.name: getattr(args, f.name) for f in fields(LlmServerOptions)})
    watch_parent()
    import uvloop

    uvloop.run(serve(args.host, args.port, options))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigError as e:
        print(f"kfp-bench: {e}", file=sys.stderr)
        sys.exit(2)
