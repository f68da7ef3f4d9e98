"""The text of a KFP API call that failed: what the server said, or why nothing came back.

KFP answers errors in two shapes: grpc-gateway's google.rpc Status (``{"code", "message",
"details"}``) from every endpoint but the uploads, and ``{"error_message", "error_details"}``
from the upload endpoints (kubeflow/pipelines 7b70c7b95f server/pipeline_upload_server.go:426-435,
writeErrorToResponse). Both are read, so that no failure loses its text.
"""

from __future__ import annotations

import json

import urllib3


def retry_after(resp) -> float | None:
    """The seconds of a numeric Retry-After header (an HTTP date is not honoured)."""
    headers = getattr(resp, "headers", None)
    value = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    return seconds if seconds is not None and 0 <= seconds < float("inf") else None


def api_error_text(resp) -> str:
    """``HTTP 404 Not Found: <the server's message>`` of an error answer (a urllib3 response),
    without its headers (which kfp_server_api's ApiException text carried)."""
    detail = ""
    body = resp.data
    if body:
        try:
            detail = error_message(json.loads(body))
        except (ValueError, TypeError):
            detail = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body)
        detail = " ".join(str(detail).split())[:200]
    reason = resp.reason or ""
    return f"HTTP {resp.status} {reason}" + (f": {detail}" if detail else "")


def error_message(doc) -> str:
    """The message of a KFP error body: a google.rpc Status (``message``, grpc-gateway's answer),
    or the upload endpoints' ``{"error_message", "error_details"}`` (server/
    pipeline_upload_server.go:426-435 at 7b70c7b95f; the details are the same error with its
    stack, so only their first line is taken when there is no message)."""
    if not isinstance(doc, dict):
        return ""
    text = doc.get("message") or doc.get("error_message") or doc.get("error") or ""
    if not text and doc.get("error_details"):
        text = str(doc["error_details"]).strip().splitlines()[0]
    return str(text)


def transport_error_text(exc) -> str:
    # MaxRetryError wraps the real cause; its own text repeats the URL and the pool.
    cause = getattr(exc, "reason", None) or exc
    text = str(cause)
    if "Connection refused" in text:
        text = "connection refused"
    elif isinstance(cause, urllib3.exceptions.TimeoutError | TimeoutError):
        text = "timed out"
    return f"{type(cause).__name__}: {text}"
