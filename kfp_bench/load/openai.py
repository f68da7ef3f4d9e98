"""The options of an OpenAI-compatible streaming load and the request bytes they describe.

``LlmOptions`` is a ``LoadOptions`` (the same pacing, connection and worker flags, the same
checks) plus what an LLM request needs: the endpoint, the model, ``max_tokens``, ``ignore_eos``
and the stall timeout. ``render`` builds every request before the attack, one per prompt
(requests cycle through them), so the request loop only splices in the request id: the head ends
with ``X-Request-Id: <source>-`` and the loop writes ``<seq>`` (``SEQ_FORMAT``), the blank line
and the body. The id is a UUID (``request_source``: the process in the first groups, the
sequence in the last 12 hex digits), since some servers refuse any other: llama-cpp-python's
server answers a bare 400 unless ``uuid.UUID(X-Request-Id)`` parses. ``-H "X-Request-Id: ..."``
replaces it, and ``request_id=False`` (``--no-request-id``) sends none.

The body follows the OpenAI API as vLLM and KServe's ``/openai`` routes serve it: ``stream``
with ``stream_options.include_usage`` (the usage arrives in a last chunk whose ``choices`` is
empty), temperature 0, and ``ignore_eos`` only when asked (a vLLM extension others may refuse).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass, replace

from kfp_bench.errors import ConfigError
from kfp_bench.load.options import LoadOptions
from kfp_bench.redact import public_url

ENDPOINTS = {"completions": "/v1/completions", "chat": "/v1/chat/completions"}
#: The request loop writes a request's sequence number as the id's last group: 12 hex digits.
SEQ_FORMAT = b"%012x"
#: The bounds of --multi-turn: a session's turns, and the think time between two of them.
MAX_TURNS = 100
MAX_THINK_S = 3600.0
_REQUEST_ID = re.compile(r"\s*x-request-id\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class LlmOptions(LoadOptions):
    """What to stream, from where, how often and for how long (besides ``LoadOptions``).

    Attributes:
        url: the server's OpenAI base URL, without ``/v1`` (KServe: http://host/openai).
        endpoint: completions (``/v1/completions``, prompt text) or chat
            (``/v1/chat/completions``, the prompt as one user message).
        model: the model name the server serves.
        max_tokens: output tokens asked of each request; 0 takes each prompt's
            ``output_tokens``.
        ignore_eos: ask the server to go on to max_tokens past the end of sequence (vLLM).
        timeout: the whole request's timeout in seconds, from the send to the stream's end;
            0 means none.
        stall_timeout: a stream with no byte for this many seconds (before its head or between
            two reads) fails as stalled; 0 means none. Distinct from --timeout, which bounds
            the whole request however steadily its tokens come.
        tokenizer: a local tokenizer.json (the tokenizers package): when the server streams no
            usage, the tokens are its count of the prompt and of the streamed text (else
            unknown).
        request_id: send each request an ``X-Request-Id`` (a UUID naming this process and the
            request's number) that a server's log can pair with the results; False sends
            none. A ``-H "X-Request-Id: ..."`` replaces it.
        turns: chat sessions of this many turns (``load.multi_turn``), each turn's request
            carrying the session's earlier prompts and answers; 0: single requests.
        think_time: a session's pause in seconds between the end of one turn's stream and the
            next turn's request.
    """

    endpoint: str = "completions"
    model: str = ""
    max_tokens: int = 0
    ignore_eos: bool = False
    stall_timeout: float = 30.0
    tokenizer: str = ""
    request_id: bool = True
    turns: int = 0
    think_time: float = 0.0
    method: str = "POST"
    timeout: float = 600.0
    content_type: str = "application/json"
    disable_compression: bool = True  # an SSE stream is read as it comes, never gzipped

    def validate(self) -> LlmOptions:
        """Check every option; raise ``ConfigError`` naming the flag and the fix."""
        if self.endpoint not in ENDPOINTS:
            raise ConfigError(f"--endpoint {self.endpoint!r}: use {' or '.join(ENDPOINTS)}")
        if not self.model.strip():
            raise ConfigError("--model: no model name; give the name the server serves")
        if self.max_tokens < 0:
            raise ConfigError(
                f"--max-tokens {self.max_tokens}: give a positive number, or 0 for each "
                "prompt's own output length"
            )
        if self.stall_timeout < 0:
            raise ConfigError(
                f"--stall-timeout {self.stall_timeout}: give 0 (none) or a positive number of s"
            )
        if self.tokenizer and not os.path.isfile(self.tokenizer):
            raise ConfigError(
                f"--tokenizer {self.tokenizer}: not found; give the path of the model's "
                "tokenizer.json"
            )
        if self.method.upper() != "POST":
            raise ConfigError(f"-m {self.method}: the OpenAI API takes POST; leave -m out")
        if self.body:
            raise ConfigError("-d: the request bodies are built from the prompts; leave -d out")
        if self.url.rstrip("/").endswith(("/v1", *ENDPOINTS.values())):
            raise ConfigError(
                f"URL {public_url(self.url)!r}: give the base URL without /v1 (e.g. "
                "http://host/openai); --endpoint picks the route"
            )
        super().validate()
        if self.turns or self.think_time:
            self._check_turns()
        return self

    def _check_turns(self) -> None:
        """--multi-turn: chat sessions, closed loop (each of -c lanes runs whole sessions) or
        open loop at --rate (sessions started at the rate)."""
        flag = f"--multi-turn {self.turns},{self.think_time:g}"
        if self.turns < 1 or self.turns > MAX_TURNS:
            raise ConfigError(f"{flag}: give 1 to {MAX_TURNS} turns per session")
        if not self.think_time >= 0 or self.think_time > MAX_THINK_S:
            raise ConfigError(f"{flag}: give a think time of 0 to {MAX_THINK_S:g} seconds")
        if self.endpoint != "chat":
            raise ConfigError(f"{flag}: a session's history is chat messages; add --endpoint chat")
        if self.trace or self.stages:
            schedule = "--trace" if self.trace else "--stages"
            raise ConfigError(f"{flag} beside {schedule}: sessions start one per -c lane or at "
                              f"--rate; drop {schedule}")  # fmt: skip
        if self.qps:
            raise ConfigError(f"{flag} beside -q: the think time paces a session; drop -q")
        if self.tokenizer:
            raise ConfigError(f"{flag} beside --tokenizer: a turn's prompt tokens (its history) "
                              "come from the server's usage only; drop --tokenizer")  # fmt: skip


MULTI_TURN_FORM = "TURNS[,THINK_S] (e.g. 5,2: five turns, 2 s between them)"


def parse_multi_turn(text: str, flag: str = "--multi-turn") -> tuple[int, float]:
    """(turns, think time in seconds) of ``TURNS[,THINK_S]``; ``ConfigError`` otherwise."""
    turns, _, think = str(text).partition(",")
    try:
        n = int(turns.strip())
        t = float(think.strip()) if think.strip() else 0.0
    except ValueError:
        n, t = 0, -1.0
    if n < 1 or not t >= 0 or t == float("inf"):
        raise ConfigError(f"{flag} {text!r}: give a whole number of turns of 1 or more and a "
                          f"think time of 0 or more seconds, {MULTI_TURN_FORM}")  # fmt: skip
    return n, t


def chat_messages(prompt) -> list[dict]:
    """The messages of a chat request for ``prompt``: one user turn, after the session's earlier
    ones when it has them (``multi_turn.Turn.history``)."""
    return [*getattr(prompt, "history", ()), {"role": "user", "content": prompt.text}]


def request_body(opts: LlmOptions, prompt) -> bytes:
    """The JSON body of one streamed request for ``prompt`` (an object with ``.text`` and
    ``.output_tokens``)."""
    doc: dict = {"model": opts.model}
    if opts.endpoint == "chat":
        doc["messages"] = chat_messages(prompt)
    else:
        doc["prompt"] = prompt.text
    doc["max_tokens"] = opts.max_tokens or int(prompt.output_tokens)
    doc["temperature"] = 0
    doc["stream"] = True
    doc["stream_options"] = {"include_usage": True}
    if opts.ignore_eos:
        doc["ignore_eos"] = True
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


def request_source() -> str:
    """This process's request id prefix: the first four groups of a version-4 UUID (RFC 4122
    section 4.4: version nibble 4, variant bits 10), the pid in the first group and random bits
    after it, so that one process's successive attacks never reuse an id. ``request_id`` adds
    the last group."""
    r = secrets.token_hex(8)
    variant = "89ab"[int(r[4], 16) & 3]
    return f"{os.getpid() & 0xFFFFFFFF:08x}-{r[:4]}-4{r[5:8]}-{variant}{r[8:11]}"


def request_id(source: str, seq: int) -> str:
    """The ``X-Request-Id`` of request ``seq`` of the process whose prefix is ``source``."""
    return f"{source}-{(SEQ_FORMAT % seq).decode()}"


def sends_id(opts: LlmOptions) -> bool:
    """Whether the requests carry our ``X-Request-Id``: not when a ``-H`` gives one (it
    replaces ours: one header, never two) nor with ``request_id=False``."""
    return opts.request_id and not any(_REQUEST_ID.match(h) for h in opts.headers)


def render(opts: LlmOptions, prompts, source: str) -> list[tuple[bytes, bytes]]:
    """Every request, as (head up to the request id's number, blank line and body), one per
    prompt: the request loop writes ``head + SEQ_FORMAT % seq + tail`` when ``sends_id``, else
    ``head + tail``."""
    if not prompts:
        raise ConfigError("prompts: none given; give at least one prompt")
    out = []
    ours = sends_id(opts)
    url = opts.url.rstrip("/") + ENDPOINTS[opts.endpoint]
    sse = replace(opts, url=url, accept="text/event-stream", disable_compression=True)
    for prompt in prompts:
        if not getattr(prompt, "text", ""):
            raise ConfigError("prompts: a prompt with no text; give every prompt some text")
        request = replace(sse, body=request_body(opts, prompt)).target().request
        head, sep, body = request.partition(b"\r\n\r\n")
        if ours:
            head += b"\r\nX-Request-Id: " + source.encode() + b"-"
        out.append((head, sep + body))
    return out
