"""The server's series in the reports: drawn under the client's on one time axis, and its own
latency percentiles set beside the client's (``report.server_text``), the difference being
the time spent outside the server (network, ingress, queue-proxy, the client's own queueing)."""

from __future__ import annotations

import numpy as np

from kfp_bench.figures import HDR_MS, num, when
from kfp_bench.metrics.series import ServerSeries
from kfp_bench.report.fmt import Section
from kfp_bench.report.plots import Figure, drawn, new_figure, to_png
from kfp_bench.report.server_text import (
    COMPARE_HEAD,
    client_of_load,
    compare_rows,
    notes,
    prefix_lines,
)

#: At most this many server panels under the client's chart: a page, not a dashboard.
MAX_PANELS = 6
#: Gauges of the scraped pages worth a panel when no profile names one (vLLM's queue).
SCRAPED_PANELS = ("vllm:num_requests_running", "vllm:num_requests_waiting")
INTRO = (
    "The server's own figures over the load's window (docs/metrics-profiles.md). A server "
    "percentile is read from its histogram's buckets, interpolated inside the bucket as "
    "Prometheus's histogram_quantile does: its bucket's bounds are its resolution. The "
    "difference (client minus server) is the time spent outside the server: the network, the "
    "ingress and queue-proxy, and the client's own queueing; when the client's value falls "
    "inside the server's bucket the difference is below the histogram's resolution. Counts "
    "from Prometheus come from increase(), which extrapolates to the window's edges: they "
    "may exceed the requests sent; a direct scrape's counts are exact."
)


def panels(server: ServerSeries, panel: str) -> list[dict]:
    """The range series drawn under the client chart ``panel`` ("ttft" or "latency")."""
    out = [s for s in server.series.values() if s.get("panel") == panel and s["points"]]
    if not out:
        out = [s for s in server.series.values() if s["metric"] in SCRAPED_PANELS]
    return sorted(out, key=lambda s: (s["metric"], s["source"], sorted(s["labels"].items())))[
        :MAX_PANELS
    ]


def _label(s: dict) -> str:
    extra = ",".join(f"{k}={v}" for k, v in sorted(s["labels"].items()) if k != "__name__")
    return s["metric"] + (f"{{{extra}}}" if extra and len(extra) < 60 else "")


def timeline(client_rows: list[dict], client: dict, server: ServerSeries, panel: str):
    """The client's per-second ``client_rows`` on top (``client``: {"key", "label", "lines":
    {label: value}}), each of ``panels(server, panel)`` under it; None without a server series
    to draw."""
    shown = panels(server, panel)
    if not shown or not client_rows:
        return None
    t0 = min(r["t"] for r in client_rows)
    fig, axes = new_figure(2.0 + 1.3 * len(shown), len(shown) + 1, 1, sharex=True)
    ax = axes[0]
    t = np.array([r["t"] - t0 for r in client_rows], dtype=float)
    y = [np.nan if r.get(client["key"]) is None else r[client["key"]] for r in client_rows]
    ax.plot(t, y, color="#1565c0", marker=".", label=client["label"])  # a gap: none that second
    ax.set(title="Client", ylabel=client["unit"])
    if client.get("lines"):
        right = ax.twinx()
        for (name, v), style in zip(client["lines"].items(), ("--", ":", "-."), strict=False):
            right.axhline(v, color="#6a1b9a", linestyle=style, linewidth=1, label=name)
        right.set_ylabel(client["lines_unit"])
        right.grid(False)
        right.legend(loc="upper right", fontsize=8)
    ax.legend(loc="upper left", fontsize=8)
    for ax, s in zip(axes[1:], shown, strict=True):
        pts = sorted(s["points"].items())
        ax.step([p[0] - t0 for p in pts], [p[1] for p in pts], where="post", color="#c62828")
        ax.set_title(_label(s), fontsize=9, loc="left")
    axes[-1].set_xlabel(f"seconds since {when(t0)} (the client's first second)")
    fig.suptitle("The server under the client, one time axis")
    where = ", ".join(sorted({s["source"] for s in shown}))
    return Figure(
        f"server_{panel}",
        "The server under the client",
        f"Top: {client['label']} per wall-clock second. Under it, on the same axis: the "
        f"server's series from {where}, every {server.step_s:g} s.",
        to_png(fig),
    )


def llm_section(stats, summary, server: ServerSeries) -> tuple[Section, list[Figure]]:
    """The LLM report's section, and its figures: the TTFT per second on top, the profile's
    ``panel: ttft`` series under it."""
    ttft = summary.latency_ms["ttft"]
    lines = {f"TTFT {p} {num(ttft[p], HDR_MS)} ms (whole load)": ttft[p] for p in ("p50", "p99")}
    client = {
        "key": "ttft_mean_ms",
        "label": "TTFT, mean of the first tokens that came in each second",
        "unit": "TTFT (ms)",
        "lines": lines if ttft["count"] else {},
        "lines_unit": "TTFT (ms)",
    }
    items = prefix_lines(server, summary.cached) + notes(server)
    return _section(stats, server, "ttft", client, summary.latency_ms, items)


def load_section(stats, server: ServerSeries) -> tuple[Section, list[Figure]]:
    """The predict report's section, and its figures: the latency p99 per second on top, the
    profile's ``panel: latency`` series (the replicas) under it, and the server's histograms
    beside the client's latency measured from the actual send (not the intended one: an open
    loop's wait for its slot is the client's own)."""
    client = {"key": "p99_ms", "label": "latency p99 (per second)", "unit": "ms"}
    return _section(stats, server, "latency", client, client_of_load(stats), notes(server))


def _section(stats, server, panel: str, client: dict, client_ms: dict, items: list[str]):
    figs = drawn(lambda: timeline(stats.series.rows(), client, server, panel))
    body = compare_rows(server, client_ms)
    tables = [(COMPARE_HEAD, body)] if body else []
    return Section("Server metrics", INTRO, tuple(f.name for f in figs), tables, items), figs
