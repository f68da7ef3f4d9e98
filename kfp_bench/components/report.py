"""The report as the KFP UI shows it: HTML, a Markdown summary, metrics and the raw records."""

from kfp.dsl import HTML, Dataset, Input, Markdown, Metrics, Output

from kfp_bench.components._step import step

# Imports inside functions: KFP ships only this function's source to the step's pod (a lightweight
# component), so what it uses is imported inside it.


@step("report")
def report(
    params: dict,
    results: Input[Dataset],
    html: Output[HTML],
    summary: Output[Markdown],
    metrics: Output[Metrics],
    records: Output[Dataset],
) -> str:
    """Build the report bundle (kfp_bench.report.bundle.write_bundle) and publish its parts, the
    verdicts of the thresholds on its figures first (check_outcome then fails for a broken one);
    with results_uri, report_history runs instead.

    Args:
        params: the checked parameters (thresholds is read).
        results: the results directory from aggregate.
        html: the self-contained HTML report (inline images; no external assets).
        summary: the Markdown summary, kept under the UI's 400 kB.
        metrics: the scalar metrics, with stable names for the UI's "Compare runs".
        records: the raw records and CSVs, summary.json and gates.json.

    Returns:
        What check_outcome checks (kfp_bench.steps.outcome.outcome_of).
    """
    from kfp_bench.steps import publish
    from kfp_bench.steps.params import BenchParams

    p = BenchParams.from_dict(params)
    paths = (results.path, records.path, html.path, summary.path)
    found, outcome = publish.report_step(p, *paths, history=False)
    for name, value in found.items():
        metrics.log_metric(name, value)
    return outcome
