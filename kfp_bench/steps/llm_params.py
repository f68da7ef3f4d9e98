"""The meta-pipeline's LLM load parameters (``BenchParams.llm_*``): their checks and the streaming
load's options they become.

``check_llm`` is run by ``BenchParams.check`` in the first step, whose pod installs the ``kfp``
extra only: everything here is the standard library (the prompts module needs numpy, so a length
distribution is checked by its text here, as ``kfp_bench.load.prompts.Dist.parse`` reads it; a
test keeps the two in agreement). ``llm_options``, ``llm_slo`` and ``llm_prompts`` are what an
llm_load step (the ``load`` extra) builds from the checked parameters.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from urllib.parse import urlsplit

from kfp_bench.errors import ConfigError
from kfp_bench.load.openai import ENDPOINTS, MULTI_TURN_FORM, LlmOptions, parse_multi_turn
from kfp_bench.load.stages import total_s
from kfp_bench.redact import public_url, scrub
from kfp_bench.stats.slo import Slo
from kfp_bench.steps.checks import (
    MAX_DURATION_S,
    MAX_LOAD_WORKERS,
    bad,
    positive,
    positive_int,
    translated,
)
from kfp_bench.steps.load_params import staged

#: The forms of a length distribution (kfp_bench.load.prompts.DIST_FORMS).
DIST_FORMS = (
    "fixed:N, uniform:LO,HI, normal:MEAN,SD or lognormal:MEDIAN,SIGMA (e.g. uniform:64,256)"
)
#: Distinct synthetic prompts a load worker draws; its requests cycle through them.
PROMPTS_PER_WORKER = 256
#: The largest tokenizer.json an LLM load worker fetches (the largest models' are ~20 MB).
TOKENIZER_MAX_BYTES = 64 << 20
_NUMBER = r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*"
_DIST = re.compile(rf"\s*(?:(fixed|uniform|normal|lognormal)\s*:)?{_NUMBER}(?:,{_NUMBER})?")


def check_dist(name: str, text) -> None:
    """A length distribution's text as ``Dist.parse`` takes it; ``ConfigError`` naming ``name``."""
    m = _DIST.fullmatch(text) if isinstance(text, str) else None
    kind = (m[1] or "fixed") if m else ""
    if m and (m[1] is None) and m[3] is not None:
        m = None  # a bare pair of numbers names no distribution
    if m is None or (kind == "fixed") != (m[3] is None):
        raise bad(name, text, f"use {DIST_FORMS}")
    a, b = float(m[2]), float(m[3] or 0)
    if kind in ("fixed", "uniform"):
        if not (a.is_integer() and b.is_integer()) or a < 1 or (kind == "uniform" and b < a):
            raise bad(name, text, f"whole numbers of tokens from 1, HI not below LO; {DIST_FORMS}")
    elif a < 1:
        raise bad(name, text, f"the centre must be 1 or more; {DIST_FORMS}")


