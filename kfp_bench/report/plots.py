"""The report's charts: seaborn figures rendered to PNG bytes, deterministically.

Each chart is a function of finished tables returning a ``Figure`` (PNG and caption), or None
when its data was not measured; titled, units on the axes, 800 px wide (the KFP UI's viewer).
The same results give the same bytes: Agg, fixed sizes and rc settings, no PNG metadata."""

from __future__ import annotations

import io
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from kfp_bench.figures import count, sig  # noqa: E402
from kfp_bench.report.tables import Tables  # noqa: E402
from kfp_bench.stats.runs import quantised  # noqa: E402

WIDTH_IN, DPI = 8.0, 100
#: KDE is drawn over at least this many distinct samples.
KDE_MIN = 10
OUTCOME_COLORS = {"succeeded": "#2e7d32", "failed": "#c62828", "other": "#9e9e9e"}
#: The notebook's three API charts: operation and its title.
NOTEBOOK_OPS = (("create_run", "CREATE run"), ("get_run", "GET run"), ("delete_run", "DELETE run"))
TREND_METRICS = (
    ("run_duration_p50_s", "run duration p50 (s)"),
    ("api_create_run_p99_ms", "create_run p99 (ms)"),
    ("load_p99_ms", "load p99 (ms)"),
    ("load_rps", "load throughput (req/s)"),
    ("runs_success_ratio", "runs succeeded (ratio)"),
    ("load_success_ratio", "load success (ratio)"),
)
#: The rc settings every chart is drawn with (the LLM charts too): fixed, for fixed bytes.
RC = {
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "svg.hashsalt": "kfp-bench",
}


@dataclass(frozen=True, slots=True)
class Figure:
    """One rendered chart: a stable ``name`` ("run_durations"), its ``title`` (the image's alt
    text too), a ``caption`` (what it shows and how it was measured) and the ``png`` bytes."""

    name: str
    title: str
    caption: str
    png: bytes


def render(tables: Tables, *, history=None, metrics: dict | None = None, kde: bool = True):
    """Every chart the data allows, in report order."""
    return drawn(
        lambda: run_states(tables),
        lambda: run_durations(tables, kde),
        *[
            lambda op=op, label=label: api_latency(tables, op, label, kde)
            for op, label in NOTEBOOK_OPS
        ],
        lambda: api_ecdf(tables),
        lambda: task_breakdown(tables),
        lambda: load_latency(tables),
        lambda: load_timeline(tables),
        lambda: sweep_curve(tables),
        lambda: trend(history, metrics or {}),
    )


def drawn(*charts) -> list[Figure]:
    """Each of ``charts`` (functions of no argument) drawn in the report's style: the figures
    of those whose data was measured. Every chart of every report is drawn through here."""
    with plt.rc_context(RC), sns.axes_style("whitegrid"):
        return [fig for fig in (chart() for chart in charts) if fig is not None]


def to_png(fig) -> bytes:
    """``fig`` as PNG bytes without the date and "Software" metadata (same data, same bytes);
    closes it. The LLM charts render through it too."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return buf.getvalue()


def new_figure(height: float, nrows: int = 1, ncols: int = 1, **kw):
    """A figure of the report's width and ``height`` inches, and its axes (``plt.subplots``)."""
    return plt.subplots(nrows, ncols, figsize=(WIDTH_IN, height), layout="constrained", **kw)


def _kde_ok(values: pd.Series, kde: bool) -> bool:
    return kde and values.nunique() >= KDE_MIN


def mark_percentiles(ax, p50: float, p99: float, unit: str = "ms") -> None:
    """The p50 (dashed) and p99 (dotted) as vertical lines, named in the legend."""
    for q, v, style in ((50, p50, "--"), (99, p99, ":")):
        ax.axvline(
            v, color="#37474f", linestyle=style, linewidth=1, label=f"p{q} {sig(v, 3)} {unit}"
        )
    ax.legend(loc="upper right", frameon=True)


