"""Service-level objectives of an LLM load (``--slo ttft=500ms,itl=50ms``), parsed and checked.

``Slo`` holds the bounds a request must meet to count towards goodput, in integer microseconds:

- ``ttft``: time to the first content chunk, from the intended send (= the send in closed loop):
  the wait a user of an open-loop schedule sees. A request with no content chunk misses it.
- ``itl``: the request's *largest* gap between consecutive content chunks (one slow gap is a
  stall a reader sees, whatever the mean). A request of one chunk has no gap and meets it.
- ``tpot``: the request's time per output token after the first (``stats.llm``'s TPOT). A
  request of fewer than two tokens has none and meets it.
- ``e2e``: from the intended send to the end of the stream.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from kfp_bench.errors import ConfigError

#: Unit -> microseconds.
UNITS = {"us": 1, "µs": 1, "ms": 1_000, "s": 1_000_000}
_VALUE = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)(us|µs|ms|s)$")
_FIX = "give key=value pairs joined by commas, e.g. ttft=500ms,itl=50ms,tpot=30ms,e2e=5s"


@dataclass(frozen=True, slots=True)
class Slo:
    """Bounds in µs; None: not asked for. An empty ``Slo()`` makes every completed request good."""

    ttft: int | None = None
    itl: int | None = None
    tpot: int | None = None
    e2e: int | None = None

    @classmethod
    def parse(cls, text: str | None, name: str = "--slo") -> Slo:
        """Read ``ttft=500ms,itl=50ms,tpot=30ms,e2e=5s`` (units us, ms, s; any subset of the
        keys; empty: none). Raises one ``ConfigError`` naming the input (``name``: a flag is
        shown as ``--slo 'TEXT'``, any other name as ``NAME='TEXT'``), the text and the fix."""
        if not text or not text.strip():
            return cls()
        given = f"{name} {text!r}" if name.startswith("-") else f"{name}={text!r}"
        keys = [f.name for f in fields(cls)]
        found: dict[str, int] = {}
        for part in text.split(","):
            key, eq, value = (s.strip() for s in part.partition("="))
            if key not in keys or not eq:
                what = f"unknown key {key!r}" if eq else f"{part.strip()!r} is not key=value"
                raise ConfigError(f"{given}: {what} (keys: {', '.join(keys)}); {_FIX}")
            if key in found:
                raise ConfigError(f"{given}: {key} is given twice; give it once")
            m = _VALUE.match(value)
            us = round(float(m[1]) * UNITS[m[2]]) if m else 0
            if us <= 0:
                raise ConfigError(
                    f"{given}: {key}={value!r} is not a positive time with a unit "
                    f"(us, ms or s, e.g. {key}=500ms); {_FIX}"
                )
            found[key] = us
        return cls(**found)

    def __str__(self) -> str:
        """The text ``parse`` reads back to this ``Slo``, each bound in the largest unit that
        holds it exactly (so nothing is rounded)."""
        return ",".join(f"{k}={_text(v)}" for k, v in self.as_dict().items())

    def as_dict(self) -> dict[str, int]:
        """The bounds given, in µs."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}


def _text(us: int) -> str:
    for unit in ("s", "ms"):
        if us % UNITS[unit] == 0:
            return f"{us // UNITS[unit]}{unit}"
    return f"{us}us"
