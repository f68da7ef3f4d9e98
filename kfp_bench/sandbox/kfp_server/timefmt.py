"""RFC3339 timestamps as the KFP API writes them (UTC, ``Z``, microseconds), from epoch seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(t: float) -> str:
    """``2026-01-02T03:04:05.678901Z`` for epoch seconds ``t``."""
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(text: str) -> float:
    """Epoch seconds of an RFC3339 timestamp; raise ValueError naming it otherwise."""
    try:
        value = datetime.fromisoformat(str(text).replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC3339 timestamp") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()
