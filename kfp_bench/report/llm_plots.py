"""The LLM report's charts: pure functions of finished ``LlmStats`` and of a sweep's rows, drawn
as ``plots`` draws them, so that the same results give the same bytes. A chart whose data was
not measured is None."""

from __future__ import annotations

import numpy as np
from matplotlib.ticker import MaxNLocator

from kfp_bench.figures import count
from kfp_bench.report.plots import Figure, drawn, mark_percentiles, new_figure, to_png
from kfp_bench.stats.llm import TOKENS_UNKNOWN, LlmStats
from kfp_bench.stats.pareto import PER_USER, SHORT, UNSCALED, fronts

#: Histogram name -> (chart name, title, what a sample is).
DISTRIBUTIONS = {
    "ttft": ("llm_ttft", "Time to first token", "from the send to the first content chunk"),
    "itl": ("llm_itl", "Inter-token latency", "one sample per gap between content chunks"),
}
BINS = 40


#: The x axis of goodput against load, by what the sweep stepped (``LlmSweep.by``).
LEVEL_AXIS = {
    "rate": "offered rate (requests/s)",
    "concurrency": "concurrent streams",
    None: "the sweep's level (requests/s or streams)",
}


def render(
    stats: LlmStats, sweep: list[dict] | None = None, by: str | None = None, scale=UNSCALED
) -> list[Figure]:
    """Every chart the data allows, in report order (``sweep``: an LLM sweep's rows, ``by``:
    what it stepped, "rate" or "concurrency", ``scale``: its replicas, GPUs and price)."""
    return drawn(
        lambda: distribution(stats, "ttft"),
        lambda: distribution(stats, "itl"),
        lambda: timeline(stats),
        lambda: against_load(sweep or [], by),
        lambda: pareto(*fronts({"": (sweep or [], scale)})) if len(sweep or []) > 1 else None,
        lambda: by_turn(stats.summary().turns if stats.turns is not None else []),
    )


def distribution(stats: LlmStats, key: str) -> Figure | None:
    """The histogram ``key`` (``DISTRIBUTIONS``) as bars from its minimum to its p99.9 (the
    samples above it in the last bar: ``Histogram.buckets`` clips them there), p50 and p99
    marked."""
    h = stats.hists[key]
    if not h.count:
        return None
    name, title, what = DISTRIBUTIONS[key]
    pct = h.percentiles_us((50.0, 99.0, 99.9))
    lo, hi = h.min_us, max(pct[99.9], h.min_us + BINS)
    marks = h.buckets(lo, hi, BINS)
    edges = np.array([m for m, _ in marks]) / 1000
    counts = np.array([c for _, c in marks])
    fig, ax = new_figure(3.0)
    width = (edges[1] - edges[0]) if len(edges) > 1 else 1.0
    # A mark's count is of the samples up to it (above the previous mark): the bar ends there.
    ax.bar(edges, counts, width=-width * 0.9, align="edge", color="#6a1b9a")
    mark_percentiles(ax, pct[50.0] / 1000, pct[99.0] / 1000)
    ax.set(
        title=f"{title} ({count(h.count)} samples)", xlabel=f"{key.upper()} (ms)", ylabel="samples"
    )
    return Figure(
        name,
        f"{title} distribution",
        f"{title}, {what}, from the HDR histogram (µs resolution); the last bar holds every "
        "sample above p99.9.",
        to_png(fig),
    )


def timeline(stats: LlmStats) -> Figure | None:
    """Output tokens/s and requests/s per second, failures, and streams in flight."""
    rows = stats.series.rows()
    if len(rows) < 2:
        return None
    t0 = rows[0]["t"]
    t = np.array([r["t"] - t0 for r in rows])

    def col(k):
        return np.array([r[k] for r in rows])

    fig, axes = new_figure(5.0, 2, 1, sharex=True)
    ax = axes[0]
    tokens = col("output_tokens")
    # tokens unknown (no usage, no tokenizer): the series counted those requests' chunks
    what = "chunks (tokens unknown)" if TOKENS_UNKNOWN in stats.flags else "tokens"
    ax.fill_between(t, tokens, color="#1565c0", alpha=0.5, linewidth=0)
    ax.plot(t, tokens, color="#1565c0", label=f"output {what}/s (requests ended)")
    ax.plot(t, col("chunks"), color="#64b5f6", linestyle="--", label="content chunks/s")
    ax.set(title="Output tokens per second", ylabel="tokens per second")
    ax.legend(loc="lower right")
    ax = axes[1]
    requests = col("requests")
    ax.fill_between(t, requests, color="#2e7d32", alpha=0.5, linewidth=0)
    ax.plot(t, requests, color="#2e7d32", label="requests/s (ended)")
    ax.bar(t, col("failures"), width=0.8, color="#c62828", label="failed/s")
    ax.plot(t, col("inflight"), color="#9e9e9e", linestyle=":", label="streams in flight")
    ax.set(title="Requests per second", ylabel="requests per second")
    ax.legend(loc="lower right")
    axes[-1].set_xlabel("time since the first second of the load (s)")
    fig.suptitle("LLM load over time")
    return Figure(
        "llm_timeline",
        "LLM load over time",
        "Per wall-clock second (merged over every pod): output tokens of the requests that "
        "ended, content chunks as they streamed, requests ended and failed, and the mean "
        "number of streams open.",
        to_png(fig),
    )


