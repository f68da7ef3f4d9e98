"""RFC3339 timestamps as the KFP API writes them: whole seconds, UTC, ``Z``, no fraction.

KFP's API server stores every time as whole seconds (``*InSec`` columns; ``time.Now().Unix()``)
and answers ``timestamppb.New(time.Unix(x, 0))`` (kubeflow/pipelines 7b70c7b95f
``backend/src/apiserver/server/api_converter.go:1599-1603``), which grpc-gateway's protojson
writes with no fractional part; an unset time is the epoch, ``1970-01-01T00:00:00Z``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_s() -> int:
    """The time as the API server stores it: Go's ``time.Now().Unix()``, whole seconds."""
    return int(time.time())


def rfc3339(t: float | None) -> str:
    """``2026-01-02T03:04:05Z`` for epoch seconds ``t`` (floored, as ``Unix()`` truncates);
    None is the epoch, as KFP writes a time it never set."""
    whole = int(t // 1) if t else 0
    return datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float:
    """Epoch seconds of an RFC3339 timestamp; raise ValueError naming it otherwise."""
    try:
        value = datetime.fromisoformat(str(text).replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r} is not an RFC3339 timestamp") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.timestamp()
