"""The full-database probe's server side in the report, as data: the table of the server's own
figures at each K (``kfp_bench.metrics.windows`` read them from the metrics profile at each
probe), its intro and notes, and the panels ``report.fill`` draws; "not exposed" for an entry
that gave no series. No plotting here, so that the text report (``report.runs``) uses it.
"""

from __future__ import annotations

from kfp_bench.figures import DASH, num
from kfp_bench.report.fmt import Section

NOT_EXPOSED = "not exposed"
#: The server's percentiles shown per K (``kfp_bench.metrics.windows.QS``).
SERVER_PCTS = ("p50", "p95", "p99")
#: At most this many panels in the server's chart: a page, not a dashboard.
MAX_PANELS = 8
SERVER_INTRO = (
    "The server's own figures at each probe, from the metrics profile {source} against "
    "{prometheus} at each probe's frame (the probe, and a scrape interval without calls "
    "on each side): each instant entry asked at the frame's end over the frame "
    "({{{{.elapsed}}}}), each range series averaged over the frame's samples (its rate window "
    "reaches back before the frame). A percentile is read from the histogram's buckets as "
    "Prometheus's histogram_quantile does: the bucket in brackets is its resolution. The "
    "client's p50 of the same call at the same K is in the table above; the difference is the "
    "time outside the server's handler (network, ingress, the gateway). An entry that gave no "
    "series over the whole fill is 'not exposed' (e.g. MySQL without mysqld-exporter)."
)


def server_table(summary: dict) -> tuple[list[str], list[list[str]]] | None:
    """The server's own figures at each K (a column each): a row per histogram percentile
    ("value (its bucket)"), per value series, and per entry not exposed; None without a
    profile read over the fill."""
    fill = summary.get("fill") or {}
    prof = fill.get("server_profile")
    if not prof:
        return None
    ks = sorted({w["k"] for w in fill.get("probe_windows") or ()})
    body = []
    for metric, rows in _by(prof.get("histograms") or (), lambda r: r["metric"]):
        at = {r["k"]: r for r in rows}
        for p in SERVER_PCTS:
            cells = [_pct_cell(at.get(k), p) for k in ks]
            body.append([f"{metric} {p} (ms)", *cells])
        body.append([f"{metric} count", *(num((at.get(k) or {}).get("count")) for k in ks)])
    for name, rows in _by(prof.get("values") or (), _series_name):
        at = {r["k"]: r["value"] for r in rows}
        body.append([name, *(num(at.get(k)) for k in ks)])
    body += [[m, *([NOT_EXPOSED] * len(ks))] for m in prof.get("not_exposed") or ()]
    return ["K", *map(str, ks)], body


def server_notes(summary: dict) -> list[str]:
    prof = (summary.get("fill") or {}).get("server_profile") or {}
    return [f"Not read: {n}" for n in prof.get("notes") or ()]


def server_section(summary: dict) -> Section | None:
    """The section of the server's figures at each K; None without a profile read over the
    fill."""
    t = server_table(summary)
    if t is None:
        return None
    title = "Full database: the server's own figures at each K"
    names = ("fill_server",) if server_panels(summary) else ()
    prof = summary["fill"]["server_profile"]
    intro = SERVER_INTRO.format(source=prof.get("source"), prometheus=prof.get("prometheus"))
    return Section(title, intro, names, [t], server_notes(summary))


def _by(rows, key):
    out: dict = {}
    for r in rows:
        out.setdefault(key(r), []).append(r)
    return sorted(out.items())


def _series_name(r: dict) -> str:
    labels = ",".join(f"{a}={b}" for a, b in sorted(r["labels"].items()))
    return r["metric"] + (f"{{{labels}}}" if labels else "")


def _pct_cell(row: dict | None, p: str) -> str:
    if row is None or f"{p}_ms" not in row:
        return DASH
    lo, hi = row[f"{p}_bucket_ms"]
    return f"{num(row[f'{p}_ms'])} ({num(lo)}–{num(hi) if hi != '+Inf' else hi})"


def server_panels(summary: dict) -> list[tuple[str, list]]:
    """(title, [(label, [(k, value, lower, upper)])]) per panel: a histogram's percentiles with
    their buckets, or a value series; at most ``MAX_PANELS``; none for a single probe."""
    prof = (summary.get("fill") or {}).get("server_profile") or {}
    if len({w["k"] for w in (summary.get("fill") or {}).get("probe_windows") or ()}) < 2:
        return []
    panels = []
    for metric, rows in _by(prof.get("histograms") or (), lambda r: r["metric"]):
        lines = []
        for p in ("p50", "p95"):
            pts = [(r["k"], r[f"{p}_ms"], *r[f"{p}_bucket_ms"]) for r in rows if f"{p}_ms" in r]
            lines.append((p, sorted(pts)))
        panels.append((f"{metric} (ms)", lines))
    for name, rows in _by(prof.get("values") or (), _series_name):
        panels.append((name, [("", sorted((r["k"], r["value"], None, None) for r in rows))]))
    return panels[:MAX_PANELS]
