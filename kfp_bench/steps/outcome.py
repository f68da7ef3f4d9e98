"""The check_outcome step: push the figures to a Pushgateway when asked, then fail the run when
its results carry a failure flag or a gate broke, once the report is published.

The report step hands the check what it found as a JSON string (``outcome_of``), not as its
records folder: with results_uri the report is report_history's, in the other branch of one
dsl.If/Else, and the check takes whichever ran through ``dsl.OneOf``. KFP 2.15.0's driver picks
the branch that ran for a parameter (kubeflow/pipelines 2.15.0 backend/src/v2/driver/
resolve.go:1049-1077, ``ValueFromOneof``), but for an artifact always the last selector
(resolve.go:1025-1028), the branch that was skipped when report_history ran; that was fixed in
2.17.0 (#13436, 456c72a6c1), after the backend Kubeflow 1.11 ships.
"""

from __future__ import annotations

import json
import os

from kfp_bench import gates
from kfp_bench.errors import BenchError, PushError, ResultsError
from kfp_bench.failpoint import fail_point
from kfp_bench.outcome import describe, failures, summary_flags
from kfp_bench.push import push
from kfp_bench.redact import public_url
from kfp_bench.steps.ids import benchmark_label
from kfp_bench.steps.params import BenchParams


def outcome_of(records: str, part: str = "main") -> str:
    """What check_outcome needs of a report step's ``records`` folder (its summary.json,
    gates.json and metrics.json), as the JSON string the report step returns: the failure
    flags, the broken gates' lines, whether gates were checked, the gates' verdicts and the
    metrics to push, and the ``part`` (main, or llm for report_llm's)."""
    path = os.path.join(records, "summary.json")
    try:
        with open(path) as f:
            summary = json.load(f)
        doc = {
            "part": part,
            "failures": failures(summary_flags(summary)),
            "broken": gates.broken_lines(records),
            "gated": os.path.exists(os.path.join(records, gates.GATES_FILE)),
            "verdicts": gates.saved_verdicts(records),
            "metrics": {},
        }
        if os.path.exists(metrics := os.path.join(records, "metrics.json")):
            with open(metrics) as f:
                doc["metrics"] = json.load(f)
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{records}: no results summary or gates to check ({exc})") from None
    return json.dumps(doc, sort_keys=True)


def check_outcome(outcome: str, params: dict | None = None) -> str:
    """Push the figures of ``outcome`` (``outcome_of``) to ``params``' pushgateway_url when set
    (``push_outcome``), then fail when it carries a failure flag (``kfp_bench.outcome``) or a
    broken gate (``kfp_bench.gates``), so that the run does not end SUCCEEDED; the report step
    before it has published its outputs. A push that failed fails the step too, after the flags
    and gates (which it never hides). What was found, in one line."""
    try:
        doc = json.loads(outcome)
        found, broken = list(doc["failures"]), list(doc["broken"])
    except (TypeError, ValueError, KeyError) as exc:
        raise ResultsError(f"the report step's outcome is not readable ({exc!r})") from None
    p = BenchParams.from_dict(params) if params else None
    push_error, pushed = None, []
    if p is not None and p.pushgateway_url:
        try:
            pushed = push_outcome(p, doc)
        except PushError as exc:
            print(f"push failed: {exc}")
            push_error = exc
    fail_point("check_outcome")
    also = f" (the push failed too: {push_error})" if push_error else ""
    for line in broken:
        print(line)
    if broken and not found:
        raise BenchError(
            f"{len(broken)} gate(s) broke ({'; '.join(broken)}): the report is published (the "
            "report step's HTML, Markdown and metrics, its first lines saying which gate broke) "
            f"and this step fails so that the run does not end SUCCEEDED{also}"
        )
    if found:
        for line in describe(found):
            print(line)
        raise BenchError(
            f"the benchmark is flagged {', '.join(found)}: its report is published (the report "
            "step's HTML, Markdown and metrics) and says what is missing; this step fails so "
            f"that the run does not end SUCCEEDED{also}"
        )
    if push_error is not None:
        raise PushError(
            f"the benchmark passed and its report is published, but {push_error}; this step "
            "fails so that a missing push shows in the run, not only as a stale alert"
        )
    done = "no failure flag, " + ("no gate broken" if doc.get("gated") else "no gate")
    return "; ".join([done, *pushed])


def push_outcome(p: BenchParams, doc: dict) -> list[str]:
    """Push the figures of an outcome ``doc`` (the report step's metrics; else only the failure
    count) to ``p.pushgateway_url`` (``kfp_bench.push``), labelled benchmark
    (``benchmark_label``), target (what was measured) and part (main, or llm for report_llm's
    results); print and return what was pushed."""
    metrics = {**(doc.get("metrics") or {}), "failures": len(doc["failures"])}
    llm = doc.get("part") == "llm"
    isvc = f"isvc/{p.isvc.get('name', '')}" if p.isvc else ""  # deployed: its URL is made later
    if llm:
        target = p.llm_url or isvc
    else:
        target = (isvc or p.inference_url) if (p.run_load or p.sweep_rates) else p.kfp_host
    labels = {
        "benchmark": benchmark_label(p.benchmark_id),
        "target": public_url(target).split("?")[0],
        "part": "llm" if llm else "main",
    }
    lines = push(p.pushgateway_url, metrics, labels, verdicts=doc.get("verdicts") or None)
    for line in lines:
        print(line)
    return lines
