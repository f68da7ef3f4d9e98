"""The report with the results history: the trend and the regression verdict (with results_uri)."""

from kfp.dsl import HTML, Dataset, Input, Markdown, Metrics, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("report", "history")
def report_history(
    params: dict,
    results: Input[Dataset],
    html: Output[HTML],
    summary: Output[Markdown],
    metrics: Output[Metrics],
    records: Output[Dataset],
) -> str:
    """Archive the results at results_uri and publish the report with the trend of the earlier
    results there and the regression verdict against baseline, as kfp-bench report
    --results-uri --baseline does (kfp_bench.report.rebuild). It runs instead of report when
    results_uri is set, so that a run without a history installs no history packages; a
    history it cannot use leaves the report without it, flagged step-failed. The verdicts of
    thresholds and fail_on_regression open it; the check after it fails for a broken one.

    Args:
        params: the checked parameters (results_uri, baseline, thresholds and
            fail_on_regression are read).
        results: the results directory from aggregate.
        html: the self-contained HTML report, with the History section.
        summary: the Markdown summary, with the verdict, kept under the UI's 400 kB.
        metrics: the scalar metrics and the verdict's (regression, baseline_results, ...).
        records: the raw records and CSVs, summary.json and gates.json.

    Returns:
        What check_outcome checks (kfp_bench.steps.outcome.outcome_of).
    """
    from kfp_bench.steps import publish
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    paths = (results.path, records.path, html.path, summary.path)
    found, outcome = publish.report_step(p, *paths, history=True)
    for name, value in found.items():
        metrics.log_metric(name, value)
    return outcome
