"""The checks of an LLM load made before it sends: the model the server serves, and the context.

``preflight`` reads ``<base>/v1/models`` once: with no model given it takes the one listed, with
one given it must be listed; and when the entry reports ``max_model_len`` (vLLM's ``ModelCard``),
the longest prompt plus its ``max_tokens`` must fit. Each failure is one ``ConfigError`` naming
the URL and the fix, raised before the first request, so a wrong model or base never runs a whole
``-z`` against 404s. The module never prints: a skipped check comes back as a note to show.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, replace

from kfp_bench.errors import ConfigError
from kfp_bench.load.openai import LlmOptions
from kfp_bench.load.options import Target
from kfp_bench.redact import public_url, scrub

#: The stand-in model name until the server's own is read (``preflight``, model not given).
UNSET = "(from /v1/models)"
#: Bytes of an unreadable answer quoted in the error.
SHOWN_BYTES = 120


@dataclass(frozen=True, slots=True)
class Served:
    """One model a server lists: its name, and its context length when the server says it."""

    name: str
    max_model_len: int | None = None


@dataclass(frozen=True, slots=True)
class Preflight:
    """What the checks found: the options to run (their model the served one), the model's
    entry (None when the check was skipped) and a note for the reader (a skipped check)."""

    opts: LlmOptions
    served: Served | None
    note: str = ""


def preflight(
    opts: LlmOptions, prompts, *, model_given: bool, check: bool = True, flag: str = "--model"
) -> Preflight:
    """Check ``opts`` and the ``prompts`` they send against the server's model list before any
    request is sent: the model asked for when ``model_given``, else the one listed. ``check``
    False skips the list when a model is given (a server without a models route; the note says
    so); ``flag`` names the model's input in messages ("--model", "llm_model").

    Raises:
        ConfigError: the list cannot be read, does not hold the model (or holds several and
            none was given), or the longest prompt does not fit the model's context.
    """
    if model_given and not check:
        note = f"{flag} {opts.model} not checked against the server's /v1/models (as asked)"
        return Preflight(opts, None, note)
    listed = list_models(opts, flag, model_given)
    served = _pick(listed, opts, flag, model_given)
    opts = replace(opts, model=served.name)
    check_context(served, opts, prompts)
    return Preflight(opts, served)


def _pick(listed: list[Served], opts: LlmOptions, flag: str, model_given: bool) -> Served:
    url = public_url(models_url(opts))
    names = ", ".join(m.name for m in listed) or "none"
    if model_given:
        for m in listed:
            if m.name == opts.model:
                return m
        skip = f", or {_SKIP} for a server that serves models it does not list"
        raise ConfigError(
            f"{flag} {opts.model}: not among the models {url} lists ({names}); give one of "
            f"them{skip if _cli(flag) else ''}"
        )
    if len(listed) != 1:
        raise ConfigError(f"{flag} not given and {url} lists {names}; give {flag}")
    return listed[0]


#: How to skip the check, in the CLI's messages.
_SKIP = "--no-model-check"


def models_url(opts: LlmOptions) -> str:
    return opts.url.rstrip("/") + "/v1/models"


def list_models(opts: LlmOptions, flag: str = "--model", model_given: bool = False) -> list[Served]:
    """The models ``<base>/v1/models`` lists, read as the load would connect (its Host, -H
    headers, credentials and TLS settings, no proxy). ``ConfigError`` naming the URL, the status
    and the first bytes of an answer that is not an OpenAI model list."""
    url = models_url(opts)
    shown = public_url(url)
    status, body = _get(opts, url, flag, model_given)
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if status == 200 and isinstance(doc, dict) and isinstance(doc.get("data"), list):
        return [_entry(m, shown) for m in doc["data"]]
    if status == 200 and isinstance(doc, dict) and isinstance(doc.get("models"), list):
        raise ConfigError(_kserve_v1(opts, doc["models"], shown))
    why = f"HTTP {status}" + (f", {_first_bytes(body)}" if body else ", an empty body")
    fix = _fix(flag, model_given, status)
    raise ConfigError(f"{shown} answered {why}, not an OpenAI model list; {fix}")


def _get(opts: LlmOptions, url: str, flag: str, model_given: bool) -> tuple[int, bytes]:
    headers = _headers(opts, url)
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=opts.ssl_context())
    )  # the load connects directly: so does the check
    # credentials in the URL travel as the load sends them (Authorization, from _headers)
    req = urllib.request.Request(public_url(url), headers=headers, method="GET")
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status, resp.read(1 << 20)
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, exc.read(SHOWN_BYTES * 2)
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        lead = "" if model_given else f"{flag} not given and "
        raise ConfigError(
            f"{lead}{public_url(url)} could not be read ({scrub(str(reason))}); check the URL "
            f"(the base, without /v1) and that the server is up{_or_skip(flag, model_given)}"
        ) from None


def _headers(opts: LlmOptions, url: str) -> dict[str, str]:
    """The headers the load sends (Host, User-Agent, credentials, -H), from its own request
    builder, for a GET of ``url``."""
    get = replace(opts, url=url, method="GET", body=b"", accept="application/json")
    head = Target.build(get).request.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    pairs = (line.split(":", 1) for line in head[1:])
    return {k.strip(): v.strip() for k, v in pairs if k.strip().lower() != "content-length"}


def _entry(m, url: str) -> Served:
    """A ``data`` entry: its ``id``, and ``max_model_len`` when a positive integer (vLLM's
    ``ModelCard``, vllm/entrypoints/openai/engine/protocol.py: ``max_model_len: int | None``;
    KServe's own /openai list builds its entries without it, kserve/kserve@aaac4e29
    python/kserve/kserve/protocol/rest/openai/endpoints.py lines 229-249)."""
    if not isinstance(m, dict) or not isinstance(m.get("id"), str):
        raise ConfigError(f"{url}: an entry of its model list has no id ({_first_bytes(m)})")
    n = m.get("max_model_len")
    ok = isinstance(n, int) and not isinstance(n, bool) and n > 0
    return Served(m["id"], n if ok else None)


def _kserve_v1(opts: LlmOptions, models: list, url: str) -> str:
    """KServe's V1 list, ``{"models": [names]}``, served at the root's ``/v1/models``
    (kserve/kserve@aaac4e29 python/kserve/kserve/protocol/rest/v1_endpoints.py lines 38-44,
    route at line 155 under V1_ROUTE_PREFIX "/v1"): its OpenAI routes are under ``/openai``
    (OPENAI_ROUTE_PREFIX, python/kserve/kserve/protocol/rest/openai/endpoints.py line 40)."""
    base = opts.url.rstrip("/")
    names = ", ".join(str(m) for m in models) or "none"
    return (
        f"{url} answered KServe's V1 model list (models: {names}), not the OpenAI one: KServe "
        f"serves the OpenAI routes under /openai; use {public_url(base)}/openai as the URL"
    )


def _fix(flag: str, model_given: bool, status: int) -> str:
    # A 404 here is most often a wrong base (every OpenAI-compatible server this project met
    # serves /v1/models: vLLM, KServe's /openai, transformers serve, llama-cpp-python), and a
    # load against a wrong base would run its whole length against 404s: it is an error, and
    # skipping the check is the user's explicit choice.
    fix = "check the URL (the base, without /v1: http://host/openai for KServe)"
    if status in (401, 403):
        fix = "check the credentials (-H 'Authorization: ...') and the URL"
    return fix + _or_skip(flag, model_given)


def _cli(flag: str) -> bool:
    """The model is named by a command-line flag: --no-model-check is there to skip the check
    (the pipeline's steps have no such parameter: its first step reads the list too)."""
    return flag.startswith("--")


def _or_skip(flag: str, model_given: bool) -> str:
    if not _cli(flag):
        return ""
    if model_given:
        return f"; {_SKIP} skips this check for a server without a models route"
    return f"; or give {flag} and {_SKIP} for a server without a models route"


def _first_bytes(body) -> str:
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    text = body[:SHOWN_BYTES].decode("utf-8", "replace")
    more = "..." if len(body) > SHOWN_BYTES else ""
    return f"starting {scrub(text)!r}{more}"


def check_context(served: Served, opts: LlmOptions, prompts) -> None:
    """The longest request (prompt tokens plus max_tokens) within the model's ``max_model_len``
    when the server reports one. The prompt's tokens are a tokenizer's count when one was
    given, else the synthetic prompt's target length in words; a chat template adds tokens this
    does not count, so a prompt that passes can still be refused, but one that fails would be."""
    limit = served.max_model_len
    if limit is None or not prompts:
        return

    def need(p) -> int:
        return int(p.input_tokens or 0) + int(opts.max_tokens or p.output_tokens)

    i, longest = max(enumerate(prompts), key=lambda ip: need(ip[1]))
    if need(longest) > limit:
        over = sum(1 for p in prompts if need(p) > limit)
        asked = opts.max_tokens or longest.output_tokens
        raise ConfigError(
            f"the longest prompt ({i + 1} of {len(prompts)}) needs {need(longest)} tokens "
            f"({longest.input_tokens} in the prompt + max_tokens {asked}), beyond the {limit} "
            "tokens of model "
            f"{served.name}'s context (max_model_len, {public_url(models_url(opts))}); {over} "
            "prompt(s) exceed it: shorten --input-tokens or --max-tokens/--output-tokens"
        )
