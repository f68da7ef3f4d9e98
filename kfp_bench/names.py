"""Kubernetes names made from user input: DNS-1123 labels, sanitized or checked.

Kubernetes object names, label values and the names KFP and KServe derive from them (an
InferenceService ``NAME`` becomes the Knative revision ``NAME-predictor-00001``; in KFP's
Kubernetes-native mode a pipeline's name is a custom resource's name) must be DNS-1123 labels: at
most 63 characters of ``[a-z0-9-]``, starting and ending with a letter or digit.

``dns1123_label`` turns any text into such a label (for names kfp-bench derives, e.g. a benchmark
id from a run id): lower case, every other character run becomes one dash, and a name too long is
cut and given a short hash of the whole text, so two inputs that differ only past the cut still
give two names. ``check_dns1123_label`` is for names the user gives: it refuses rather than
rewrites, because a silently changed name is one cleanup and ``kubectl`` would not find.
"""

from __future__ import annotations

import hashlib
import re

from kfp_bench.errors import ConfigError
from kfp_bench.redact import public_url
from kfp_bench.urls import http_parts

MAX_LABEL = 63
LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_HASH_LEN = 8
_OTHER = re.compile(r"[^-a-z0-9]+")


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_HASH_LEN]


def dns1123_label(text: str, max_len: int = MAX_LABEL) -> str:
    """``text`` as a DNS-1123 label of at most ``max_len`` characters.

    Lower-cased; each run of characters other than a-z, 0-9 and - becomes one dash; dashes at the
    ends are dropped. A label longer than ``max_len`` keeps its start and ends in ``-`` and 8 hex
    digits of the SHA-256 of ``text``; text with nothing usable left becomes those 8 digits alone.
    """
    if not _HASH_LEN <= max_len <= MAX_LABEL:
        raise ValueError(f"max_len {max_len}: give {_HASH_LEN} to {MAX_LABEL}")
    label = _OTHER.sub("-", text.lower()).strip("-")
    if not label:
        return _digest(text)
    if len(label) <= max_len:
        return label
    keep = max_len - _HASH_LEN - 1
    head = label[:keep].rstrip("-") if keep > 0 else ""
    return f"{head}-{_digest(text)}" if head else _digest(text)


def is_dns1123_label(value: object, max_len: int = MAX_LABEL) -> bool:
    return isinstance(value, str) and len(value) <= max_len and bool(LABEL.fullmatch(value))


def check_dns1123_label(value: object, what: str, max_len: int = MAX_LABEL) -> str:
    """Return ``value`` if it is a DNS-1123 label of at most ``max_len`` characters; otherwise
    raise ``ConfigError`` naming ``what`` (a flag such as ``--benchmark-id``, or ``isvc name=``)
    and suggesting a label that would do."""
    if is_dns1123_label(value, max_len):
        return value  # type: ignore[return-value]
    sep = "" if what.endswith("=") else " "
    hint = dns1123_label(value, max_len) if isinstance(value, str) and value else "bench-1"
    raise ConfigError(
        f"{what}{sep}{value!r}: not a DNS-1123 label; use at most {max_len} lower-case letters, "
        f"digits and dashes, starting and ending with a letter or digit, e.g. {hint}"
    )


#: An S3 bucket's name (AWS's rules, which MinIO and SeaweedFS follow): 3 to 63 lower-case
#: letters, digits, dots and hyphens, a letter or digit at each end, not an IP address.
_BUCKET = re.compile(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")


def s3_uri_problem(bucket: str, options: dict[str, str]) -> str:
    """What the store would refuse in an S3 URI's text, in the user's terms (its bucket's name,
    its ?endpoint=), with the fix; empty when nothing. Checked before any request, by the
    CLI (``history.s3.parse``) and the pipeline's first step alike."""
    if not _BUCKET.fullmatch(bucket) or ".." in bucket or re.fullmatch(r"[0-9.]+", bucket):
        return (
            f"bucket {bucket!r} is not an S3 bucket name; give 3 to 63 lower-case letters, "
            "digits, dots or hyphens, starting and ending with a letter or digit, e.g. mlpipeline"
        )
    endpoint = options.get("endpoint", "")
    if endpoint:
        parts = http_parts(endpoint if "://" in endpoint else f"http://{endpoint}")
        if not parts or parts.path.strip("/") or parts.query:
            return (
                f"endpoint {public_url(endpoint)!r} is not the store's address; give "
                "?endpoint=http://HOST:PORT, e.g. ?endpoint=http://minio-service.kubeflow:9000"
            )
    return ""