def check_llm(p, fetch: bool = True) -> None:
    """Check the LLM load's parameters of ``p`` (a ``BenchParams``) with run_llm on
    (``fetch``: unused, the tokenizer is fetched by the workers)."""
    if not p.run_llm:
        return
    if p.llm_url:
        parts, shown = urlsplit(p.llm_url), public_url(p.llm_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise bad("llm_url", shown, "give an http(s) OpenAI base URL, e.g. http://host/openai")
        if parts.path.rstrip("/").endswith(("/v1", *ENDPOINTS.values())):
            raise bad(
                "llm_url", shown, "give the base URL without /v1 (e.g. http://host/openai); "
                "llm_endpoint picks the route",
            )  # fmt: skip
    elif not p.isvc:
        raise bad(
            "llm_url", "", "run_llm is on and there is no target: give an OpenAI base URL (KServe: "
            "http://NAME-predictor.NAMESPACE.svc.cluster.local/openai), or an LLM isvc to deploy",
        )  # fmt: skip
    if p.llm_endpoint not in ENDPOINTS:
        raise bad("llm_endpoint", p.llm_endpoint, f"give {' or '.join(ENDPOINTS)}")
    positive("llm_duration_sec", p.llm_duration_sec, MAX_DURATION_S)
    positive_int("llm_workers", p.llm_workers, MAX_LOAD_WORKERS)
    positive_int("llm_concurrency", p.llm_concurrency, 10000)
    if p.llm_concurrency < p.llm_workers:
        raise bad(
            "llm_concurrency", p.llm_concurrency,
            f"give at least one stream per LLM load worker (llm_workers={p.llm_workers})",
        )  # fmt: skip
    r = p.llm_rate
    if not (isinstance(r, int | float) and not isinstance(r, bool) and 0 <= r < float("inf")):
        raise bad("llm_rate", r, "give requests/s >= 0 (0: closed loop at llm_concurrency)")
    stages, w = llm_stages(p), p.llm_warmup_sec
    long = total_s(stages) if stages else p.llm_duration_sec
    if not (isinstance(w, int | float) and not isinstance(w, bool) and 0 <= w < long):
        what = "the sum of llm_stages" if stages else "llm_duration_sec"
        raise bad("llm_warmup_sec", w, f"give seconds from 0 to below {what} ({long:g})")
    check_dist("llm_input_tokens", p.llm_input_tokens)
    check_dist("llm_output_tokens", p.llm_output_tokens)
    check_tokenizer(p.llm_tokenizer)
    llm_slo(p)
    llm_multi_turn(p)
    check_find_max(p)
    # What each worker runs (the largest share), checked as the engine will check it.
    opts = llm_options(p, url=p.llm_url or "http://isvc.example/openai", model=p.llm_model or "-")
    translated(lambda: opts.share(0, p.llm_workers).validate())


@dataclass(frozen=True)
class LlmLoad:
    """The LLM load's parameters (the pipeline's, ``steps.params.BenchParams``).

    Attributes:
        run_llm: run the streaming LLM load (kfp-bench llm) on llm_url, instead of or beside the
            inference load; its steps (llm_load per worker, report_llm) run only when on.
        llm_url: the OpenAI-compatible base URL to stream from, without /v1 (KServe:
            http://NAME-predictor.NAMESPACE.svc.cluster.local/openai; vLLM: http://host:8000);
            empty with an isvc: the deployed InferenceService's /openai.
        llm_endpoint: completions (/v1/completions) or chat (/v1/chat/completions).
        llm_model: the model name requests ask for; empty: the one model llm_url's /v1/models
            lists, or with an isvc the name it serves.
        llm_concurrency: streams at once across all LLM load workers (closed loop).
        llm_rate: open-loop total requests/s across the LLM load workers, TTFT also from the
            intended send; 0 for closed loop at llm_concurrency.
        llm_stages: the LLM load in stages, as stages is for the predict load (kfp-bench llm
            --stages); leave llm_rate at 0 and llm_duration_sec at its default. Empty: none.
        llm_multi_turn: chat sessions, TURNS[,THINK_S] (kfp-bench llm --multi-turn), e.g. 5,2:
            each of llm_concurrency streams runs sessions of 5 turns, each turn carrying the
            history, 2 s between turns (with llm_rate: sessions started at that rate); needs
            llm_endpoint chat. Empty: none.
        llm_duration_sec: seconds of LLM load.
        llm_input_tokens: the synthetic prompts' length in words: fixed:N, uniform:LO,HI,
            normal:MEAN,SD or lognormal:MEDIAN,SIGMA.
        llm_output_tokens: the requests' max_tokens, drawn as llm_input_tokens is.
        llm_slo: goodput bounds, e.g. ttft=500ms,itl=50ms,tpot=30ms,e2e=10s; empty: every
            completed request is good.
        llm_warmup_sec: requests sent in this first part of the LLM load count in no figure.
        llm_find_max: rate or concurrency: instead of one load, search for the highest level at
            which llm_slo holds for 90% of the requests (kfp-bench llm --find-max), probes of
            llm_duration_sec each from 1 req/s or 1 stream; needs llm_slo and one LLM load
            worker. The report gives the last passing and first failing level and every probe;
            its figures are the last passing probe's. Empty: one load.
        llm_workers: pods streaming the LLM load in parallel; their histograms are merged.
        llm_tokenizer: the model's tokenizer.json, an http(s) URL (fetched once by each LLM
            load worker) or a path its pod can read: a server that streams no usage has its
            tokens counted with it; without it they are unknown.
    """

    run_llm: bool = False
    llm_url: str = ""
    llm_endpoint: str = "completions"
    llm_model: str = ""
    llm_concurrency: int = 16
    llm_rate: float = 0.0
    llm_stages: str = ""
    llm_multi_turn: str = ""
    llm_duration_sec: float = 30.0
    llm_input_tokens: str = "fixed:128"
    llm_output_tokens: str = "fixed:64"
    llm_slo: str = ""
    llm_warmup_sec: float = 0.0
    llm_find_max: str = ""
    llm_workers: int = 1
    llm_tokenizer: str = ""

    #: The parameters read only beside a switch (any one on): ``kfp_bench.needs``.
    READ_BESIDE = {
        "llm_url llm_endpoint llm_model llm_concurrency llm_rate llm_stages llm_multi_turn "
        "llm_duration_sec llm_input_tokens llm_output_tokens llm_slo llm_warmup_sec llm_workers "
        "llm_tokenizer llm_find_max": "run_llm",
    }
    #: What ``kfp-bench submit --help`` calls the group.
    TITLE = "the LLM load"

    check_group = check_llm  # its own check, run by BenchParams.check


def check_tokenizer(value) -> None:
    """llm_tokenizer's text: empty, an http(s) URL with a host, or a path (read by the worker's
    pod, not this one's: checked there)."""
    if not isinstance(value, str):
        raise bad(
            "llm_tokenizer", value, "give a tokenizer.json's http(s) URL or path, or leave it empty"
        )
    parts = urlsplit(value.strip())
    if parts.scheme in ("http", "https") and not parts.netloc:
        raise bad("llm_tokenizer", value, "the URL has no host; e.g. https://host/tokenizer.json")
    if parts.scheme and parts.scheme not in ("http", "https"):
        raise bad(
            "llm_tokenizer", value,
            "give an http(s) URL of the tokenizer.json, or a path the LLM load pod can read",
        )  # fmt: skip


def local_tokenizer(value: str, folder: str) -> str:
    """The local path of llm_tokenizer: a URL is fetched once into ``folder`` (at most
    ``TOKENIZER_MAX_BYTES``); ``ConfigError`` naming the parameter when it cannot be. The URL
    is named without its userinfo and query (a presigned URL's signature is a credential)."""
    value = value.strip()
    parts = urlsplit(value)
    url = parts.scheme in ("http", "https")
    shown = public_url(parts._replace(query="").geturl()) + ("?..." if parts.query else "")
    try:
        import tokenizers  # noqa: F401 (the counting needs it: no use fetching without it)
    except ImportError:
        raise bad(
            "llm_tokenizer", shown if url else value, "this LLM load pod has no tokenizers "
            "package (the step installs kfp-bench's llm extra: an image built without it?); "
            "leave llm_tokenizer empty (tokens unknown where the server sends no usage)",
        ) from None  # fmt: skip
    if not url:
        return value
    try:
        with urllib.request.urlopen(value, timeout=60) as resp:  # noqa: S310 (http(s) only)
            data = resp.read(TOKENIZER_MAX_BYTES + 1)
    except (OSError, ValueError) as exc:
        why = f"HTTP {exc.code}" if isinstance(exc, urllib.error.HTTPError) else str(exc)
        fix = f"could not be fetched ({scrub(why)}); give a URL the LLM load pod can reach"
        raise bad("llm_tokenizer", shown, fix) from None
    if len(data) > TOKENIZER_MAX_BYTES:
        fix = f"more than {TOKENIZER_MAX_BYTES:,} bytes: not a tokenizer.json; give the model's"
        raise bad("llm_tokenizer", shown, fix)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "tokenizer.json")
    with open(path, "wb") as f:
        f.write(data)
    return path


