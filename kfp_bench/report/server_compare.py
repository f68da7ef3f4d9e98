"""The server's latency percentiles beside the client's, as table rows: pure functions without
matplotlib, so that the text reports (``report.runs``, ``report.server_text``) use them as
``report.server_plots`` does."""

from __future__ import annotations

from kfp_bench.figures import DASH, count, num
from kfp_bench.metrics.series import ServerSeries, percentiles

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
