"""summary.md: the report's tables and verdict as GitHub-flavoured Markdown, without images.

A function of finished tables (``kfp_bench.report.tables``) and of the history, so a saved result
renders the same text every time. It stays well under ``MAX_BYTES`` (the KFP UI's Markdown viewer
and chat tools choke on large files): the per-second series and the records go to the CSV files,
and long tables are cut at ``MAX_ROWS`` rows with a note saying how many were left out.
"""

from __future__ import annotations

import io
from typing import TextIO

import pandas as pd

from kfp_bench.figures import HDR_MS, num
from kfp_bench.gates import lines
from kfp_bench.report import cost, fill_server, fmt
from kfp_bench.report import fill as fill_report
from kfp_bench.report import runs as runs_report
from kfp_bench.report.fmt import Section
from kfp_bench.report.folder import MAX_BYTES
from kfp_bench.report.metrics import RUN_RES, resolution
from kfp_bench.report.tables import (
    Tables,
    run_times_caption,
    run_times_shown,
    sweep_shown,
    task_times_shown,
)

__all__ = ["MAX_BYTES", "MAX_ROWS", "page", "section", "table", "write", "write_gates"]
MAX_ROWS = 40


def table(w, head: list[str], body: list[list[str]], limit: int = MAX_ROWS) -> None:
    """A Markdown table of text cells through ``w``, cut at ``limit`` rows with a note."""
    w("| " + " | ".join(head) + " |\n")
    w("|" + "|".join(":---" if i == 0 else "---:" for i in range(len(head))) + "|\n")
    for r in body[:limit]:
        w("| " + " | ".join(c.replace("|", "\\|") for c in r) + " |\n")
    if len(body) > limit:
        w(f"\n_{len(body) - limit} more rows in the CSV files._\n")
    w("\n")


def _df(w, df: pd.DataFrame, index: str | None = None, res: dict | float | None = None) -> None:
    head, body = fmt.rows(df, index, res)
    table(w, head, body)


def write(
    tables: Tables,
    out: TextIO,
    *,
    history=None,
    load_options: dict | None = None,
    gates=(),
    server: Section | None = None,
) -> None:
    """Write summary.md for ``tables`` (and ``history``, a ``kfp_bench.history.History``), the
    verdicts of ``gates`` (``kfp_bench.gates.Verdict``) first; ``server``: the server metrics'
    section, as the HTML has it (``report.server_plots.load_section``), its charts left out."""
    body = io.StringIO()
    w = body.write
    _failures(w, tables)
    _verdict(w, history)
    if tables.has_runs:
        _runs(w, tables)
    fill = fill_report.wide(tables.summary)
    if fill is not None:  # the full-database probe
        w("## Full database: p50 of the UI's calls at each K (milliseconds)\n\n")
        _df(w, fill, "K")
        by_k = fill_server.server_section(tables.summary)
        if by_k is not None:  # with a metrics profile: the server's own figures per K
            section(w, by_k)
    if tables.load is not None:
        _load(w, tables)
    if server is not None:
        section(w, server)
    if tables.sweep is not None:
        w("## Rate sweep\n\n")
        _df(w, sweep_shown(tables.sweep))
    if tables.replicas is not None and "ready" in tables.replicas:
        r = tables.replicas
        w("## Replicas\n\n")
        w(f"Ready replicas from {int(r['ready'].min())} to {int(r['ready'].max())} ")
        w(f"over {num(float(r['t_s'].max() - r['t_s'].min()))} s ({len(r)} samples).\n\n")
    if history is not None:
        _history(w, history, tables.resolution)
    if tables.notes:
        w("## Notes\n\n" + "".join(f"- {n}\n" for n in tables.notes) + "\n")
    head = fmt.header(tables.summary, load_options)
    footer = "Charts: report.html. Records: runs.csv, tasks.csv, api_calls.csv, load_series.csv.\n"
    out.write(page("kfp-bench report", head, [body.getvalue()], verdicts=gates, footer=footer))


def write_gates(w, verdicts) -> None:
    """The gates' verdicts as a quote: the report's first lines (``kfp_bench.gates.lines``)."""
    head, *rest = lines(verdicts) or [""]
    if not head:
        return
    w(f"> **{head}**\n>\n" + "".join(f"> - {r.strip()}\n" for r in rest) + "\n")


