"""The server metrics' section in the text reports: the table of ``report.server_plots``
(the server's percentiles beside the client's, each with the bucket that holds it, and the
difference named), then the notes; printed under hey's layout or the LLM summary by
``kfp-bench report`` when a ``*.server.json`` lies beside the result file.
"""

from __future__ import annotations

from typing import TextIO

from kfp_bench.metrics.series import ServerSeries
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
    from kfp_bench.report.server_plots import notes

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
