"""Trace replay: a JSONL file of timestamped requests, sent at their own times (open loop).

One JSON object a line: ``offset`` (seconds from the start of the load: the request's intended
send time, ``pacer.TraceSchedule``; latency is corrected from it as at a --rate), and for the LLM
load either ``prompt`` (its text) or ``input_tokens`` (a synthetic prompt of that many words,
as ``prompts.synthetic`` draws them; with a local tokenizer.json, the fewest words that make that
many of its tokens), with optional ``output_tokens`` (or ``max_tokens``). These
are the fields of inference-perf's Azure trace replay (a timestamp, ContextTokens and
GeneratedTokens a line; kubernetes-sigs/inference-perf 7de5ef2,
inference_perf/utils/trace_reader.py ``AzurePublicDatasetReader``) and of vLLM's BurstGPT dataset
(Timestamp, Request tokens, Response tokens), named as kfp-bench's JSONL prompts name them.
Other keys are ignored (a production trace carries more). A prompt's ``input_tokens`` is its
whitespace words, or the tokenizer's count of it (with a server's special tokens). Offsets must
not go back: a trace is replayed in its order. Every bad line is one ``ConfigError`` naming the
file, the line and the fix, raised before anything is sent.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from kfp_bench.errors import ConfigError
from kfp_bench.load.prompts import DEFAULT_OUTPUT_TOKENS, Prompt, draw_words, json_lines, read_text
from kfp_bench.load.tokenizer import counter, words_of_tokens

_FIX = (
    'each line must be a JSON object such as {"offset": 0.5, "prompt": "Hello", '
    '"output_tokens": 64} or {"offset": 0.5, "input_tokens": 128}'
)


def read_trace(
    path: str | Path,
    *,
    prompts: bool = True,
    output_tokens: int = 0,
    seed: int = 0,
    tokenizer: str = "",
) -> tuple[tuple[float, ...], list[Prompt]]:
    """The offsets of a trace file and, with ``prompts``, one ``Prompt`` per line.

    ``output_tokens`` > 0 overrides every line's; ``seed`` seeds the words of ``input_tokens``
    lines; ``tokenizer`` (a local tokenizer.json) sizes and counts the prompts in its tokens.
    Without ``prompts`` (the plain load) only ``offset`` is read.
    """
    path = Path(path)
    text = read_text(path, "trace file", "a JSONL trace")
    rng = np.random.default_rng(seed)
    count = counter(tokenizer) if prompts and tokenizer else None
    offsets: list[float] = []
    out: list[Prompt] = []
    for no, doc in json_lines(text, f"trace file {path}", _FIX):
        where = f"trace file {path} line {no}"
        if not isinstance(doc, dict):
            raise ConfigError(f"{where}: not a JSON object; {_FIX}")
        offset = doc.get("offset")
        if not _number(offset) or offset < 0:
            raise ConfigError(f"{where}: offset={offset!r}; give the seconds from the start of "
                              "the load, a number of 0 or more")  # fmt: skip
        if offsets and offset < offsets[-1]:
            raise ConfigError(f"{where}: offset {offset:g} comes before the line above's "
                              f"({offsets[-1]:g}); sort the file by offset")  # fmt: skip
        offsets.append(float(offset))
        if prompts:
            out.append(_prompt(where, doc, output_tokens, rng, count))
    if not offsets:
        raise ConfigError(f"trace file {path}: no requests in it; {_FIX}")
    return tuple(offsets), out


def _prompt(where: str, doc: dict, output_tokens: int, rng: np.random.Generator, count) -> Prompt:
    text, n = doc.get("prompt"), doc.get("input_tokens")
    if (text is None) == (n is None):
        raise ConfigError(f"{where}: give prompt (text) or input_tokens (a count), one of them")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise ConfigError(f"{where}: prompt={text!r}; give it text")
    if n is not None and not _count(n):
        raise ConfigError(f"{where}: input_tokens={n!r}; give a whole number of 1 or more")
    out = doc.get("output_tokens", doc.get("max_tokens", DEFAULT_OUTPUT_TOKENS))
    if not _count(out):
        raise ConfigError(f"{where}: output_tokens={out!r}; give a whole number of 1 or more, "
                          "or leave it out")  # fmt: skip
    if text is None:
        draw = draw_words(rng)
        text = words_of_tokens(n, draw, count) if count else " ".join(draw(n))
    return Prompt(text, count(text) if count else len(text.split()), output_tokens or out)


def _number(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 1