def section(w, sec: Section, *, charts: bool = True) -> None:
    """A ``fmt.Section`` through ``w``; its charts are in report.html, named when ``charts``."""
    w(f"## {sec.title}\n\n")
    if sec.intro:
        w(f"{sec.intro}\n\n")
    for head, body in sec.tables:
        table(w, head, body)
    if charts and sec.figures:
        w(f"Charts in report.html: {', '.join(sec.figures)}.\n\n")
    if sec.items:
        w("".join(f"- {i}\n" for i in sec.items) + "\n")


def page(title: str, head: str, parts: list, *, verdicts=(), failed=(), footer="") -> str:
    """A summary.md of ``parts`` under ``title``: the gates' ``verdicts``, the ``head`` line, the
    ``failed`` flags' lines, the sections (``fmt.Section``s, their charts unnamed, or Markdown
    made already), and the ``footer``."""
    buf = io.StringIO()
    w = buf.write
    w(f"# {title}\n\n")
    write_gates(w, verdicts)
    w(f"{head}.\n\n")
    if failed:
        w("**FAILED**: the benchmark did not do all that was asked; what is below is partial.\n\n")
        w("".join(f"- {line}\n" for line in failed) + "\n")
    for sec in parts:
        w(sec) if isinstance(sec, str) else section(w, sec, charts=False)
    w(footer)
    return buf.getvalue()


def _failures(w, t: Tables) -> None:
    if not t.failures:
        return
    w("> **FAILED**: the benchmark did not do all that was asked; what is below is partial.\n>\n")
    for line, details in t.failures:
        w(f"> - **{line}**\n")
        w("".join(f">   - {d}\n" for d in details))
    w("\n")


def _verdict(w, history) -> None:
    if history is None or not history.baseline:
        return
    if history.verdict is None:
        w(f"> **No verdict**: {history.refused}\n\n")
        return
    v = history.verdict
    mark = "**REGRESSION**" if v.regression else "**No regression**"
    w(f"> {mark}: {v.headline()}.\n\n")


def _runs(w, t: Tables) -> None:
    w("## Runs\n\n")
    if len(t.states):
        _df(w, t.states.set_index("state"))
    w("### Run times (seconds, from server timestamps)\n\n")
    caption = run_times_caption(t)
    if caption:
        w(f"{caption}\n\n")
    _df(w, run_times_shown(t), "phase")
    if t.run_bounds is not None:
        w("Bounds of each statistic (s):\n\n")
        _df(w, t.run_bounds, "phase")
    if len(t.api_ops):
        w("### API calls, client side (milliseconds)\n\n")
        _df(w, t.api_ops)
    server = runs_report.server_section(t.summary)
    if server is not None:  # the API server's histogram beside the client's figures
        section(w, server)
    if len(t.task_times):
        w("### Tasks (seconds)\n\n")
        _df(w, task_times_shown(t))


def _load(w, t: Tables) -> None:
    w("## Load\n\n")
    table(w, ["summary", "value"], cost.load_table(t))
    w("### Latency percentiles (milliseconds)\n\n")
    _df(w, t.load_pcts, res=HDR_MS)


def _history(w, h, run_res: float | None) -> None:
    """The regression tests and the earlier results' headline figures; ``run_res``: this
    result's run times' resolution, the tests' medians' too."""
    v = h.verdict
    if v is not None:
        w("## Regression tests\n\n")
        w(
            f"One-sided tests against {len(v.baseline)} earlier result(s) "
            f"({', '.join(v.baseline)}); Holm-adjusted p-values, alpha {v.alpha:g}, "
            f"minimum effect {v.min_effect:.0%} of the median.\n\n"
        )
        body = fmt.regression_rows(v, lambda m: resolution(m, run_res), "**yes**")
        table(w, fmt.REGRESSION_HEAD, body)
        if v.skipped:
            w("Not tested (too few samples): " + ", ".join(sorted(v.skipped)) + ".\n\n")
    if h.entries:
        w(f"## History ({len(h.entries)} earlier results in {h.uri})\n\n")
        keys = (
            "run_duration_p50_s",
            "api_create_run_p99_ms",
            "load_p99_ms",
            "load_rps",
            "regression",
        )
        body = [
            [e.key] + [num(e.metrics.get(k), resolution(k, e.metrics.get(RUN_RES))) for k in keys]
            for e in reversed(h.entries)
        ]
        table(w, ["key", *keys], body, limit=15)
