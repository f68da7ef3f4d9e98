"""The full-database probe in the report: latency against the runs the server holds.

This module owns the ``fill`` section's table and chart (``kfp_bench.kfp.fill`` measures them;
``kfp_bench.stats.runs.FillProbe`` makes the rows): one line per call kind, p50 solid and p95
dashed, against K on the x axis; the server's own p50 beside them where its /metrics has a
latency histogram. Functions of the saved summary alone, so ``kfp-bench report`` redraws them.
"""

from __future__ import annotations

import pandas as pd

COLUMNS = ["k", "kind", "count", "errors", "p50_ms", "p95_ms", "max_ms"]


def table(summary: dict) -> pd.DataFrame | None:
    """The probe's rows (one per runs held and call kind); None without a fill."""
    rows = (summary.get("fill") or {}).get("rows") or []
    if not rows:
        return None
    return pd.DataFrame(rows, columns=COLUMNS).sort_values(["kind", "k"], kind="stable")


def wide(summary: dict, stat: str = "p50_ms") -> pd.DataFrame | None:
    """``stat`` of each call kind (columns) at each K (rows): the table the report prints."""
    t = table(summary)
    if t is None:
        return None
    out = t.pivot_table(index="k", columns="kind", values=stat, aggfunc="first")
    out.columns.name = None
    return out


def figures(summary: dict) -> list:
    """The chart (a ``plots.Figure``), if the summary has a fill with more than one step;
    matplotlib is imported only then, so that the tables need none."""
    t = table(summary)
    if t is None or t["k"].nunique() < 2:
        return []
    import matplotlib.pyplot as plt
    import seaborn as sns

    from kfp_bench.report.plots import RC

    with plt.rc_context(RC), sns.axes_style("whitegrid"):
        return [_latency_by_k(t, summary["fill"], sns)]


def _latency_by_k(t: pd.DataFrame, fill: dict, sns):
    from kfp_bench.report.plots import Figure, new_figure, to_png

    fig, ax = new_figure(5.6)
    kinds = sorted(t["kind"].unique())
    palette = "tab10" if len(kinds) <= 10 else "tab20"  # one colour a kind
    colors = dict(zip(kinds, sns.color_palette(palette, len(kinds)), strict=True))
    for kind in kinds:
        rows = t[t["kind"] == kind]
        ax.plot(rows["k"], rows["p50_ms"], marker="o", color=colors[kind], label=f"{kind} p50")
        ax.plot(rows["k"], rows["p95_ms"], linestyle="--", color=colors[kind], linewidth=1)
    server = [r for r in fill.get("server") or () if r.get("p50_ms") is not None]
    for op, marker in zip(sorted({r["operation"] for r in server}), "xP^v<>*", strict=False):
        mine = sorted((r["k"], r["p50_ms"]) for r in server if r["operation"] == op)
        ax.plot(*zip(*mine, strict=True), marker=marker, linestyle=":", color="#37474f",
                label=f"server {op} p50")  # fmt: skip
    ax.set_yscale("log")
    ax.set(
        title=f"KFP UI calls as the database fills ({fill.get('mode')}, "
        f"{fill.get('repeats')} repeats a step)",
        xlabel="runs the server holds (K)",
        ylabel="latency, client side (ms, log)",
    )
    # below the axes: eleven kinds would hide the lines they name
    ax.legend(fontsize=7, ncols=3, loc="upper center", bbox_to_anchor=(0.5, -0.14))
    return Figure(
        "fill_latency",
        "KFP UI calls against K",
        "Latency of the calls the KFP UI's Runs page makes (list runs by page size, in an "
        "experiment, by name; list experiments; the per-run getPipelineVersion; the whole "
        "page) at each step of the fill: p50 solid, p95 dashed; dotted: the server's own p50 "
        "from /metrics where it has a histogram.",
        to_png(fig),
    )