# -- the runs benchmark ------------------------------------------------------------------------
def run_states(t: Tables) -> Figure | None:
    """Runs by final state, coloured by outcome."""
    if not len(t.states):
        return None
    fig, ax = new_figure(2.8)
    order = list(t.states["state"])
    palette = {
        s: OUTCOME_COLORS[o] for s, o in zip(t.states["state"], t.states["outcome"], strict=True)
    }
    if len(t.runs):
        sns.countplot(
            data=t.runs, x="state", hue="state", order=order, palette=palette, ax=ax, legend=False
        )
    else:
        sns.barplot(
            data=t.states, x="state", y="count", hue="state", palette=palette, ax=ax, legend=False
        )
    for c in ax.containers:
        ax.bar_label(c, padding=2)
    total = int(t.states["count"].sum())
    ax.set(title=f"Runs by final state ({total} runs)", xlabel="final state", ylabel="runs")
    ax.margins(y=0.15)
    return Figure(
        "run_states",
        "Runs by final state",
        "Count of runs in each final state: "
        "green succeeded, red failed or canceled, grey anything else.",
        to_png(fig),
    )


def whole_counts(ax) -> None:
    """Ticks at whole numbers only on ``ax``'s y axis, whose figures are counts."""
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def run_durations(t: Tables, kde: bool) -> Figure | None:
    """Run duration (created to finished, server timestamps), by outcome, with a rug."""
    runs = t.runs.dropna(subset=["duration_s"])
    if len(runs) < 2:
        return None
    fig, ax = new_figure(3.2)
    hue_order = [o for o in OUTCOME_COLORS if o in set(runs["outcome"])]
    by = {"data": runs, "x": "duration_s", "hue": "outcome", "hue_order": hue_order}
    kde = _kde_ok(runs["duration_s"], kde)
    # whole seconds from the server (its timestamps' resolution): a bar per second, on the second
    res = t.resolution if quantised(t.resolution) else None
    bins = {"discrete": True} if res == 1 else {"binwidth": res} if res else {}
    sns.histplot(**by, palette=OUTCOME_COLORS, multiple="stack", kde=kde, ax=ax, **bins)
    if res == 1:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    sns.rugplot(**by, palette=OUTCOME_COLORS, ax=ax, legend=False, height=0.05)
    ax.set(
        title=f"Run duration ({len(runs)} runs)",
        xlabel="run duration, created to finished (s)",
        ylabel="runs",
    )
    whole_counts(ax)
    return Figure(
        "run_durations",
        "Run duration",
        "Seconds from a run's creation to its end, "
        "from the KFP server's timestamps; each tick of the rug is one run.",
        to_png(fig),
    )


def api_latency(t: Tables, op: str, label: str, kde: bool) -> Figure | None:
    """One API operation's client-side latency: histogram, rug, p50 and p99 marks."""
    calls = t.api[t.api["operation"] == op]
    if len(calls) < 2:
        return None
    fig, ax = new_figure(2.8)
    x = calls["duration_ms"]
    sns.histplot(x=x, kde=_kde_ok(x, kde), color="#1565c0", ax=ax)
    sns.rugplot(x=x, color="#0d47a1", ax=ax, height=0.05)
    mark_percentiles(ax, *(float(v) for v in np.percentile(x, (50, 99))))
    errors = int((calls["outcome"] != "ok").sum())
    ax.set(
        title=f"{label} latency ({len(calls)} calls, {errors} failed)",
        xlabel=f"{op} latency, client side (ms)",
        ylabel="calls",
    )
    whole_counts(ax)
    return Figure(
        f"api_{op}",
        f"{label} latency",
        f"Client-side latency of each {op} call, failed calls included; dashed p50, dotted p99.",
        to_png(fig),
    )


def api_ecdf(t: Tables) -> Figure | None:
    """Every operation's latency as an ECDF, on a log axis (they span three decades)."""
    counts = t.api["operation"].value_counts()
    ops = sorted(counts[counts >= 2].index)
    if not ops:
        return None
    data = t.api[t.api["operation"].isin(ops)]
    fig, ax = new_figure(3.4)
    sns.ecdfplot(data=data, x="duration_ms", hue="operation", hue_order=ops, log_scale=True, ax=ax)
    ax.set(
        title="API latency by operation (ECDF)",
        xlabel="latency, client side (ms, log scale)",
        ylabel="share of calls",
    )
    sns.move_legend(ax, "center left", bbox_to_anchor=(1.01, 0.5), title="operation")
    return Figure(
        "api_ecdf",
        "API latency by operation",
        "Share of calls answered within a latency, per operation with at least two calls.",
        to_png(fig),
    )