def llm_slo(p) -> Slo:
    """The goodput bounds of llm_slo, parsed (``Slo.parse``), a bad one named as the pipeline's
    parameter: the first step's check and each LLM load worker read it here."""
    return Slo.parse(p.llm_slo, name="pipeline parameter llm_slo")


#: llm_find_max's axes (``kfp_bench.load.llm_find.AXES``: its module needs the load extra).
FIND_AXES = ("rate", "concurrency")


def check_find_max(p) -> None:
    """llm_find_max beside the parameters a search needs or sets itself, each named."""
    name, value = "llm_find_max", p.llm_find_max
    if not value:
        return
    if value not in FIND_AXES:
        raise bad(name, value, "give rate or concurrency, or leave it empty for one load")
    if not p.llm_slo:
        raise bad(name, value, "a search needs the bounds a good request meets: give llm_slo, "
                  "e.g. ttft=500ms")  # fmt: skip
    if p.llm_workers != 1:
        raise bad(name, value, "each probe's level follows the last one's result, which one "
                  "pod decides: set llm_workers to 1")  # fmt: skip
    if p.llm_rate or p.llm_stages:
        raise bad(name, value, "the search picks each probe's level: leave llm_rate at 0 and "
                  "llm_stages empty")  # fmt: skip


def llm_stages(p) -> tuple:
    """The stages of llm_stages, checked (empty: none): beside llm_rate and llm_duration_sec as
    ``load_params.staged`` says."""

    return staged(p, "llm_stages", p.llm_stages, "llm_rate", p.llm_rate, "llm_duration_sec",
                  p.llm_duration_sec)  # fmt: skip


