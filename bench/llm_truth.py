"""The truth side of ``bench/llm_peers.py``: the local tokenizer the peers load, and the figures
computed from ``kfp-bench llm-server``'s truth log (TTFT, gaps, scheduling lag) and from a tool's
own samples against them. Pure functions over lists and files: ``tests/bench`` tests them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

#: The server's content tokens are ``t0``, `` t1``, ... (``llm_server_http.token_text``): the
#: tokenizer knows these words, so a tool that counts the generated text's tokens gets 64 too.
SERVER_TOKENS = 4096


def build_tokenizer(folder: str | Path, vocab: tuple[str, ...] | None = None) -> Path:
    """Write a word-level Hugging Face tokenizer over ``vocab`` (default: the prompts' ``VOCAB``)
    and the server's token words to ``folder``, loadable offline by ``AutoTokenizer``.

    ``tokenizer_config.json`` names ``PreTrainedTokenizerFast``, so transformers needs no model
    class; ``config.json`` is there for tools that read the model type before the tokenizer.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    if vocab is None:
        from kfp_bench.load.prompts import VOCAB as vocab
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    specials = ["[UNK]", "<s>", "</s>"]
    words = specials + list(dict.fromkeys(vocab)) + [f"t{i}" for i in range(SERVER_TOKENS)]
    ids = {w: i for i, w in enumerate(dict.fromkeys(words))}
    tok = Tokenizer(models.WordLevel(vocab=ids, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tok.save(str(folder / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "unk_token": "[UNK]",
        "bos_token": "<s>",
        "eos_token": "</s>",
        "pad_token": "</s>",
        "model_max_length": 131072,
        "clean_up_tokenization_spaces": False,
    }
    (folder / "tokenizer_config.json").write_text(json.dumps(config, indent=1))
    specials_map = {k: config[k] for k in ("unk_token", "bos_token", "eos_token", "pad_token")}
    (folder / "special_tokens_map.json").write_text(json.dumps(specials_map))
    model = {"model_type": "gpt2", "vocab_size": len(ids), "max_position_embeddings": 131072}
    (folder / "config.json").write_text(json.dumps(model))
    return folder


def quantile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) by the nearest rank of the sorted values; None when empty."""
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


def ok_requests(requests: dict[str, dict]) -> list[dict]:
    """The truth log's requests that streamed every token (outcome ok), by arrival: the tools
    report their completed requests, and a run's end cuts the streams still open."""
    done = [r for r in requests.values() if r.get("outcome") == "ok" and r.get("tokens")]
    return sorted(done, key=lambda r: r["arrived"])


def truth_ttfts(requests: list[dict]) -> list[float]:
    """Seconds from each request's arrival (last byte parsed) to its first token's send."""
    return [r["tokens"][0] - r["arrived"] for r in requests]


def truth_gaps(requests: list[dict]) -> list[float]:
    """Every gap between two consecutive tokens of one stream, pooled (s)."""
    return [b - a for r in requests for a, b in zip(r["tokens"], r["tokens"][1:], strict=False)]


def sched_lag(arrivals: list[float], rate: float) -> list[float]:
    """Each arrival's lateness against a constant schedule from the first one:
    ``arrival_i - (arrival_0 + i / rate)`` over the arrivals in order (s)."""
    a = sorted(arrivals)
    return [t - (a[0] + i / rate) for i, t in enumerate(a)] if a else []


def pair(
    tool: list[tuple[float, float]], truth: list[dict], max_skew_s: float = 0.05
) -> tuple[list[float], int]:
    """Per-request TTFT errors: ``tool`` holds (send time, ttft s) per request, on the truth
    log's clock (``perf_counter``: one machine, the same CLOCK_MONOTONIC), ``truth`` the log's
    requests. Returns the errors (tool's TTFT minus the truth's) and how many of the tool's
    requests found no partner.

    The tools send no request id the server logs, so each request pairs with the unpaired truth
    request that arrived after its send (within ``max_skew_s``; 1 ms early is allowed for clock
    reads taken just after the send) and whose first token matches best: the arrival's distance
    from the send plus the first token's distance from the tool's. Two requests sent within a
    fraction of a millisecond of each other can swap; their truths differ by about as much.
    """
    free = sorted(truth, key=lambda r: r["arrived"])
    errors, unpaired = [], 0
    for send, ttft in sorted(tool):
        best, cost = None, None
        for r in free:
            if r["arrived"] < send - 0.001:
                continue
            if r["arrived"] > send + max_skew_s:
                break
            c = (r["arrived"] - send) + abs(r["tokens"][0] - (send + ttft))
            if cost is None or c < cost:
                best, cost = r, c
        if best is None:
            unpaired += 1
            continue
        free.remove(best)
        errors.append(ttft - (best["tokens"][0] - best["arrived"]))
    return errors, unpaired


def epoch_to_log(t: float, header: dict) -> float:
    """An epoch time (``time.time()``) on the truth log's ``perf_counter`` clock, by its anchor."""
    a = header["anchor"]
    return t - a["epoch"] + a["perf_counter"]


def errors_ms(tool: list[float], truth: list[float], qs=(0.5, 0.99)) -> dict:
    """Distribution comparison: the tool's quantile minus the truth's, in ms, per ``qs``."""
    out = {}
    for q in qs:
        a, b = quantile(tool, q), quantile(truth, q)
        out[f"p{round(q * 100)}"] = None if a is None or b is None else round((a - b) * 1e3, 3)
    return out


def abs_quantiles_ms(errors: list[float], qs=(0.5, 0.99)) -> dict:
    """Quantiles of per-request errors' magnitude, in ms."""
    return {f"p{round(q * 100)}": round(quantile([abs(e) for e in errors], q) * 1e3, 3) for q in qs}