def task_breakdown(t: Tables) -> Figure | None:
    """Per-task duration, slowest median first (at most 15 tasks)."""
    tasks = t.tasks.dropna(subset=["duration_s"])
    if not len(tasks):
        return None
    order = list(t.task_times.index[:15])
    tasks = tasks[tasks["task"].isin(order)]
    fig, ax = new_figure(1.4 + 0.4 * len(order))
    # Dots for each task run, and the median with its 5-95 % interval (seaborn's boxplot warns
    # on matplotlib 3.11, and a box of three samples says less than the dots).
    by = {"data": tasks, "x": "duration_s", "y": "task", "order": order, "ax": ax}
    sns.stripplot(
        **by, hue="task", hue_order=order, size=4, alpha=0.5, palette="crest", legend=False
    )
    sns.pointplot(
        **by,
        estimator="median",
        errorbar=("pi", 90),
        linestyle="none",
        marker="D",
        color="#263238",
        markersize=6,
        capsize=0.3,
    )
    ax.set(
        title=f"Per-task duration ({len(tasks)} task runs)",
        xlabel="task duration (s)",
        ylabel="task",
    )
    return Figure(
        "task_breakdown",
        "Per-task duration",
        "Duration of each task of each run "
        "(dots: task runs; diamond and bar: median and 5-95 % range), slowest median first.",
        to_png(fig),
    )


# -- the load ----------------------------------------------------------------------------------
def load_latency(t: Tables) -> Figure | None:
    """The load's latency histogram and ECDF, every request, from the HDR histograms."""
    h = t.histogram
    if h is None or not len(h):
        return None
    fig, (left, right) = new_figure(3.2, 1, 2)
    corrected = h[h["measure"] == "corrected"]
    sns.histplot(data=corrected, x="latency_ms", weights="count", bins=40, color="#6a1b9a", ax=left)
    left.set(title="Latency histogram", xlabel="latency (ms)", ylabel="requests")
    whole_counts(left)
    sns.ecdfplot(data=h, x="latency_ms", weights="count", hue="measure", ax=right)
    right.set(title="Latency ECDF", xlabel="latency (ms)", ylabel="share of requests")
    fig.suptitle(f"Load latency ({count(t.load['requests'])} requests)")
    return Figure(
        "load_latency",
        "Load latency distribution",
        "Latency of every request of the "
        "load. Corrected: from the intended send time (no coordinated omission); "
        "uncorrected: from the actual send time.",
        to_png(fig),
    )


def load_timeline(t: Tables) -> Figure | None:
    """Latency percentiles, throughput and errors (and replicas) per second, on one time axis."""
    s = t.series
    if s is None or len(s) < 2:
        return None
    replicas = t.replicas
    rows = 3 if replicas is not None else 2
    fig, axes = new_figure(2.2 * rows + 0.4, rows, 1, sharex=True)
    lat = s.melt(
        id_vars="t_s",
        value_vars=["p50_ms", "p90_ms", "p99_ms"],
        var_name="percentile",
        value_name="latency_ms",
    )
    lat["percentile"] = lat["percentile"].str.replace("_ms", "")
    sns.lineplot(data=lat, x="t_s", y="latency_ms", hue="percentile", ax=axes[0])
    axes[0].set(title="Latency per second", ylabel="latency (ms)")
    ax = axes[1]
    sns.lineplot(data=s, x="t_s", y="requests", color="#1565c0", label="responses/s", ax=ax)
    ax.bar(s["t_s"], s["errors"], width=0.8, color="#c62828", label="errors/s")
    ax.set(title="Throughput and errors per second", ylabel="requests per second")
    ax.legend(loc="lower right")
    if replicas is not None:
        draw_replicas(axes[2], replicas)
    axes[-1].set_xlabel("time since the load started (s)")
    fig.suptitle("Load over time")
    return Figure(
        "load_timeline",
        "Load over time",
        "Per second of the load: latency "
        "percentiles, responses and errors"
        + (", and ready replicas" if replicas is not None else "")
        + ".",
        to_png(fig),
    )


def draw_replicas(ax, r: pd.DataFrame) -> None:
    """Replicas by kind; where the observed part from the expected count, a shaded span; a panic
    (the desired scale jumping), a dashed red line."""
    cols = [c for c in ("ready", "total", "desired", "actual", "expected") if c in r]
    long = r.melt(id_vars="t_s", value_vars=cols, var_name="replicas", value_name="count")
    sns.lineplot(
        data=long.dropna(), x="t_s", y="count", hue="replicas", drawstyle="steps-post", ax=ax
    )
    if "apart" in r:
        for t in r.loc[r["apart"].fillna(False).astype(bool), "t_s"]:
            ax.axvspan(t, t + 1, color="#ffb300", alpha=0.2, lw=0)
    if "panic" in r:
        for t in r.loc[r["panic"].fillna(False).astype(bool), "t_s"]:
            ax.axvline(t, color="#c62828", ls="--", lw=1)
    ax.set(title="Replicas (dashed: panic; shaded: observed apart from expected)", ylabel="pods")
    whole_counts(ax)
    ax.yaxis.get_major_locator().set_params(integer=True)