def llm_multi_turn(p) -> dict:
    """The ``LlmOptions`` fields of llm_multi_turn (none when empty), checked beside the
    parameters it cannot combine with, each named."""
    if not p.llm_multi_turn:
        return {}
    name, value = "llm_multi_turn", p.llm_multi_turn
    try:
        turns, think = parse_multi_turn(value)
    except ConfigError:
        raise bad(name, value, f"give {MULTI_TURN_FORM}") from None
    if p.llm_endpoint != "chat":
        raise bad(name, value, "a session's history is chat messages; set llm_endpoint to chat")
    if p.llm_stages:
        raise bad(name, value, "sessions start one per llm_concurrency stream or at llm_rate; "
                  "leave llm_stages empty")  # fmt: skip
    if p.llm_tokenizer:
        raise bad(name, value, "a turn's prompt tokens come from the server's usage only; leave "
                  "llm_tokenizer empty")  # fmt: skip
    return {"turns": turns, "think_time": think}


def llm_duration(p) -> float:
    """How long the LLM load lasts: the sum of llm_stages, else llm_duration_sec."""
    stages = llm_stages(p)
    return total_s(stages) if stages else p.llm_duration_sec


def llm_options(p, *, url: str = "", model: str = "", tokenizer: str = ""):
    """The streaming load's ``LlmOptions`` for all LLM workers together (``share`` splits them):
    ``url`` and ``model`` default to llm_url and llm_model; ``tokenizer`` is llm_tokenizer's
    local path (``local_tokenizer``)."""
    stages = llm_stages(p)
    return LlmOptions(
        tokenizer=tokenizer,
        url=url or p.llm_url,
        endpoint=p.llm_endpoint,
        model=model or p.llm_model,
        duration=total_s(stages) if stages else p.llm_duration_sec,
        concurrency=p.llm_concurrency,
        rate=p.llm_rate,
        stages=stages,
        workers=1,
        **llm_multi_turn(p),
    )


def llm_prompts(p, worker: int) -> list:
    """Worker ``worker``'s synthetic prompts: seeded by its index, so that two workers do not
    send the same prompts (a server's prefix cache would answer the second from the first)."""
    from kfp_bench.load.prompts import Dist, synthetic  # numpy: the load extra's

    inp, out = Dist.parse(p.llm_input_tokens), Dist.parse(p.llm_output_tokens)
    return synthetic(PROMPTS_PER_WORKER, inp, out, seed=worker)
