"""The full-database probe in the report (``kfp_bench.kfp.fill`` measures it): latency against
the runs the server holds, a line per call kind, and with a metrics profile the server's own
figures against K (``report.fill_server`` makes their table). Functions of the saved summary
alone, so ``kfp-bench report`` redraws them."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from kfp_bench.report.fill_server import server_panels
from kfp_bench.report.plots import Figure, drawn, new_figure, to_png

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


def figures(summary: dict) -> list[Figure]:
    """The charts, if the summary has a fill with more than one step: the latency against K,
    and the server's own figures against K when a profile was read."""
    t = table(summary)
    if t is None or t["k"].nunique() < 2:
        return []
    panels = server_panels(summary)
    return drawn(
        lambda: _latency_by_k(t, summary["fill"]),
        lambda: _server_by_k(panels, summary) if panels else None,
    )


def _latency_by_k(t: pd.DataFrame, fill: dict) -> Figure:
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


def _server_by_k(panels: list, summary: dict) -> Figure:
    cols = 2 if len(panels) > 1 else 1
    rows = (len(panels) + cols - 1) // cols
    fig, axes = new_figure(1.0 + 2.0 * rows, rows, cols, sharex=True, squeeze=False)
    for ax, (title, lines) in zip(axes.flat, panels, strict=False):
        for (label, pts), color in zip(lines, ("#c62828", "#6a1b9a"), strict=False):
            ks, vs = [p[0] for p in pts], [p[1] for p in pts]
            ax.plot(ks, vs, marker="o", color=color, label=label or None)
            bands = [(p[0], p[2], p[3]) for p in pts if isinstance(p[3], float | int)]
            if bands:  # the bucket that holds each percentile: the server's resolution
                ax.fill_between([b[0] for b in bands], [b[1] for b in bands],
                                [b[2] for b in bands], color=color, alpha=0.12)  # fmt: skip
        ax.set_title(title, fontsize=8, loc="left")
        if any(label for label, _ in lines):
            ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("runs the server holds (K)")
    prof = summary["fill"]["server_profile"]
    missing = prof.get("not_exposed") or []
    return Figure(
        "fill_server",
        "The server's own figures against K",
        f"From the metrics profile {prof.get('source')} at each probe: a histogram's p50 and "
        "p95 with the bucket that holds each shaded (the server's resolution), each value "
        "series' mean over the probe."
        + (f" Not exposed: {', '.join(missing)}." if missing else ""),
        to_png(fig),
    )
