"""The fault modes and per-request settings of the local LLM server (``llm_server``).

This module owns what one request is to get: its token timing and its fault, read from the
server's options and the request's ``X-Llm-*`` headers, checked before anything is sent.

A fault is written ``NAME[:key=value,...]``, in ``X-Llm-Fault`` (one request) or ``--fault`` (every
request, with probability ``--fault-rate``, seeded by ``--seed``); ``X-Llm-Fault: none`` exempts a
request from the server-wide one. ``k`` counts content tokens sent before the fault:

- ``stall:after=k,for=s``: send k tokens, then nothing for s seconds, then the rest on their
  schedule shifted by s; without ``for`` (or ``for=inf``) the stream never goes on and ends only
  when the client closes it.
- ``drop:after=k``: send k tokens, then close the connection without ending the chunked body.
- ``429:retry_after=s``: answer 429 at once with an OpenAI error body and ``Retry-After: s``.
- ``error:after=k``: send k tokens, then an SSE error event ``data: {"error": {...}}``, then
  ``data: [DONE]``.
- ``no-usage``: leave out the usage chunk although ``stream_options.include_usage`` asked for it.
- ``wrong-usage:by=n``: the usage chunk's completion_tokens is off by n (default 1; may be < 0).
- ``empty:every=n``: an empty-text chunk (chat: an empty ``content`` delta) before every n-th
  content chunk (default 1: before each).

A whole (non-streaming) answer knows only ``429`` and ``wrong-usage``; the others need a stream.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kfp_bench.errors import ConfigError

#: Each fault's parameters and their defaults (None: required).
FAULTS: dict[str, dict[str, float | None]] = {
    "stall": {"after": None, "for": math.inf},
    "drop": {"after": None},
    "429": {"retry_after": 1.0},
    "error": {"after": None},
    "no-usage": {},
    "wrong-usage": {"by": 1.0},
    "empty": {"every": 1.0},
}
_INTEGRAL = {"after", "by", "every"}


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault mode, parsed: ``name`` a key of ``FAULTS``, ``params`` every parameter's value."""

    name: str
    params: tuple[tuple[str, float], ...] = ()
    spec: str = ""

    def get(self, key: str) -> float:
        return dict(self.params)[key]


def parse_fault(spec: str, where: str = "--fault") -> Fault | None:
    """The fault ``spec`` names (None for "" or "none"); a ConfigError naming ``where`` if bad."""
    spec = spec.strip()
    if spec in ("", "none"):
        return None
    name, _, rest = spec.partition(":")
    known = FAULTS.get(name)
    if known is None:
        raise ConfigError(
            f"llm server: {where}={spec!r}: unknown fault {name!r}; use one of "
            f"{', '.join(FAULTS)} (NAME[:key=value,...]), or none"
        )
    given: dict[str, float] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if key not in known or not eq:
            keys = ", ".join(f"{k}=" for k in known) or "no parameters"
            raise ConfigError(f"llm server: {where}={spec!r}: {name} takes {keys}, not {item!r}")
        given[key] = _number(value, f"{where}={spec!r}: {key}", integral=key in _INTEGRAL)
    params = {**known, **given}
    missing = [k for k, v in params.items() if v is None]
    if missing:
        raise ConfigError(f"llm server: {where}={spec!r}: {name} needs {missing[0]}=N")
    for key, value in params.items():
        if value < 0 and key != "by" or key == "every" and value < 1:
            raise ConfigError(f"llm server: {where}={spec!r}: {key}={value:g} is out of range")
    return Fault(name, tuple(sorted(params.items())), spec)


def _number(text: str, where: str, integral: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if math.isnan(value) or (integral and not value.is_integer()):
        kind = "an integer" if integral else "a number"
        raise ConfigError(f"llm server: {where}={text!r} must be {kind}")
    return value


@dataclass(frozen=True, slots=True)
class Plan:
    """What one request gets, decided when it arrives (times in seconds)."""

    first: float
    gap: float
    tokens: int
    finish: str  # "length" when the request's max_tokens ended it, else "stop"
    fault: Fault | None

    def stall(self) -> tuple[int, float] | None:
        """(after, for) of a stall fault, else None."""
        f = self.fault
        return (int(f.get("after")), f.get("for")) if f and f.name == "stall" else None

    def cut_after(self, name: str) -> int | None:
        """k of a ``drop`` or ``error`` fault called ``name``, else None."""
        f = self.fault
        return int(f.get("after")) if f and f.name == name else None


def header_ms(headers: dict[bytes, bytes], name: str, default_ms: float) -> float:
    """A ``X-Llm-*-Ms`` header in seconds, or ``default_ms``; ConfigError if it is not >= 0.

    ``headers`` has lower-case names; ``name`` is spelt as messages show it.
    """
    raw = headers.get(name.lower().encode())
    if raw is None:
        return default_ms / 1e3
    value = _number(raw.decode("latin-1"), f"header {name}", integral=False)
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"llm server: header {name}={value:g} must be a number >= 0")
    return value / 1e3
