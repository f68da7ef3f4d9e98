"""The check every results document of a load (``load``, ``llm``, ``llm-sweep``) passes before
it is read: its format (and kind) say what it is, its version that this kfp-bench reads it."""

from __future__ import annotations

from kfp_bench.errors import ResultsError


def check(doc, source: str, *, fmt: str, version: int, what: str, written_by: str, kind=None):
    """Raise ResultsError naming ``source`` (a path, "a worker's LLM results") unless ``doc``
    carries ``fmt`` (and ``kind``, when given) and ``version``; the message names it a ``what``
    ("load result") and the command that writes one (``written_by``)."""
    if (
        not isinstance(doc, dict)
        or doc.get("format") != fmt
        or (kind is not None and doc.get("kind") != kind)
    ):
        named = f"no format {fmt!r}" + (f", kind {kind!r}" if kind is not None else "")
        raise ResultsError(
            f"{source}: not a kfp-bench {what} ({named}); give a file written by {written_by}"
        )
    if doc.get("format_version") != version:
        raise ResultsError(
            f"{source}: results format version {doc.get('format_version')!r}, this kfp-bench "
            f"reads version {version}; re-run the load with this version"
        )
