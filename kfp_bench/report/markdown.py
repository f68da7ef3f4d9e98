"""summary.md: the report's tables and verdict as GitHub-flavoured Markdown, without images.

A function of finished tables (``kfp_bench.report.tables``) and of the history, so a saved result
renders the same text every time. It stays well under ``MAX_BYTES`` (the KFP UI's Markdown viewer
and chat tools choke on large files): the per-second series and the records go to the CSV files,
and long tables are cut at ``MAX_ROWS`` rows with a note saying how many were left out.
"""

from __future__ import annotations

import io

from kfp_bench.gates import lines
from kfp_bench.report.fmt import Section
from kfp_bench.report.folder import MAX_BYTES

__all__ = ["MAX_BYTES", "MAX_ROWS", "page", "section", "table", "verdict", "write_gates"]
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


def write_gates(w, verdicts) -> None:
    """The gates' verdicts as a quote: the report's first lines (``kfp_bench.gates.lines``)."""
    head, *rest = lines(verdicts) or [""]
    if not head:
        return
    w(f"> **{head}**\n>\n" + "".join(f"> - {r.strip()}\n" for r in rest) + "\n")


def section(w, sec: Section, *, charts: bool = True) -> None:
    """A ``fmt.Section`` through ``w``; its charts are in report.html, named when ``charts``."""
    w(f"{'#' * sec.level} {sec.title}\n\n")
    if sec.intro:
        w(f"{sec.intro}\n\n")
    for t in sec.tables:
        if isinstance(t, str):
            w(f"{t}\n\n")
            continue
        head, body, *marks = t  # a marked row (it regressed) in bold
        bold = {i for i, m in enumerate(marks[0]) if m} if marks else set()
        table(w, head, [[f"**{c}**" for c in r] if i in bold else r for i, r in enumerate(body)])
    if charts and sec.figures:
        w(f"Charts in report.html: {', '.join(sec.figures)}.\n\n")
    if sec.items:
        w("".join(f"- {i}\n" for i in sec.items) + "\n")


def page(
    title: str, head: str, parts: list, *, verdicts=(), failed=(), top: str = "", footer: str = ""
) -> str:
    """A summary.md of ``parts`` under ``title``: the gates' ``verdicts``, the ``head`` line, the
    ``failed`` flags' lines (each a line or (line, [details])), ``top`` (the history's verdict),
    the sections (``fmt.Section``s, their charts unnamed, or Markdown made already; None: a
    section not measured), and the ``footer``."""
    buf = io.StringIO()
    w = buf.write
    w(f"# {title}\n\n")
    write_gates(w, verdicts)
    w(f"{head}.\n\n")
    if failed:
        w("> **FAILED**: the benchmark did not do all that was asked; what is below is partial.")
        w("\n>\n")
        for f in failed:
            line, details = f if isinstance(f, tuple) else (f, ())
            w(f"> - **{line}**\n" + "".join(f">   - {d}\n" for d in details))
        w("\n")
    w(top)
    for sec in parts:
        if sec is not None:
            w(sec) if isinstance(sec, str) else section(w, sec, charts=False)
    w(footer)
    return buf.getvalue()


def verdict(history) -> str:
    """The history's regression verdict, a quote at the top of summary.md; "" without one."""
    if history is None or not history.baseline:
        return ""
    if history.verdict is None:
        return f"> **No verdict**: {history.refused}\n\n"
    v = history.verdict
    mark = "**REGRESSION**" if v.regression else "**No regression**"
    return f"> {mark}: {v.headline()}.\n\n"