def against_load(rows: list[dict], by: str | None = None) -> Figure | None:
    """An LLM sweep (``stats.rate_sweep.LlmSweep.rows``, stepping ``by`` "rate" or
    "concurrency"): goodput and requests/s per step, the TTFT p99 on a second axis, the knee's
    step marked."""
    if len(rows) < 2:
        return None
    level = np.array([r["level"] for r in rows], dtype=float)
    fig, ax = new_figure(3.2)
    ax.plot(level, [r["rps"] for r in rows], "o-", color="#2e7d32", label="requests/s")
    ax.plot(level, [r["goodput_rps"] for r in rows], "s-", color="#1565c0", label="goodput/s")
    axis = LEVEL_AXIS.get(by, LEVEL_AXIS[None])
    ax.set(xlabel=axis, ylabel="per second",
           title="Goodput against load")  # fmt: skip
    ttft = ax.twinx()
    ttft.plot(level, [r["ttft_p99_ms"] for r in rows], "^:", color="#c62828", label="TTFT p99")
    ttft.set_ylabel("TTFT p99 (ms)")
    ttft.grid(False)
    for r in rows:
        if r.get("knee"):
            ax.axvline(r["level"], color="#37474f", linestyle="--", linewidth=1, label="knee")
    lines = ax.get_legend_handles_labels()
    more = ttft.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], loc="upper left", frameon=True)
    return Figure(
        "llm_sweep",
        "Goodput against load",
        f"One point per step of the sweep, at its {axis}: requests and good requests (within "
        "the SLO) per second, and the TTFT p99 (right axis); the first step past the knee is "
        "marked.",
        to_png(fig),
    )


def render_pareto(sweeps: dict) -> list[Figure]:
    """The Pareto chart of ``sweeps`` (name -> (rows, ``stats.pareto.Scale``)), as ``render``
    draws charts; none when fewer than two levels are known."""
    return drawn(lambda: pareto(*fronts(sweeps)))


#: The front's colour, used by no other chart (the screenshot test looks for it).
FRONT = "#e65100"
#: Each sweep's colour, in order.
SWEEP_COLOURS = ("#1565c0", "#6a1b9a", "#2e7d32", "#37474f")


def pareto(y: str, label: str, pts: list[dict]) -> Figure | None:
    """Levels as output tokens/s per user against ``y`` (``stats.pareto.fronts``): each sweep's
    levels in its colour, its own front dashed when there are several, the front over all of
    them drawn and ringed."""
    known = [p for p in pts if p["per_user"] is not None and p[y] is not None]
    if len(known) < 2:
        return None
    fig, ax = new_figure(3.6)
    names = list(dict.fromkeys(p["sweep"] for p in known))
    for name, colour in zip(names, SWEEP_COLOURS, strict=False):
        mine = [p for p in known if p["sweep"] == name]
        ax.plot([p["per_user"] for p in mine], [p[y] for p in mine], "o", color=colour,
                label=name or "a level of the sweep")  # fmt: skip
        for p in mine:
            ax.annotate(f"{p['level']:g}", (p["per_user"], p[y]), textcoords="offset points",
                        xytext=(4, 4), fontsize=8, color=colour)  # fmt: skip
        own = sorted((p for p in mine if p["own"]), key=lambda p: p["per_user"])
        if len(names) > 1 and own:
            ax.plot([p["per_user"] for p in own], [p[y] for p in own], "--", color=colour,
                    linewidth=1, label=f"{name}'s front")  # fmt: skip
    best = sorted((p for p in known if p["front"]), key=lambda p: p["per_user"])
    ax.plot([p["per_user"] for p in best], [p[y] for p in best], "-", color=FRONT, linewidth=2.5,
            zorder=1, label="Pareto front")  # fmt: skip
    ax.plot([p["per_user"] for p in best], [p[y] for p in best], "o", markersize=12,
            markerfacecolor="none", markeredgecolor=FRONT, markeredgewidth=2)  # fmt: skip
    ax.set(xlabel=PER_USER, ylabel=label, title=f"Per user against {SHORT[y]}")
    ax.legend(loc="best", frameon=True)
    return Figure(
        "llm_pareto",
        "Pareto front",
        f"One point per level (its label), {PER_USER} against {label}; the thick line joins "
        "the levels no other beats on both (the Pareto front): up and to the right is better.",
        to_png(fig),
    )


def by_turn(turns: list[dict]) -> Figure | None:
    """A multi-turn load (``stats.turns.TurnStats.summary``): TTFT p50 and p99 per turn, and on
    a second axis the mean input tokens, which grow with the history each turn carries."""
    rows = [r for r in turns if r["ttft"]["count"]]
    if len(rows) < 2:
        return None
    turn = [r["turn"] for r in rows]
    fig, ax = new_figure(3.2)
    ax.plot(turn, [r["ttft"]["p50"] for r in rows], "o-", color="#6a1b9a", label="TTFT p50")
    ax.plot(turn, [r["ttft"]["p99"] for r in rows], "^:", color="#c62828", label="TTFT p99")
    ax.set(xlabel="turn of the session", ylabel="TTFT (ms)", title="TTFT against turn")
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    known = [(r["turn"], r["input_tokens_mean"]) for r in rows if r["input_tokens_mean"]]
    lines = ax.get_legend_handles_labels()
    if known:
        inp = ax.twinx()
        inp.plot(*zip(*known, strict=True), "s--", color="#9e9e9e", label="input tokens (mean)")
        inp.set_ylabel("input tokens (mean)")
        inp.set_ylim(bottom=0)
        inp.grid(False)
        more = inp.get_legend_handles_labels()
        lines = (lines[0] + more[0], lines[1] + more[1])
    ax.legend(*lines, loc="lower right", frameon=True)
    return Figure(
        "llm_turns",
        "TTFT against turn",
        "A multi-turn load: the TTFT p50 and p99 of each turn of the sessions (from the send), "
        "and the mean input tokens the server counted (right axis), which carry the history.",
        to_png(fig),
    )
