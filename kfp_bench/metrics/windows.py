"""A metrics profile read over several short windows inside one collector's window: the probes of
the full-database mode (``kfp_bench.kfp.fill``), one per K.

A window is framed by ``quiet`` seconds without calls on each side (a scrape interval: the
server is scraped once before and once after what it did). Each ``instant`` entry is asked
again at the frame's end with ``{{.elapsed}}`` the frame's length (so ``increase(...
[{{.elapsed}}])`` counts what the probe did, and nothing of the fill); a ``compare`` entry's
buckets give the server's percentiles with the bucket that holds each; each range series the
collector kept is averaged over the frame's samples. An entry that gave no series at all is
named in ``not_exposed``: the report says so instead of drawing nothing.
"""

from __future__ import annotations

import math

from kfp_bench.metrics import prometheus as prom
from kfp_bench.metrics.profile import Profile
from kfp_bench.metrics.series import ServerSeries, percentiles
from kfp_bench.redact import public_url

QS = (0.5, 0.95, 0.99)


def by_window(
    profile: Profile, url: str, variables: dict, series: ServerSeries, windows: list[dict]
) -> dict:
    """``{"source", "prometheus", "values": [...], "histograms": [...], "not_exposed",
    "notes"}`` for ``windows`` (``[{"k", "start", "end", "quiet"}, ...]``, epoch seconds)."""
    out: dict = {"source": profile.source, "prometheus": public_url(url), "values": [],
                 "histograms": [], "not_exposed": [], "notes": []}  # fmt: skip
    seen: set[str] = set()
    mine = [s for s in series.series.values() if s["source"] == out["prometheus"]]
    for w in windows:
        quiet = w.get("quiet", 0.0)
        frame = {"k": w["k"], "start": w["start"] - quiet, "end": w["end"] + quiet}
        _instants(profile, url, variables, frame, out, seen)
        _ranges(mine, frame, out, seen)
    for q in profile.queries:
        if q.metric_name not in seen and q.instant and _over_all(q, url, variables, series):
            seen.add(q.metric_name)
            out["notes"].append(
                f"{q.metric_name}: no figure at any probe, though Prometheus has its series "
                "over the fill: a probe's frame must span two scrapes (give the scrape "
                "interval as the metrics step)"
            )
    out["not_exposed"] = [q.metric_name for q in profile.queries if q.metric_name not in seen]
    return out


def _over_all(q, url: str, variables: dict, series: ServerSeries) -> bool:
    """Whether an instant entry gives a series over the collector's whole window: exposed,
    though not seen at the probes."""
    start, end = series.window
    values = {**variables, "elapsed": f"{max(1, math.ceil(end - start))}s"}
    try:
        return bool(prom.query(url, q.render(values), end))
    except prom.PromError:
        return False


def _instants(profile: Profile, url: str, variables: dict, w: dict, out: dict, seen: set) -> None:
    # to the millisecond (PromQL takes "12345ms"): a whole second more would reach into the fill
    values = {**variables, "elapsed": f"{max(1, math.floor((w['end'] - w['start']) * 1e3))}ms"}
    for q in profile.queries:
        if not q.instant:
            continue
        try:
            rows = prom.query(url, q.render(values), w["end"])
        except prom.PromError as exc:
            note = f"{q.metric_name}: {exc}"
            if note not in out["notes"]:
                out["notes"].append(note)
            continue
        if q.compare:
            buckets = [(float(r["labels"]["le"]), r["value"]) for r in rows if "le" in r["labels"]]
            p = percentiles(buckets, QS) if buckets else {"count": 0}
            if p["count"]:
                seen.add(q.metric_name)
                out["histograms"].append(_histogram(w["k"], q.metric_name, p))
            continue
        for r in rows:
            if math.isfinite(r["value"]):
                seen.add(q.metric_name)
                out["values"].append(_value(w["k"], q.metric_name, r["labels"], r["value"]))


def _ranges(series: list[dict], w: dict, out: dict, seen: set) -> None:
    """The mean of each range series' samples inside the window (its own rate window, e.g.
    ``[1m]``, reaches back before it)."""
    for s in series:
        pts = [v for t, v in s["points"].items() if w["start"] <= t <= w["end"]]
        pts = [v for v in pts if math.isfinite(v)]
        if s["points"]:
            seen.add(s["metric"])
        if pts:
            value = sum(pts) / len(pts)
            out["values"].append(_value(w["k"], s["metric"], s["labels"], value, len(pts)))


def _value(k: int, metric: str, labels: dict, value: float, samples: int = 0) -> dict:
    labels = {a: b for a, b in labels.items() if a != "__name__"}
    row = {"k": k, "metric": metric, "labels": labels, "value": round(value, 6)}
    if samples:
        row["samples"] = samples  # a range series' mean; an instant query has none
    return row


def _histogram(k: int, metric: str, p: dict) -> dict:
    row: dict = {"k": k, "metric": metric, "count": round(p["count"], 3)}
    for q in QS:
        if q in p:
            name = f"p{q * 100:g}"
            row[f"{name}_ms"] = round(p[q]["value"] * 1e3, 3)
            row[f"{name}_bucket_ms"] = [round(p[q]["lower"] * 1e3, 3), _ms(p[q]["upper"])]
    return row


def _ms(upper: float):
    return round(upper * 1e3, 3) if math.isfinite(upper) else "+Inf"
