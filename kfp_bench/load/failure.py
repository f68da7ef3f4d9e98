"""What a failed request's row says: the short, stable texts of the error distribution.

The load engine turns every transport failure (refused, reset, timeout, TLS, DNS) into one of
these texts and counts it; none of them is an exception to the caller. The texts are grouped by
``op``, the step that failed (connect, read, tls), so that hey users find the same kinds of lines
in the same places.
"""

from __future__ import annotations

import asyncio
import socket
import ssl


def describe(exc: BaseException | None, op: str) -> str:
    """A short, stable error text for the error distribution (``op``: connect, read, tls)."""
    if exc is None:
        return f"{op}: server closed the connection before the response"
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"tls: certificate verify failed ({exc.verify_message}); pass --cacert or --insecure"
    if isinstance(exc, ssl.SSLError):
        return f"tls: {exc.reason or exc}"
    if isinstance(exc, TimeoutError | asyncio.TimeoutError):
        return f"{op}: timeout"
    if isinstance(exc, ConnectionRefusedError):
        return f"{op}: connection refused"
    if isinstance(exc, ConnectionResetError):
        return f"{op}: connection reset by peer"
    if isinstance(exc, socket.gaierror):
        return f"dns: {exc.strerror}"
    if isinstance(exc, OSError) and exc.strerror:
        return f"{op}: {exc.strerror.lower()}"
    return f"{op}: {type(exc).__name__}: {exc}"
