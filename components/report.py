"""The report as the KFP UI shows it: HTML, a Markdown summary, metrics and the raw records."""

from kfp import dsl
from kfp.dsl import HTML, Dataset, Input, Markdown, Metrics, Output
from kfp_bench.components._embed import BASE_IMAGE, engine, packages


@dsl.component(
    base_image=BASE_IMAGE,
    packages_to_install=packages("report", "stats"),
    embedded_artifact_path=engine("report", "history", "stats", "results.py"),
)
def report(
    results: Input[Dataset],
    html: Output[HTML],
    summary: Output[Markdown],
    metrics: Output[Metrics],
    records: Output[Dataset],
):
    """Build the report bundle (kfp_bench.report.bundle.write_bundle) and publish its parts.

    Args:
        results: the results directory from aggregate.
        html: the self-contained HTML report (inline images; no external assets).
        summary: the Markdown summary, kept under the UI's 400 kB.
        metrics: the scalar metrics, with stable names for the UI's "Compare runs".
        records: the raw records and CSVs.
    """
    import json
    import math
    import shutil

    from kfp_bench.failpoint import fail_point
    from kfp_bench.report.bundle import write_bundle
    from kfp_bench.results import read_results

    shutil.copytree(results.path, records.path, dirs_exist_ok=True)
    files = write_bundle(read_results(results.path), records.path)
    shutil.copyfile(files["report.html"], html.path)
    text = files["summary.md"].read_text()
    limit = 390_000  # the KFP UI truncates Markdown at 400 kB
    if len(text.encode()) > limit:
        text = text.encode()[:limit].decode(errors="ignore") + "\n\n(truncated: see the HTML)\n"
    with open(summary.path, "w") as f:
        f.write(text)
    for name, value in sorted(json.loads(files["metrics.json"].read_text()).items()):
        if isinstance(value, int | float) and math.isfinite(value):
            metrics.log_metric(name, value)
    fail_point("report")
