"""The report as the KFP UI shows it: HTML, a Markdown summary, metrics and the raw records."""

from kfp.dsl import HTML, Dataset, Input, Markdown, Metrics, Output
from kfp_bench.components._step import step


@step("report")
def report(
    results: Input[Dataset],
    html: Output[HTML],
    summary: Output[Markdown],
    metrics: Output[Metrics],
    records: Output[Dataset],
):
    """Build the report bundle (kfp_bench.report.bundle.write_bundle) and publish its parts
    (with results_uri, report_history publishes the one with the trend and the verdict).

    Args:
        results: the results directory from aggregate.
        html: the self-contained HTML report (inline images; no external assets).
        summary: the Markdown summary, kept under the UI's 400 kB.
        metrics: the scalar metrics, with stable names for the UI's "Compare runs".
        records: the raw records and CSVs.
    """
    from kfp_bench import steps

    found = steps.report(results.path, records.path, html.path, summary.path)
    for name, value in found.items():
        metrics.log_metric(name, value)