def sweep_curve(t: Tables) -> Figure | None:
    """Throughput against latency over the rate sweep, each point labelled with its rate."""
    sw = t.sweep
    if sw is None:
        return None
    fig, ax = new_figure(3.6)
    cols = [c for c in ("p50_ms", "p95_ms", "p99_ms") if c in sw]
    long = sw.melt(id_vars="rps", value_vars=cols, var_name="percentile", value_name="latency_ms")
    long["percentile"] = long["percentile"].str.replace("_ms", "")
    sns.lineplot(
        data=long, x="rps", y="latency_ms", hue="percentile", marker="o", ax=ax, sort=False
    )
    if "rate" in sw:
        for _, row in sw[sw["p99_ms"].notna()].iterrows():  # (no response: no point)
            ax.annotate(
                f"{row['rate']:g}/s",
                (row["rps"], row["p99_ms"]),
                xytext=(3, 5),
                textcoords="offset points",
                fontsize=8,
            )
    ax.set(
        title="Rate sweep: throughput against latency",
        xlabel="throughput (req/s)",
        ylabel="latency (ms)",
    )
    if "max_replicas" in sw and sw["max_replicas"].notna().any():
        ax2 = ax.twinx()
        ax2.step(
            sw["rps"],
            sw["max_replicas"],
            where="mid",
            color="#9e9e9e",
            linestyle="--",
            label="max replicas",
        )
        ax2.set_ylabel("max replicas (pods)")
        ax2.grid(False)
        ax2.legend(loc="center right")
    return Figure(
        "sweep",
        "Rate sweep",
        "Each point is one step of the sweep at its target "
        "rate (label): achieved throughput against latency percentiles.",
        to_png(fig),
    )


# -- the history -------------------------------------------------------------------------------
def trend(history, current: dict) -> Figure | None:
    """Key metrics over the earlier results and this one (the last point, ringed)."""
    if history is None or not history.entries:
        return None
    rows = [{"key": e.key, **e.metrics} for e in history.entries]
    rows.append({"key": history.key or "this", **current})
    df = pd.DataFrame(rows)
    df["n"] = range(len(df))
    present = [(m, lab) for m, lab in TREND_METRICS if m in df and df[m].notna().sum() >= 1]
    if not present:
        return None
    ncols = 2
    nrows = (len(present) + 1) // 2
    fig, axes = new_figure(2.3 * nrows + 0.5, nrows, ncols, sharex=True, squeeze=False)
    flagged = df["regression"].fillna(0) > 0 if "regression" in df else pd.Series(False, df.index)
    for ax, (metric, label) in zip(axes.flat, present, strict=False):
        sns.lineplot(data=df, x="n", y=metric, marker="o", color="#1565c0", ax=ax)
        bad = df[flagged & df[metric].notna()]
        ax.scatter(bad["n"], bad[metric], color="#c62828", zorder=3, label="regression")
        ax.scatter(
            df["n"].iloc[-1:],
            df[metric].iloc[-1:],
            s=120,
            facecolors="none",
            edgecolors="#263238",
            zorder=4,
        )
        ax.set(title=label, ylabel=label.rsplit("(", 1)[-1].rstrip(")"), xlabel="result")
    for ax in list(axes.flat)[len(present) :]:
        ax.set_visible(False)
    ticks = list(range(len(df)))
    labels = [k[4:8] + "-" + k[9:13] if len(k) > 13 else k for k in df["key"]]
    step = max(1, len(ticks) // 8)
    for ax in axes[-1]:
        ax.set_xticks(ticks[::step], labels[::step], rotation=30, ha="right")
        ax.set_xlabel("result (MMDD-HHMM, UTC)")
    fig.suptitle(f"Trend over the last {len(df)} results (ringed: this one; red: regression)")
    return Figure(
        "trend",
        "Trend",
        "Key metrics of the earlier results in the history and of this one.",
        to_png(fig),
    )
