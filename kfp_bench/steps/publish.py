"""The steps that merge and publish: aggregate (the steps' outputs into one results directory,
flagged with what is missing) and report (the report bundle, with the history's trend and
verdict when results_uri is set, and the gates' verdicts first).
"""

from __future__ import annotations

import json
import math
import os
import shutil

from kfp_bench.errors import ConfigError, HistoryError
from kfp_bench.failpoint import fail_point
from kfp_bench.gates import GATES_FILE
from kfp_bench.jsonl import write_json_atomic
from kfp_bench.stats.cost import KEY
from kfp_bench.steps.outcome import outcome_of
from kfp_bench.steps.outputs import ERROR_FILE, FILL_FILE, error_of
from kfp_bench.steps.params import BenchParams

# Imports inside functions: the steps' modules must import in the pod of any step, which
# installs only its own extra (components/_step.py): what another extra's packages back is
# imported in the function that needs it (tests/test_imports.py checks the top).


def aggregate(
    p: BenchParams, runs: str, loads: list[str], sweep: str, replicas: str, out: str
) -> None:
    """Write a results directory (``kfp_bench.results``) from the steps' outputs: the runs
    summary and records, the load workers' histograms merged (a missing worker named in
    load.workers.missing), the sweep and the replica rows, and in ``pipeline`` the failure
    flags of what is missing: ``workers-lost`` (which in ``workers_lost``), ``no-load`` (load
    was on and no worker's result could be read) and ``step-failed`` (each helper step's error
    in ``errors``, by step)."""
    from kfp_bench.results import write_results

    os.makedirs(out, exist_ok=True)
    errors: dict[str, str] = {}
    summary = None
    if os.path.exists(os.path.join(runs, "runs_summary.json")):
        with open(os.path.join(runs, "runs_summary.json")) as f:
            summary = json.load(f)
    if summary is not None and os.path.exists(os.path.join(runs, FILL_FILE)):
        with open(os.path.join(runs, FILL_FILE)) as f:  # the full-database probe
            summary["fill"] = json.load(f)
    for name in ("runs.jsonl", "api_calls.jsonl"):  # also what a failed poll recorded
        if os.path.exists(os.path.join(runs, name)):
            shutil.copyfile(os.path.join(runs, name), os.path.join(out, name))
    if (error := error_of(os.path.join(runs, ERROR_FILE))) is not None:
        errors["poll_runs"] = error
    expected = p.load_workers if p.run_load else 0
    merged, lost, found = merge_loads(loads, expected, "inference_load")
    errors.update(found)
    extra = {}
    with open(sweep) as f:
        doc = json.load(f)
    if not doc.get("skipped"):
        extra.update(doc)
    with open(replicas) as f:
        doc = json.load(f)
    if doc.get("error"):
        errors["watch_replicas"] = doc["error"]
    if not doc.get("skipped"):
        from kfp_bench.kserve.watch import replica_rows, sweep_max_replicas

        series = merged.series.rows() if merged is not None else []
        extra.update(replica_rows(doc, series))
        if "sweep" in extra:
            extra["sweep"] = sweep_max_replicas(extra["sweep"], doc)
    extra["pipeline"] = pipeline = missing(lost, bool(expected) and merged is None, errors)
    flags = pipeline["flags"]
    if p.cost_per_hour:  # the reports' price of the load's window (report/cost.py)
        extra[KEY] = p.cost_per_hour
    write_results(out, runs_summary=summary, load=merged, extra=extra)
    if merged is not None:  # after write_results, whose stage replaces the folder
        from kfp_bench.steps.server_metrics import merge as merge_server

        merge_server(loads, os.path.join(out, "load.json"))
    print(f"results: {sorted(os.listdir(out))}" + (f"; flags {flags}" if flags else ""))
    fail_point("aggregate")


def merge_loads(loads: list[str], expected: int, step: str) -> tuple:
    """The results of ``expected`` workers of ``step`` merged (``stats.store.merge_workers``,
    its notes printed), the workers lost, and the error each saved, by "<step> <index>"."""
    from kfp_bench.stats.store import by_worker, merge_workers  # the stats extra's

    merged, lost, notes = merge_workers(loads, expected)
    for note in notes:
        print(note)
    errors = {
        f"{step} {i}": error
        for i, path in sorted(by_worker(loads).items())
        if i < expected and (error := error_of(path)) is not None
    }
    return merged, lost, errors


def missing(lost: list[int], no_load: bool, errors: dict[str, str]) -> dict:
    """summary.json's ``pipeline``: the failure flags of what is missing (``workers-lost``,
    ``no-load``, ``step-failed``), the steps' errors (each printed) and the workers lost."""
    flags = ["workers-lost"] if lost else []
    flags += ["no-load"] if no_load else []
    flags += ["step-failed"] if errors else []
    for step, error in errors.items():
        print(f"step-failed: {step}: {error}")
    return {"flags": flags, "errors": errors, "workers_lost": lost}


