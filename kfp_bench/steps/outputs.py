"""What the steps write beside their results: JSON files, and the error of a step that failed
to measure (saved, printed, and read back by the step that merges).

Partial results over no results: a helper step that fails to measure (``poll_runs``,
``inference_load``, ``watch_replicas``, ``llm_load``) saves what it had with the error, prints
the error and ends successfully, so that the merging steps still run and flag what is missing
(``kfp_bench.outcome``). Only an error kfp-bench raises on purpose (``BenchError``) or the
network's (``OSError``) counts as a failure to measure; any other exception is a bug and fails
the step.
"""

from __future__ import annotations

import json

OFF_RUNS = "runs benchmark switched off (run_benchmark=false)"
#: The file a runs step's directory holds when the step failed to measure: {"error": text}.
ERROR_FILE = "error.json"
#: The full-database probe's section of the results (``kfp_bench.kfp.fill``), beside the runs'
#: records from spawn_runs on.
FILL_FILE = "fill.json"


def write_json(path: str, doc) -> None:
    with open(path, "w") as f:
        json.dump(doc, f)


def failed(step: str, exc: Exception, who: str = "") -> str:
    """Print and return the error of a helper step that failed to measure, with its type (so a
    KubeError reads apart from a KfpApiError in the report)."""
    text = f"{type(exc).__name__}: {exc}"
    print(f"{who}{step} failed to measure: {text}")
    return text


def error_of(path: str) -> str | None:
    """The error a helper step saved in its output at ``path`` (None: none, or no output)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    return (doc.get("error") or None) if isinstance(doc, dict) else None
