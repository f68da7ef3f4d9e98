"""Saved results: the JSON documents of ``LoadStats`` (``kfp-bench load``) and ``LlmStats``
(``kfp-bench llm``, ``kind: "llm"``), written atomically and read back by their kind."""

from __future__ import annotations

import json
import os
from pathlib import Path

from kfp_bench.errors import ResultsError
from kfp_bench.jsonl import write_json_atomic
from kfp_bench.stats.llm import KIND as LLM_KIND
from kfp_bench.stats.llm import LlmStats
from kfp_bench.stats.load import LoadStats
from kfp_bench.stats.rate_sweep import KIND as RATE_SWEEP_KIND
from kfp_bench.stats.rate_sweep import LLM_KIND as LLM_SWEEP_KIND
from kfp_bench.stats.rate_sweep import LlmSweep, RateSweep


def save(stats: LoadStats | LlmStats, path: str | os.PathLike) -> Path:
    """Write the results document; a crash mid-write never leaves a half file at ``path``."""
    return write_json_atomic(stats.to_dict(), path)


def load(path: str | os.PathLike) -> LoadStats | LlmStats:
    """Read a results document written by ``save`` (or by ``kfp-bench load`` or ``llm``
    ``--json-out``): an ``LlmStats`` for ``kind: "llm"``, an ``LlmSweep`` for ``"llm-sweep"``
    (``kfp-bench llm --sweep-...``), a ``RateSweep`` for ``"sweep"`` (``kfp-bench sweep``),
    else a ``LoadStats``."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise ResultsError(
            f"{p}: no such results file; give a file written by kfp-bench load --json-out"
            " or kfp-bench llm --json-out"
        ) from None
    except IsADirectoryError:
        raise ResultsError(
            f"{p}: a directory, not a results file; give a file written by --json-out"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{p}: cannot read it ({exc})") from None
    except ValueError as exc:
        raise ResultsError(f"{p}: not JSON ({exc}); give a file written by --json-out") from None
    if isinstance(doc, dict) and doc.get("kind") == LLM_KIND:
        return LlmStats.from_dict(doc, str(p))
    if isinstance(doc, dict) and doc.get("kind") == LLM_SWEEP_KIND:
        return LlmSweep.from_dict(doc, str(p))
    if isinstance(doc, dict) and (doc.get("kind") == RATE_SWEEP_KIND or "sweep_knee" in doc):
        return RateSweep.from_dict(doc, str(p))  # one saved before its steps were: named so
    return LoadStats.from_dict(doc, str(p))


#: What a result is, in words for messages (``kind``).
_WORDS = {LlmSweep: "an LLM sweep", RateSweep: "a rate sweep", LlmStats: "an LLM result"}


def kind(stats: LoadStats | LlmStats | LlmSweep | RateSweep) -> str:
    """What a result is, in words for messages: ``_WORDS``' or "a load result"."""
    return _WORDS.get(type(stats), "a load result")


def load_same_kind(paths: list[str]) -> list[LoadStats | LlmStats]:
    """Read results that must all be of one kind (to merge them): the first one of another kind
    than ``paths[0]``'s is refused, naming both files."""
    parts = [load(paths[0])]
    if isinstance(parts[0], LlmSweep | RateSweep):  # steps at other levels: no sum is a figure
        raise ResultsError(
            f"{paths[0]} is {kind(parts[0])}: its steps ran at different levels and are not "
            "merged; kfp-bench report prints every step"
        )
    for path in paths[1:]:
        part = load(path)
        if type(part) is not type(parts[0]):
            raise ResultsError(
                f"{path} is {kind(part)} and {paths[0]} is {kind(parts[0])}: results of "
                "different kinds cannot be merged; merge the files of one command"
            )
        parts.append(part)
    return parts


def worker_index(path: str, position: int) -> int:
    """Which worker wrote the result at ``path``: its ``worker`` key (each load and LLM worker
    writes it, its retry's lost-result too), else ``position`` in the list (a result of
    ``kfp-bench load``, which has none)."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, ValueError):
        return position
    index = doc.get("worker") if isinstance(doc, dict) else None
    return index if isinstance(index, int) and not isinstance(index, bool) else position


def by_worker(paths: list[str]) -> dict[int, str]:
    """``paths`` by the index of the worker that wrote each: a list from which a dead worker's
    entry is missing still names the others rightly (the first of an index kept)."""
    found: dict[int, str] = {}
    for position, path in enumerate(paths):
        found.setdefault(worker_index(path, position), path)
    return found


def merge_workers(paths: list[str], expected: int) -> tuple[LoadStats | None, list[int], list[str]]:
    """The results of ``expected`` load workers (0 to ``expected - 1``, each found by the index
    it wrote, ``by_worker``) merged into one, the workers whose result is missing, and what went
    wrong, a line each.

    A worker whose result is missing or unreadable (it died mid-write, saved only its error, or
    its pod died and its retry saved why) is named in ``workers.missing`` and the result is
    flagged ``workers-lost`` (``kfp_bench.outcome``), never silently dropped. The merged result
    is None when no worker's result could be read.
    """
    merged, missing, notes = None, [], []
    paths_of = by_worker(paths)
    for i in range(expected):
        part = None
        if i in paths_of:
            try:
                part = load(paths_of[i])
            except ResultsError as exc:
                notes.append(f"load worker {i}: unreadable result ({exc})")
        if part is not None and merged is not None and type(part) is not type(merged):
            notes.append(f"load worker {i}: {kind(part)}, not {kind(merged)}; left out")
            part = None
        if part is None:
            missing.append(i)
        elif merged is None:
            merged = part
        else:
            merged.merge(part)
    if merged is not None:
        merged.note_missing(missing)
    if missing:
        notes.append(f"load workers missing from the result: {missing}")
    return merged, missing, notes
