"""The server metrics' section in the text reports: the table of ``report.server_plots``
(the server's percentiles beside the client's, each with the bucket that holds it, and the
difference named), then the notes; printed under hey's layout or the LLM summary by
``kfp-bench report`` when a ``*.server.json`` lies beside the result file.
"""

from __future__ import annotations

from typing import TextIO

from kfp_bench.figures import clock, count, fixed, pct
from kfp_bench.metrics.series import ServerSeries, prefix_hit_rates
from kfp_bench.report.server_compare import COMPARE_HEAD, compare_rows, write_table

#: What the reader needs to read the table (the HTML's intro, in short).
LEGEND = (
    "Server's own figures over the load's window, from its histogram's buckets (interpolated "
    "as Prometheus's histogram_quantile does: the bucket is the resolution). client − server "
    "is the time outside the server (network, ingress, the client's queueing); 'within its "
    "bucket': below what the histogram can tell."
)


def client_of_load(stats) -> dict[str, dict]:
    """A predict load's client figures in ``compare_rows``' shape: latency from the actual send
    (the server cannot see an open loop's wait for its slot)."""
    s = stats.summary()
    lat = s.uncorrected_ms or {}
    return {"latency": {"count": s.responses, **lat}} if lat else {}


def write_text(server: ServerSeries, client_ms: dict[str, dict], out: TextIO) -> None:
    """The section: a fixed-width table (``server_compare.COMPARE_HEAD``), then the notes."""
    w = out.write
    w("\nServer metrics:\n")
    rows = compare_rows(server, client_ms)
    if rows:
        w(f"  {LEGEND}\n")
        write_table(w, COMPARE_HEAD, rows)
    else:
        w("  no server histogram to set beside the client's figures\n")
    for n in notes(server):
        w(f"  {n}\n")


def notes(server: ServerSeries) -> list[str]:
    """What the reader must know: the window, what could not be read."""
    a, b = server.window
    out = [f"Window {clock(a)}–{clock(b)} UTC ({fixed(b - a, 0)} s), step {server.step_s:g} s."]
    return out + [f"Not read: {n}" for n in server.notes]


def prefix_lines(server: ServerSeries, cached: dict | None = None) -> list[str]:
    """The prefix cache's hit rate over the load, a line per source, or one saying the server
    does not expose it (vLLM's counters neither scraped nor queried by a ``figure:
    prefix_hit_rate`` entry of the profile); then, given ``cached`` (``LlmSummary.cached``),
    the one the usage's cached tokens gave the client."""
    out = []
    for r in prefix_hit_rates(server):
        rate = "no prompt tokens queried" if r["rate"] is None else pct(r["rate"], 2)
        counts = ""
        if r["hits"] is not None and r["rate"] is not None:
            counts = (
                f", {count(r['hits'])} of {count(r['queries'])} prompt tokens served from cache"
            )
        out.append(f"Prefix-cache hit rate over the load: {rate} ({r['source']}{counts})")
    if not out:
        out.append(
            "Prefix-cache hit rate: not exposed (no vllm:prefix_cache_hits/queries counters "
            "in the scrapes, no profile entry with figure: prefix_hit_rate)"
        )
    if cached is not None:
        out.append(f"Prefix-cache hit rate from the usage: {_usage(cached)}")
    return out


def _usage(c: dict) -> str:
    """The client's prefix-cache hit rate (``LlmSummary.cached``), worded as the server's."""
    if c["cached_tokens"] is None:
        return "unknown (no usage.prompt_tokens_details)"
    if c["hit_rate"] is None:
        return "no prompt tokens counted"
    tokens = f"{count(c['cached_tokens'])} of {count(c['prompt_tokens'])} prompt tokens"
    return f"{pct(c['hit_rate'], 2)} ({tokens} cached, by the usage's cached_tokens)"
