"""The one test of a URL the user gives for an HTTP endpoint: http(s)://HOST[:PORT][/PATH]."""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit


def http_parts(url: str) -> SplitResult | None:
    """``url``'s parts when it is http or https with a host and, if any, a numeric port; else
    None (the callers name their flag and the fix)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here, not at the request
    except ValueError:
        return None
    if parts.scheme in ("http", "https") and parts.hostname:
        return parts
    return None
