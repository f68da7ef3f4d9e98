"""A local OpenAI-compatible streaming server whose token timing is known exactly.

This module owns ``kfp-bench llm-server``: its options (``LlmServerOptions``, from which the flags
are built), its routes, its truth log and ``start_llm_server``, which runs it in a child process.
The running server is ``llm_server_app``, its streams ``llm_server_http``, its fault modes
``llm_server_faults``.

Routes, as vLLM and KServe's ``/openai`` prefix serve them: ``POST /v1/completions``, ``POST
/v1/chat/completions``, ``GET /v1/models`` (each also under ``/openai``), and ``GET /health``.
A streaming request (``"stream": true``) is answered as ``text/event-stream``, one ``data: {json}``
event per chunk, ending ``data: [DONE]``; chat streams start with a role chunk. Others get one JSON
body once the last token would have been generated.

Timing: the first token ``first_token_ms`` after the request's last byte was parsed (with
``--slots N``, after it got one of N decode slots), then one every
``token_gap_ms``, ``max_tokens`` tokens (the request's, capped at ``max_tokens_cap``, else the
server's). A request may override the timing with ``X-Llm-First-Token-Ms`` and
``X-Llm-Token-Gap-Ms`` and pick a fault with ``X-Llm-Fault`` (``llm_server_faults``).
prompt_tokens is the prompt's whitespace word count (chat: of the messages' contents).

Truth log (``--truth-log FILE``): JSON lines. The first holds the ``anchor``: one
``time.perf_counter()`` reading and the epoch time taken with it, the server's pid and options. Then
one line per request, written and flushed when it ends: ``id`` (its ``X-Request-Id``, else the
server's own), ``endpoint``, ``arrived`` (last request byte parsed), ``admitted``
(when a decode slot took it: ``arrived`` unless ``--slots`` made it wait), ``head`` (response head
written), ``tokens`` (each content token's send time, after its write), ``done``, ``prompt_tokens``,
``cached_tokens`` (of those, the ones its prefix cache served: what the usage's
``prompt_tokens_details`` says when sent; null for a request never admitted), ``prompt_head``
and ``prompt_sha256`` (the prompt's first 64 characters and the SHA-256 of its UTF-8: chat
messages' contents joined by newlines), ``messages`` (chat: each message's ``role`` and the
``sha256`` of its content, in order, so that a session's history can be checked turn by turn;
null for completions),
``completion_tokens`` (content tokens really sent), ``usage`` (what the server reported), ``fault``,
``outcome`` (ok, client-gone, dropped, error-event, stalled, rejected, server-stopped),
``queued_writes`` (token writes that left bytes queued in user space) and ``write_max_ms`` (the
longest token write: the client may have had those bytes up to that much before the logged send
time). Every time is ``perf_counter`` (CLOCK_MONOTONIC on Linux, the same clock in every process).
``read_truth`` reads it back.
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import signal
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

from kfp_bench._doc import field_help
from kfp_bench.errors import ConfigError
from kfp_bench.sandbox import llm_server_faults
from kfp_bench.sandbox.llm_server_options import HEALTH_PATH, LlmServerOptions, flag, process_log
from kfp_bench.sandbox.process import (
    PARENT_ENV,
    ServerHandle,
    ServerSpec,
    free_port,
    start_server,
    watch_parent,
)

# Imports inside functions: its starter runs in the caller's process and the server in a process of
# its own: what only the server uses loads there.

# --- the truth log ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Truth:
    """A truth log read back: ``header`` its first line, ``requests`` the rest, by id (an id
    sent twice, as a retry may: the later request's)."""

    header: dict
    requests: dict[str, dict]

    def epoch(self, t: float) -> float:
        """A ``perf_counter`` time of this log as epoch seconds."""
        a = self.header["anchor"]
        return a["epoch"] + (t - a["perf_counter"])


def read_truth(path: str | Path) -> Truth:
    """Read a truth log, and those of the server's other processes (``--processes``); lines
    cut short (the server was killed mid-write) are left out."""
    header: dict = {}
    requests: dict[str, dict] = {}
    paths = [Path(path)]
    while paths:
        p = paths.pop()
        if not p.exists() and p != Path(path):
            continue  # a process that had not started
        for line in p.read_text(encoding="utf-8").splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "anchor" in record:
                if not header:
                    header = record
                    n = record.get("options", {}).get("processes", 1)
                    paths += [Path(process_log(str(path), i)) for i in range(1, n)]
            else:
                requests[record["id"]] = record
    return Truth(header, requests)


# --- running it --------------------------------------------------------------------------------


class LlmServerHandle(ServerHandle):
    """A running LLM server: ``url`` its base (``url + "/openai"`` as KServe serves it)."""

    truth_path: Path | None = None

    def models(self, timeout: float = 5.0) -> dict:
        # urllib.request (~20 ms): kfp-bench load imports this module for llm-server's flags
        from urllib.request import ProxyHandler, build_opener

        with build_opener(ProxyHandler({})).open(self.url + "/v1/models", timeout=timeout) as resp:
            return json.load(resp)

    def truth(self, wait_for: tuple[str, ...] = (), timeout: float = 2.0, count: int = 0) -> Truth:
        """The truth log so far (every request that has ended), once it holds ``wait_for``'s ids
        and at least ``count`` requests, or as it is after ``timeout`` seconds (a deadline, not a
        measurement: the caller asserts what it needs).

        A client can see a stream's end a moment before the server has logged it: the line is
        written just after the last bytes, by a writer thread.
        """
        if self.truth_path is None:
            raise ConfigError("llm server: started without a truth log; pass truth_log=PATH")
        deadline = time.monotonic() + timeout
        while True:
            truth = read_truth(self.truth_path)
            held = len(truth.requests) >= count and all(i in truth.requests for i in wait_for)
            if held or time.monotonic() > deadline:
                return truth
            time.sleep(0.005)

    def arrived_since(self, since: float, count: int, timeout: float = 30.0) -> list[dict]:
        """The logged requests that arrived at or after ``since`` (``time.perf_counter()``, the
        log's clock), once ``count`` of them are logged, or all there are after ``timeout``
        seconds (a deadline, not a measurement: the caller asserts the count)."""
        deadline = time.monotonic() + timeout
        while True:
            got = [r for r in self.truth().requests.values() if r["arrived"] >= since]
            if len(got) >= count or time.monotonic() > deadline:
                return got
            time.sleep(0.01)


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
    """The server's flags: ``--port``, ``--host`` and every ``LlmServerOptions`` field; the
    fault modes' list (``llm_server_faults``) as the help's epilog."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    doc = llm_server_faults.__doc__
    parser.epilog = doc[doc.index("A fault is written") :].replace("``", "")
    parser.add_argument("--port", type=int, default=8000, help="TCP port; 0 picks a free one")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    for f in fields(LlmServerOptions):
        kind = type(f.default) if f.default is not None else int
        if kind is bool:  # --name / --no-name, as vLLM's switches
            kw = {"action": argparse.BooleanOptionalAction}
        else:
            kw = {"type": kind}
        parser.add_argument(
            flag(f.name), dest=f.name, default=f.default,
            help=field_help(LlmServerOptions, f.name), **kw,
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
    port = args.port or (free_port() if options.processes > 1 else 0)
    # shared by the forks: a byte per process, set when it listens (/health waits for all)
    up = mmap.mmap(-1, options.processes) if options.processes > 1 else None
    index, pids = _fork(options.processes)
    watch_parent()  # the first process: the one that started it; the others: the first
    import uvloop

    from kfp_bench.sandbox.llm_server_app import serve

    try:
        uvloop.run(serve(args.host, port, options, index, up))
    finally:
        for pid in pids:  # stopped with the first, whichever signal reached it alone
            _stop(pid)
    return 0


def _fork(n: int) -> tuple[int, list[int]]:
    """Fork the server's processes 1 to n-1 (before any thread or loop exists); returns this
    process's index and, in the first, the others' pids."""
    first, pids = os.getpid(), []
    for index in range(1, n):
        pid = os.fork()
        if pid == 0:
            os.environ[PARENT_ENV] = str(first)
            return index, []
        pids.append(pid)
    return 0, pids


def _stop(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ConfigError as e:
        print(f"kfp-bench: {e}", file=sys.stderr)
        sys.exit(2)
