"""The server's series of one load, as stored beside the client's results (``*.server.json``).

Every sample is keyed by its source (the Prometheus URL or the scraped endpoint), its name and
labels, and its timestamp (epoch seconds, the client series' clock), so the files of several
worker pods merge by union (``merge``) without counting a sample twice. Histograms read once
over the window (``compare`` entries, or the buckets a direct scrape saw grow) keep their
cumulative bucket counts, from which ``percentiles`` interpolates as Prometheus's
``histogram_quantile`` does.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from kfp_bench import atomic
from kfp_bench.errors import ResultsError

VERSION = 1
#: A flag of a load whose server metrics were asked for but (some) could not be read.
METRICS_MISSING = "server-metrics-missing"
#: vLLM's prefix-cache counters (hits, queries), in tokens, as a scrape reads them:
#: prometheus_client adds ``_total`` (vllm/v1/metrics/loggers.py, ``PrometheusStatLogger
#: .__init__``); before vLLM 0.9 they were named ``vllm:gpu_prefix_cache_*``, read when the
#: new names are not there.
PREFIX_COUNTERS = (
    ("vllm:prefix_cache_hits_total", "vllm:prefix_cache_queries_total"),
    ("vllm:gpu_prefix_cache_hits_total", "vllm:gpu_prefix_cache_queries_total"),
)


def _key(source: str, metric: str, labels: dict) -> str:
    return json.dumps([source, metric, sorted(labels.items())], separators=(",", ":"))


@dataclass
class ServerSeries:
    """The server's side of one load (or of several pods' loads, merged)."""

    window: tuple[float, float] = (0.0, 0.0)
    step_s: float = 1.0
    #: key -> {"source", "metric", "labels", "panel", "points": {t: value}}
    series: dict[str, dict] = field(default_factory=dict)
    #: key -> {"source", "metric", "labels", "t", "value"[, "figure"]}: instant queries
    instant: dict[str, dict] = field(default_factory=dict)
    #: key -> {"source", "metric", "compare", "window", "buckets": [[le, cumulative], ...]}
    histograms: dict[str, dict] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    def add_points(self, source: str, metric: str, labels: dict, points, panel: str = "") -> None:
        k = _key(source, metric, labels)
        s = self.series.setdefault(
            k, {"source": source, "metric": metric, "labels": dict(labels), "points": {}}
        )
        if panel:
            s["panel"] = panel
        for t, v in points:
            s["points"][round(float(t), 3)] = float(v)

    def add_instant(
        self, source: str, metric: str, labels: dict, t: float, value: float, figure: str = ""
    ) -> None:
        k = _key(source, metric, labels)
        self.instant[k] = {"source": source, "metric": metric, "labels": dict(labels)}
        self.instant[k].update(t=float(t), value=float(value))
        if figure:
            self.instant[k]["figure"] = figure

    def add_histogram(self, source: str, metric: str, compare: str, buckets) -> None:
        k = _key(source, metric, {"compare": compare, "window": list(self.window)})
        self.histograms[k] = {
            "source": source,
            "metric": metric,
            "compare": compare,
            "window": list(self.window),
            "buckets": sorted([float(le), float(c)] for le, c in buckets),
        }

    def note(self, text: str, failed: bool = True) -> None:
        """A note for the reader; ``failed``: a source could not be read (flagged), not just a
        query that matched no series."""
        if text not in self.notes:
            self.notes.append(text)
        if failed and METRICS_MISSING not in self.flags:
            self.flags.append(METRICS_MISSING)

    def merge(self, other: ServerSeries) -> None:
        """Add ``other``'s samples: a sample of the same key and time is kept once."""
        if other.window != (0.0, 0.0):
            lo = min(self.window[0] or other.window[0], other.window[0])
            self.window = (lo, max(self.window[1], other.window[1]))
        for s in other.series.values():
            pts = s["points"].items()
            self.add_points(s["source"], s["metric"], s["labels"], pts, s.get("panel", ""))
        self.instant.update(other.instant)
        self.histograms.update(other.histograms)
        self.notes += [n for n in other.notes if n not in self.notes]
        self.flags = sorted(set(self.flags) | set(other.flags))

    def to_dict(self) -> dict:
        series = []
        for s in self.series.values():
            points = [[t, _finite(v)] for t, v in sorted(s["points"].items())]
            series.append({**{k: v for k, v in s.items() if k != "points"}, "points": points})
        return {
            "version": VERSION,
            "window": list(self.window),
            "step_s": self.step_s,
            "series": series,
            "instant": [{**i, "value": _finite(i["value"])} for i in self.instant.values()],
            "histograms": [
                {**h, "buckets": [[_finite(le), c] for le, c in h["buckets"]]}
                for h in self.histograms.values()
            ],
            "notes": self.notes,
            "flags": self.flags,
        }

    @classmethod
    def from_dict(cls, doc: dict, source: str = "server metrics") -> ServerSeries:
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            raise ResultsError(f"{source}: not a server metrics file of version {VERSION}")
        out = cls(tuple(doc["window"]), float(doc["step_s"]))
        for s in doc["series"]:
            pts = [(t, float(v)) for t, v in s["points"]]
            out.add_points(s["source"], s["metric"], s["labels"], pts, s.get("panel", ""))
        for i in doc["instant"]:
            value = float(i["value"])  # "nan", "inf": as ``_finite`` stored them
            out.add_instant(
                i["source"], i["metric"], i["labels"], i["t"], value, i.get("figure", "")
            )
        for h in doc["histograms"]:
            labels = {"compare": h["compare"], "window": h["window"]}
            buckets = [[float(le), float(c)] for le, c in h["buckets"]]
            out.histograms[_key(h["source"], h["metric"], labels)] = {**h, "buckets": buckets}
        out.notes, out.flags = list(doc["notes"]), list(doc["flags"])
        return out


