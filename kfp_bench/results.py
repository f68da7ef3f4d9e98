"""A results directory: everything one benchmark measured, saved so any report can be rebuilt.

``FORMAT`` version 1: summary.json (the driver's summary, ``load`` with the load result's
headline keys, and the pipeline's ``pipeline`` flags, step errors and lost workers), load.json
(the full load result), runs.jsonl and api_calls.jsonl (the driver's records, a line each;
schemas: docs/reports.md). ``write_results`` writes summary.json and load.json whole or not at
all (``atomic.folder``, keeping the JSON-lines files); ``read_results`` raises
``ResultsError`` naming what is missing, empty or of another version."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from kfp_bench import atomic
from kfp_bench.errors import ResultsError
from kfp_bench.jsonl import read, write_json_atomic
from kfp_bench.outcome import summary_flags
from kfp_bench.records import ApiCall, RunRecord
from kfp_bench.stats import store
from kfp_bench.stats.load import LoadStats

FORMAT = "kfp-bench/results"
FORMAT_VERSION = 1
#: The fix every "not a results directory" message gives.
_GIVE = "give a directory written by a kfp-bench benchmark (its --out)"
#: The load result's keys copied into summary.json (the rest stays in load.json).
LOAD_SUMMARY_KEYS = (
    "requests",
    "duration_s",
    "rps",
    "success_ratio",
    "latency_ms",
    "latency_uncorrected_ms",
    "status_codes",
    "errors",
    "corrected",
    "not_sent",
    "workers",
    "flags",
    "started_at",
)


@dataclass
class Results:
    """A results directory read back.

    Attributes:
        path: the directory.
        summary: summary.json.
        load: the full load stats, or None when no load ran.
        runs: the run records (empty when no runs benchmark ran).
        api_calls: the API call records.
    """

    path: Path
    summary: dict
    load: LoadStats | None = None
    runs: list[RunRecord] = field(default_factory=list)
    api_calls: list[ApiCall] = field(default_factory=list)


def flags(summary: dict) -> list[str]:
    """Every flag of a summary, each once (``kfp_bench.outcome.summary_flags``);
    ``kfp_bench.outcome.failures`` picks the failures among them."""

    return summary_flags(summary)


def write_results(
    out_dir: str | os.PathLike,
    *,
    runs_summary: dict | None = None,
    load: LoadStats | None = None,
    extra: dict | None = None,
) -> Path:
    """Write summary.json (and load.json) into ``out_dir``; return the summary's path. Both
    appear at once or neither does; a load.json left by an earlier result goes with it.

    Args:
        runs_summary: ``RunsStats.summary()`` of the runs benchmark, if it ran.
        load: the load stats, if load ran.
        extra: more top-level keys (e.g. the replicas series of an InferenceService).
    """
    doc: dict = {k: v for k, v in (runs_summary or {}).items() if k not in ("format",)}
    doc.update(format=FORMAT, format_version=FORMAT_VERSION, written_at=time.time())
    if load is not None:
        full = load.to_dict()
        doc["load"] = {k: full[k] for k in LOAD_SUMMARY_KEYS if k in full}
    doc.update(extra or {})
    with atomic.folder(out_dir, fresh=("summary.json", "load.json")) as stage:
        if load is not None:
            write_json_atomic(full, stage / "load.json")
        write_json_atomic(doc, stage / "summary.json")
    return Path(out_dir) / "summary.json"


def read_results(path: str | os.PathLike) -> Results:
    """Read a results directory written by ``write_results`` (and the driver)."""
    p = Path(path)
    if not p.exists():
        raise ResultsError(f"{p}: no such results directory; {_GIVE}")
    if not p.is_dir():
        raise ResultsError(f"{p}: not a directory; give a results directory (with summary.json)")
    summary_path = p / "summary.json"
    if not summary_path.exists():
        what = "empty" if not any(p.iterdir()) else "has no summary.json"
        raise ResultsError(f"{p}: {what}; {_GIVE}")
    try:
        summary = json.loads(summary_path.read_text())
    except (OSError, ValueError) as exc:
        raise ResultsError(
            f"{summary_path}: not readable JSON ({exc}); the file is damaged: run the benchmark "
            "again, or give another results directory"
        ) from None
    if not isinstance(summary, dict) or summary.get("format") != FORMAT:
        raise ResultsError(
            f"{summary_path}: not a kfp-bench results summary (format {FORMAT!r}); {_GIVE}"
        )
    if summary.get("format_version") != FORMAT_VERSION:
        raise ResultsError(
            f"{summary_path}: results format version {summary.get('format_version')!r}; this "
            f"kfp-bench reads version {FORMAT_VERSION}: rebuild it with a matching kfp-bench"
        )
    res = Results(p, summary)
    if (p / "load.json").exists():
        res.load = store.load(p / "load.json")
    if (p / "runs.jsonl").exists():
        res.runs = read(p / "runs.jsonl", RunRecord)
    if (p / "api_calls.jsonl").exists():
        res.api_calls = read(p / "api_calls.jsonl", ApiCall)
    return res
