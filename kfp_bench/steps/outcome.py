"""The check_outcome steps: push the figures to a Pushgateway when asked, then fail the run when
its results carry a failure flag or a gate broke, once the report is published.
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
from kfp_bench.steps.llm_steps import LLM_RESULT
from kfp_bench.steps.params import BenchParams


def check_outcome(
    results: str, params: dict | None = None, flags: bool = True, verdicts: dict | None = None
) -> str:
    """Push the results' figures to ``params``' pushgateway_url when set (``push_outcome``),
    then fail when the results carry a failure flag (``kfp_bench.outcome``; only with ``flags``)
    or a gate the report step checked broke (its gates.json, ``kfp_bench.gates``), so that the
    run does not end SUCCEEDED; the report step before it has published its outputs. A push
    that failed fails the step too, after the flags and gates (which it never hides). What was
    found, in one line.

    One check pushes each part's group (``_pushes``): with results_uri, the check after
    report_history (``flags`` False), whose figures carry the regression verdict; else the
    check after report; and the LLM's check its own."""
    # summary.json and gates.json, with the standard library: the step installs no extra
    path = os.path.join(results, "summary.json")
    try:
        with open(path) as f:
            summary = json.load(f)
        broken = gates.broken_lines(results)
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{results}: no results summary or gates to check ({exc})") from None
    flagged = failures(summary_flags(summary))
    found = flagged if flags else []
    p = BenchParams.from_dict(params) if params else None
    push_error, pushed = None, []
    if p is not None and _pushes(p, results, flags):
        try:
            pushed = push_outcome(p, results, flagged, verdicts or gates.saved_verdicts(results))
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
    gated = os.path.exists(os.path.join(results, gates.GATES_FILE))
    done = ("no failure flag, " if flags else "") + ("no gate broken" if gated else "no gate")
    return "; ".join([done, *pushed])


def _pushes(p: BenchParams, results: str, flags: bool) -> bool:
    """Whether this check pushes its part's group: two checks PUT to one group would race."""
    if not p.pushgateway_url:
        return False
    llm = os.path.exists(os.path.join(results, LLM_RESULT))  # report_llm's results
    return llm or not flags or not p.results_uri


def push_outcome(p: BenchParams, results: str, flags: list[str], verdicts=None) -> list[str]:
    """Push the figures of ``results`` (its metrics.json, which the report steps write; else
    only the failure count) to ``p.pushgateway_url`` (``kfp_bench.push``), labelled benchmark
    (``benchmark_label``), target (what was measured) and part (main, or llm for report_llm's
    results); print and return what was pushed."""
    metrics = {"failures": len(flags)}
    if os.path.exists(path := os.path.join(results, "metrics.json")):
        with open(path) as f:
            metrics = {**json.load(f), **metrics}
    llm = os.path.exists(os.path.join(results, LLM_RESULT))  # report_llm's results
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
    lines = push(p.pushgateway_url, metrics, labels, verdicts=verdicts)
    for line in lines:
        print(line)
    return lines
