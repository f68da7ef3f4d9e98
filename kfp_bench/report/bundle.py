"""The report bundle: every report of one results directory, written in one step (the CLI, the
KFP component, ``kfp-bench demo``): report.html (self-contained, for the KFP UI's sandboxed
iframe), summary.md, metrics.json, gates.json with gates, and the CSV files (header only when
nothing was measured), whole or not at all (``report.folder``); other files there stay."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from kfp_bench.errors import BundleTooLarge
from kfp_bench.gates import counts, evaluate
from kfp_bench.metrics.series import load_beside
from kfp_bench.report import fill as fill_report
from kfp_bench.report import fmt, html, markdown, plots, predict, stage_plot
from kfp_bench.report.fmt import Section
from kfp_bench.report.folder import metrics_json, summary_bytes, write_folder
from kfp_bench.report.metrics import collect
from kfp_bench.report.server_plots import load_section
from kfp_bench.report.tables import SERIES_COLUMNS, Tables, build
from kfp_bench.results import Results

#: The files of a bundle, in the order they are listed.
FILES = (
    "report.html",
    "summary.md",
    "metrics.json",
    "runs.csv",
    "tasks.csv",
    "api_calls.csv",
    "load_series.csv",
)
#: Importable from here as before; the class is in the exception tree (``kfp_bench.errors``).
__all__ = ["FILES", "BundleTooLarge", "write_bundle", "write_pages"]
TITLE = "kfp-bench report"


def write_bundle(
    results: Results, out_dir: str | os.PathLike, *, history=None, kde: bool = True, gates=()
) -> dict[str, Path]:
    """Write report.html, summary.md, metrics.json and the CSV files of ``results``.

    Args:
        results: a results directory read back (``kfp_bench.results.read_results``).
        out_dir: the folder to write into; created when missing. A file there raises
            ``NotADirectoryError``; any ``OSError`` leaves ``out_dir`` as it was.
        history: a ``kfp_bench.history.History`` (earlier results and the regression verdict),
            or None for a report of this result alone.
        kde: draw a kernel density estimate over the latency and duration histograms.
        gates: ``kfp_bench.gates.Gate``s checked against the metrics: their verdicts open the
            Markdown and the HTML, join the metrics (gates_checked, gates_broken) and are saved
            in gates.json (listed only when given).

    Returns:
        Each file's name (``FILES``) mapped to its path in ``out_dir``.
    """
    tables = build(results)
    verdict = history.verdict if history is not None else None
    metrics = collect(tables, verdict)
    verdicts = evaluate(gates, metrics)
    if gates:
        metrics = dict(sorted({**metrics, **counts(verdicts)}.items()))
    load_options = results.load.options if results.load is not None else None
    figures = plots.render(tables, history=history, metrics=metrics, kde=kde)
    figures += fill_report.figures(tables.summary)  # the full-database probe, if it ran
    figures += stage_plot.render(tables, results)  # a load in stages: its own chart
    server = _server_section(results, figures)
    parts = predict.sections(tables, history, server)
    return write_pages(
        out_dir, TITLE, fmt.header(tables.summary, load_options), parts, figures, metrics,
        verdicts=verdicts, gates=gates, failed=tables.failures,
        top_html=html.verdict(history) + html.cards(metrics), top_md=markdown.verdict(history),
        footer=f"Charts: report.html. Records: {', '.join(FILES[3:])}.\n", records=_csvs(tables),
    )  # fmt: skip


def write_pages(
    out_dir, title: str, head: str, parts: list, figures: list, metrics: dict | None, *, verdicts,
    gates=(), failed=(), top_html: str = "", top_md: str = "", footer: str = "", records: dict,
) -> dict[str, Path]:  # fmt: skip
    """Write a bundle whole or not at all (``report.folder``): report.html and summary.md, each
    rendering the one list of ``parts`` (``fmt.Section``s) under ``title`` and the ``head``
    line, the gates' ``verdicts`` and the ``failed`` flags' lines first; metrics.json (none
    when ``metrics`` is None); the ``records`` files (name -> text or writer); gates.json when
    ``gates`` were given."""
    page = html.page(title, head, parts, figures, verdicts=verdicts, failed=failed, top=top_html)
    text = markdown.page(title, head, parts, verdicts=verdicts, failed=failed, top=top_md,
                         footer=footer)  # fmt: skip
    files = {"report.html": page, "summary.md": summary_bytes(text)}
    files |= {"metrics.json": metrics_json(metrics)} if metrics is not None else {}
    files |= records
    return write_folder(out_dir, files, verdicts if gates else None)


def _server_section(results: Results, figures: list) -> Section | None:
    """The server's series saved beside load.json (``load.server.json``: the pipeline's
    aggregate, ``kfp-bench load --json-out``), as a section; its figures join ``figures``."""
    if results.load is None:
        return None
    server = load_beside(Path(results.path) / "load.json")
    if server is None:
        return None
    section, more = load_section(results.load, server)
    figures += more
    return section


def _csvs(t: Tables) -> dict:
    """The CSV files' writers (pandas writes each at the path it is given)."""
    series = t.series if t.series is not None else pd.DataFrame(columns=SERIES_COLUMNS)
    frames = {"runs.csv": t.runs, "tasks.csv": t.tasks, "api_calls.csv": t.api}
    return {
        name: (lambda path, df=df: df.to_csv(path, index=False))
        for name, df in {**frames, "load_series.csv": series}.items()
    }
