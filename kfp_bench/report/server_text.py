"""The server's figures beside the client's, as text: the rows of the table (``compare_rows``,
per server histogram and percentile: the server's value and the bucket that holds it, its
resolution, the client's, and the difference, the time spent outside the server), the notes,
and the section printed under hey's layout or the LLM summary when a ``*.server.json`` lies
beside the result file. No matplotlib here: ``report.runs`` and ``report.server_plots`` use it
too."""

from __future__ import annotations

from typing import TextIO

from kfp_bench.figures import DASH, clock, count, fixed, num, pct
from kfp_bench.metrics.series import ServerSeries, percentiles, prefix_hit_rates

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
    """The section: a fixed-width table (``COMPARE_HEAD``), then the notes."""
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


QS = (0.5, 0.9, 0.99)


def compare_rows(server: ServerSeries, client_ms: dict[str, dict]) -> list[list[str]]:
    """One row per server histogram and percentile: the server's value and bucket, the
    client's, their difference (ms). ``client_ms``: figure -> {"count", "p50", "p90", "p99"}."""
    rows = []
    for h in sorted(server.histograms.values(), key=lambda h: (h["compare"], h["metric"])):
        p = percentiles(h["buckets"], QS)
        c = client_ms.get(h["compare"]) or {}
        for q in QS:
            if q not in p:
                continue
            sv, lo, hi = p[q]["value"] * 1e3, p[q]["lower"] * 1e3, p[q]["upper"] * 1e3
            cv = c.get(f"p{q * 100:g}") if c.get("count") else None
            rows.append(
                [
                    f"{h['compare']} p{q * 100:g}",
                    h["metric"],
                    count(int(p["count"])),
                    num(sv),
                    f"{num(lo)}–{num(hi)}",
                    num(cv),
                    count(c.get("count", 0)) if c else DASH,
                    _difference(cv, sv, lo, hi),
                ]
            )
    return rows


def _difference(client: float | None, server: float, lo: float, hi: float) -> str:
    """Client minus server, unless the client's value falls inside the server's bucket: the
    difference is then below what the server's histogram can tell."""
    if client is None:
        return DASH
    if lo <= client <= hi:
        return "within its bucket"
    return num(client - server)


COMPARE_HEAD = [
    "figure", "server histogram", "server count", "server (ms)", "its bucket (ms)",
    "client (ms)", "client count", "client − server (ms)",
]  # fmt: skip


def write_table(w, head: list[str], rows: list[list[str]]) -> None:
    """``head`` and ``rows`` as fixed-width text through ``w``, two spaces in, the first
    column to the left and the figures to the right."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    for r in [head, *rows]:
        cells = [c.ljust(widths[0]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r)]
        w("  " + "  ".join(cells).rstrip() + "\n")