def prefix_hit_rates(server: ServerSeries) -> list[dict]:
    """The prefix cache's hit rate over the load's window, one dict per source that has it:
    ``{"source", "rate", "hits", "queries"}``, hits and queries in prompt tokens. A scraped
    page's counters give their growth from the first scrape (before the load) to the last
    (after it): exact. A profile's ``figure: prefix_hit_rate`` query gives Prometheus's value
    alone (hits and queries None). ``rate`` is None when no token was queried."""
    names = {n for pair in PREFIX_COUNTERS for n in pair}
    grown: dict[str, dict[str, float]] = {}
    for s in server.series.values():
        if s["metric"] in names and s["points"]:
            pts = sorted(s["points"].items())
            by = grown.setdefault(s["source"], {})
            by[s["metric"]] = by.get(s["metric"], 0.0) + pts[-1][1] - pts[0][1]
    out = []
    for source, by in sorted(grown.items()):
        pair = next((p for p in PREFIX_COUNTERS if p[0] in by and p[1] in by), None)
        if pair is not None:
            hits, queries = by[pair[0]], by[pair[1]]
            rate = hits / queries if queries > 0 else None
            out.append({"source": source, "rate": rate, "hits": hits, "queries": queries})
    for i in sorted(server.instant.values(), key=lambda i: (i["source"], i["metric"])):
        if i.get("figure") == "prefix_hit_rate":
            rate = i["value"] if math.isfinite(i["value"]) else None
            where = f"{i['metric']} from {i['source']}"
            out.append({"source": where, "rate": rate, "hits": None, "queries": None})
    return out


def _finite(v: float):
    """JSON has no NaN: Prometheus's NaN and infinities are stored as strings."""
    return v if math.isfinite(v) else str(v)


def path_beside(results: str | os.PathLike) -> Path:
    """Where a results file's server series go: ``run.json`` -> ``run.server.json``."""
    p = Path(results)
    return p.with_name(f"{p.stem}.server.json")


def save(series: ServerSeries, path: str | os.PathLike) -> None:
    atomic.write_json(series.to_dict(), path)


def load(path: str | os.PathLike) -> ServerSeries:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: cannot read server metrics ({exc})") from None
    return ServerSeries.from_dict(doc, str(path))


def load_beside(results: str | os.PathLike) -> ServerSeries | None:
    """The server series saved beside ``results``, or None when there are none."""
    p = path_beside(results)
    return load(p) if p.is_file() else None


def merge_beside(results: list, out: str | os.PathLike) -> Path | None:
    """``kfp-bench merge``'s companion: the server series beside each of ``results`` merged,
    saved beside ``out``; None when none of them has any."""
    parts = [p for p in (load_beside(r) for r in results) if p is not None]
    if not parts:
        return None
    merged, *rest = parts
    for part in rest:
        merged.merge(part)
    save(merged, path_beside(out))
    return path_beside(out)


def percentiles(buckets: list[list[float]], qs=(0.5, 0.9, 0.99)) -> dict:
    """Quantiles of cumulative ``[[le, count], ...]`` buckets, interpolated linearly inside the
    bucket as Prometheus's ``histogram_quantile`` does (promql/quantile.go ``BucketQuantile``:
    the lowest bucket from 0, a quantile in the +Inf bucket is the highest finite bound).
    ``{"count", q: {"value", "lower", "upper"}}``: the bucket's bounds are the resolution."""
    b = sorted((le, c) for le, c in buckets)
    if not b or b[-1][1] <= 0:
        return {"count": 0}
    total = b[-1][1]
    out: dict = {"count": total}
    for q in qs:
        rank = q * total
        prev_le, prev_c = 0.0, 0.0
        for le, c in b:
            if c >= rank:
                if math.isinf(le):
                    out[q] = {"value": prev_le, "lower": prev_le, "upper": le}
                elif c == prev_c:
                    out[q] = {"value": le, "lower": prev_le, "upper": le}
                else:
                    v = prev_le + (le - prev_le) * (rank - prev_c) / (c - prev_c)
                    out[q] = {"value": v, "lower": prev_le, "upper": le}
                break
            prev_le, prev_c = le, c
    return out