#: The parts of the benchmark whose figures the report step publishes (``kfp_bench.gates``).
REPORT_KINDS = frozenset({"runs", "load", "sweep", "replicas"})
#: The KFP UI truncates Markdown at 400 kB.
MARKDOWN_LIMIT = 390_000


def report_step(
    p: BenchParams, results: str, records: str, html: str, summary: str, *, history: bool
) -> tuple[dict[str, float], str]:
    """The pipeline's report step (report, or with ``history`` report_history): ``report``
    with ``p``'s gates on the figures it publishes (and with the history ``p``'s results_uri
    and baseline, and the regression verdict's gate); its metrics, and the outcome
    check_outcome takes (``steps.outcome.outcome_of``)."""
    kinds = {*REPORT_KINDS, "regression"} if history else REPORT_KINDS
    where = {"results_uri": p.results_uri, "baseline": p.baseline} if history else {}
    found = report(results, records, html, summary, gates=p.gates(kinds), **where)
    return found, outcome_of(records)


def report(
    results: str,
    records: str,
    html: str,
    summary: str,
    *,
    results_uri: str = "",
    baseline: str = "",
    gates=(),
) -> dict[str, float]:
    """Build the report bundle into ``records``, copy its HTML and (bounded) Markdown out, and
    return the finite scalar metrics, by their stable names.

    With ``results_uri``, as ``kfp-bench report --results-uri --baseline`` does
    (``kfp_bench.report.rebuild.rebuild``): the report shows the trend of the earlier results
    there and the regression verdict against ``baseline`` (its figures join the metrics), and
    the results are archived there. A baseline too small for a verdict is said in the report; a
    history that cannot be read or written (``HistoryError``) leaves the report without it,
    flagged step-failed with the error naming the parameter, so that check_outcome fails the
    run and the report stays published. The verdicts of ``gates`` open the report and are saved in
    ``records``' gates.json, which check_outcome reads; a broken gate never fails this step.
    """

    from kfp_bench.report.bundle import write_bundle
    from kfp_bench.results import read_results

    shutil.copytree(results, records, dirs_exist_ok=True)
    res = read_results(results)
    files = None
    if results_uri:
        try:
            files = _report_with_history(res, records, results_uri, baseline, gates)
        except (ConfigError, HistoryError) as exc:
            # partial results over none: the report without the history, flagged step-failed
            # (check_outcome then fails the run), rather than no report at all
            text = (
                str(exc).replace("--results-uri", "results_uri").replace("--baseline", "baseline")
            )
            print(f"step-failed: report_history: pipeline parameters: {text}")
            _flag(records, "report_history", f"pipeline parameters: {text}")
            res = read_results(records)
    if files is None:
        files = write_bundle(res, records, gates=gates)
    _print_gates(files)
    shutil.copyfile(files["report.html"], html)
    text = files["summary.md"].read_text()
    if len(text.encode()) > MARKDOWN_LIMIT:
        text = text.encode()[:MARKDOWN_LIMIT].decode(errors="ignore")
        text += "\n\n(truncated: see the HTML)\n"
    with open(summary, "w") as f:
        f.write(text)
    metrics = json.loads(files["metrics.json"].read_text())
    found = {
        name: value
        for name, value in sorted(metrics.items())
        if isinstance(value, int | float) and math.isfinite(value)
    }
    fail_point("report")
    return found


def _print_gates(files: dict) -> None:
    if GATES_FILE in files:
        doc = json.loads(files[GATES_FILE].read_text())
        print(f"gates: {doc['gates_broken']} of {doc['gates_checked']} broken")
        for row in doc["gates"]:
            print(f"  {row['line']}")


def _flag(records: str, step: str, error: str) -> None:
    """Flag ``records``' summary.json step-failed, with ``step``'s ``error`` (as aggregate
    flags a helper step's)."""
    path = os.path.join(records, "summary.json")
    with open(path) as f:
        summary = json.load(f)
    pipeline = summary.setdefault("pipeline", {})
    pipeline["flags"] = list(dict.fromkeys([*(pipeline.get("flags") or []), "step-failed"]))
    pipeline["errors"] = {**(pipeline.get("errors") or {}), step: error}
    write_json_atomic(summary, path)


def _report_with_history(res, records: str, results_uri: str, baseline: str, gates) -> dict:
    from kfp_bench.report.rebuild import rebuild

    done = rebuild(res, records, results_uri=results_uri, baseline=baseline, gates=gates)
    h = done.history
    print(f"history {results_uri}: {len(h.entries)} earlier results")
    if h.verdict is not None:
        print(h.verdict.headline())
    elif h.refused:
        print(f"no verdict: {h.refused}")
    print(f"{'archived' if done.archived else 'already archived'} as {done.key}")
    return done.files
