"""The staged load's chart: throughput, latency and the InferenceService's replicas on the load's
time axis, the stages marked on every row (a line at each boundary, idle stages shaded grey,
ramps light blue), so that a reader sees the replicas follow a ramp and scale down in an idle
stage. Drawn only for a load run in stages (``stats.stages.StageStats`` bounds)."""

from __future__ import annotations

import pandas as pd

from kfp_bench.report.plots import Figure, draw_replicas, drawn, new_figure, to_png
from kfp_bench.report.tables import Tables

SHADE = {"idle": "#9e9e9e", "ramp": "#90caf9"}


def stage_bounds(results) -> list[dict]:
    """The stages of ``results``' load (``load.stages.bounds`` dicts) on the series' time axis:
    ``start_s``/``end_s`` moved from the schedule's start to the load's first whole second (the
    per-second series counts from ``int(started_at)``); empty when it ran without stages."""
    load = results.load
    if load is None or getattr(load, "stages", None) is None:
        return []
    shift = load.started_at - int(load.started_at)
    rows = load.stages.summary()
    return [{**r, "start_s": r["start_s"] + shift, "end_s": r["end_s"] + shift} for r in rows]


def mark_stages(ax, stages: list[dict], *, label: bool = False) -> None:
    """Each stage's boundary as a dotted line, idle and ramp stages shaded; with ``label``, each
    stage's text above the axes."""
    for s in stages:
        if s["kind"] in SHADE:
            ax.axvspan(s["start_s"], s["end_s"], color=SHADE[s["kind"]], alpha=0.25, lw=0)
        ax.axvline(s["start_s"], color="#424242", ls=":", lw=0.8)
        if label:
            mid = (s["start_s"] + s["end_s"]) / 2
            ax.text(mid, 1.01, s["stage"][:18], transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=7)  # fmt: skip
    if stages:
        ax.axvline(stages[-1]["end_s"], color="#424242", ls=":", lw=0.8)


def _scheduled(stages: list[dict]) -> pd.DataFrame:
    """Each stage's scheduled rate (its requests over its length: a ramp's mean) as a step."""
    rows = []
    for s in stages:
        length = s["end_s"] - s["start_s"]
        rate = s["scheduled"] / length if length > 0 else 0.0
        rows += [(s["start_s"], rate), (s["end_s"], rate)]
    return pd.DataFrame(rows, columns=["t_s", "rate"])


def load_stages(t: Tables, stages: list[dict]) -> Figure | None:
    """Throughput (scheduled and answered), latency p50/p99 and the replicas, one time axis."""
    s = t.series
    if not stages or s is None or len(s) < 2:
        return None
    replicas = t.replicas
    rows = 3 if replicas is not None else 2
    fig, axes = new_figure(2.2 * rows + 0.6, rows, 1, sharex=True)
    ax = axes[0]
    sched = _scheduled(stages)
    ax.plot(sched["t_s"], sched["rate"], color="#616161", ls="--", label="scheduled (stage mean)")
    ax.plot(s["t_s"], s["requests"], color="#1565c0", label="responses/s")
    ax.bar(s["t_s"], s["errors"], width=0.8, color="#c62828", label="errors/s")
    ax.set(ylabel="requests per second")
    ax.legend(loc="upper left", fontsize=8)
    mark_stages(ax, stages, label=True)
    ax = axes[1]
    for col, color in (("p50_ms", "#2e7d32"), ("p99_ms", "#6a1b9a")):
        ax.plot(s["t_s"], s[col], color=color, label=col.replace("_ms", ""))
    ax.set(title="Latency per second", ylabel="latency (ms)")
    ax.legend(loc="upper left", fontsize=8)
    mark_stages(ax, stages)
    if replicas is not None:
        draw_replicas(axes[2], replicas)
        mark_stages(axes[2], stages)
    axes[-1].set_xlabel("time since the load started (s)")
    fig.suptitle("Load in stages" + (" and replicas" if replicas is not None else ""))
    kinds = ", ".join(f"{r['stage']} ({r['kind']})" for r in stages)
    return Figure(
        "load_stages",
        "Load in stages",
        f"Per second of the staged load ({kinds}): the scheduled rate, responses and errors, "
        "latency p50/p99"
        + (", and the InferenceService's replicas" if replicas is not None else "")
        + "; dotted lines: stage boundaries (from the first load worker's start), grey: idle, "
        "blue: ramp.",
        to_png(fig),
    )


def render(t: Tables, results) -> list[Figure]:
    """The bundle's hook: the staged load's chart, or none."""
    return drawn(lambda: load_stages(t, stage_bounds(results)))
